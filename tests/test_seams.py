"""Bugs a review pass found where features built in parallel meet: names that carry secrets,
`doctor --fix` and hand-written index lines, exact paths versus bare file names."""

from __future__ import annotations

import shutil

import pytest

from memdir import history

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_a_secret_in_a_memory_name_is_refused_and_not_repeated(cli, memory_dir):
    code, out, err = cli("--dir", str(memory_dir), "remember", "--type", "user", "--name", f"ci {TOKEN}", "benign")
    assert code != 0 and ("secret" in err.lower() or "token" in err.lower())
    assert TOKEN not in out + err
    assert not list(memory_dir.glob("*.md")) or TOKEN not in (memory_dir / "MEMORY.md").read_text()
    assert not any(TOKEN in p.name for p in memory_dir.rglob("*"))


def test_a_secret_in_the_content_is_not_echoed_through_the_file_name(cli, memory_dir):
    code, out, err = cli("--dir", str(memory_dir), "remember", "--type", "reference", f"{TOKEN} is the deploy token")
    assert code != 0
    assert TOKEN not in out + err


def test_doctor_fix_keeps_the_index_it_rewrites(cli, memory_dir, store):
    from memdir.entry.manual import remember

    remember(store, "Alice leads payments", type_="user", name="Alice")
    index = memory_dir / "MEMORY.md"
    hand = index.read_text() + "- [Gone but my words](user_gone.md) — a line I wrote myself\n"
    index.write_text(hand)
    code, out, _ = cli("--dir", str(memory_dir), "doctor", "--fix")
    assert "user_gone.md" not in index.read_text()
    kept = [v.read() for v in history.versions(memory_dir / ".memdir", "MEMORY.md")]
    assert hand.encode() in kept
    assert "previous MEMORY.md kept" in out


def test_an_exact_path_wins_over_a_newer_file_of_the_same_name_in_a_subfolder(cli, memory_dir):
    memory_dir.mkdir(parents=True)
    note = "---\nname: {n}\ndescription: {n}\ntype: user\n---\n{n}\n"
    (memory_dir / "note.md").write_text(note.format(n="top"))
    (memory_dir / "team2").mkdir()
    (memory_dir / "team2" / "note.md").write_text(note.format(n="nested"))
    code, _, err = cli("--dir", str(memory_dir), "forget", "note.md")
    assert code == 0 and "deleted note.md" in err + _
    assert (memory_dir / "team2" / "note.md").exists() and not (memory_dir / "note.md").exists()


def test_a_body_edit_keeps_the_persons_own_index_line(store, memory_dir, realdata, tmp_path):
    """On the real hand-curated folder: changing a memory's body leaves its hand-written index line."""
    from memdir.frontmatter_io import parse_document
    from memdir.model import memory_from_fields
    from memdir.store import MemoryStore

    folder = tmp_path / "real"
    shutil.copytree(realdata / "memory-folders" / "application-pipeline", folder)
    real = MemoryStore(folder)
    index_before = (folder / "MEMORY.md").read_text()
    header = next(h for h in real.scan().headers if h.rel_path in index_before and h.description)
    line = next(line for line in index_before.splitlines() if f"({header.rel_path})" in line)
    parsed = parse_document((folder / header.rel_path).read_text())
    memory = memory_from_fields(parsed.fields, parsed.body + "\nOne more sentence.\n", header.rel_path)
    result = real.save(memory, rel_path=header.rel_path)
    assert result.kept  # the body change is kept in history
    assert line in (folder / "MEMORY.md").read_text().splitlines()


def test_remember_then_forget_in_one_window_saves_nothing(tmp_path, memory_dir):
    """The user took it back in the same window: what was said last wins."""
    import json

    from memdir.stages.extractor.run import extract_transcript

    lines = []
    for i, text in enumerate(["Remember that the staging database is reset every Monday.",
                              "Actually, forget the staging database reset, that changed."]):
        lines.append(json.dumps({"type": "user", "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                                 "sessionId": "s", "timestamp": f"2026-11-20T10:0{i}:00Z",
                                 "message": {"role": "user", "content": text}}))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    extract_transcript(transcript, memory_dir, engine="offline")
    assert not [p for p in memory_dir.glob("*.md") if p.name != "MEMORY.md"]


def test_a_small_folder_still_recalls_the_memory_that_clearly_helps(store, memory_dir):
    """Issue 13's relevance bar met issue 11's real-client session: in a one-memory folder every word
    the memory has looked common, so "don't use npm" was never recalled for an npm prompt."""
    from memdir.entry.manual import remember
    from memdir.stages.recall.api import recall

    remember(store, "Don't use npm in this repo, use pnpm instead of npm", type_="feedback", name="dont-use-npm",
             why="the lockfile is pnpm's", how="use pnpm for every install")
    hit = recall(memory_dir, "install the dependencies and run the tests with npm please", engine="offline")
    assert [h.rel_path for h in hit.selected] == ["feedback_dont_use_npm.md"]
    miss = recall(memory_dir, "what is the capital of Portugal", engine="offline")
    assert miss.selected == []


@pytest.mark.parametrize("skew", [-3900, 3900, 0])
def test_doctor_fix_ages_temp_files_on_the_file_systems_clock(cli, memory_dir, store, monkeypatch, skew):
    """As the sweeps do since mend16: on a network disk whose server runs an hour behind this machine, a temp file
    another writer had just made looked an hour old, and `doctor --fix` removed it under that writer (`skew`: this
    machine's clock off instead). One left an hour ago on the disk's clock is removed whatever this clock says."""
    import os
    import time

    from memdir import constants as C, doctor

    memory_dir.mkdir(parents=True, exist_ok=True)
    dead, live = memory_dir / f".a.md{C.TEMP_MARKER}12345-0a0b", memory_dir / f".b.md{C.TEMP_MARKER}7-1"
    for temp in (dead, live):
        temp.write_bytes(b"half a memory")  # stamped by the file system's clock: now
    past = os.stat(live).st_mtime - doctor.STALE_TEMP_SECONDS - 100  # on the same clock: left over an hour ago
    os.utime(dead, (past, past))
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    doctor.check(store, fix=True)
    assert (dead.exists(), live.exists()) == (False, True)
