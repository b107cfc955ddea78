"""Every data-loss case from issue 10, reproduced: the old bytes are kept and can be restored."""

from __future__ import annotations

from datetime import date

import pytest

from memdir import history
from memdir.config import Settings
from memdir.entry.demo import SAMPLE
from memdir.stages.extractor.offline import apply
from memdir.stages.extractor.run import extract_transcript
from memdir.store import MemoryStore
from memdir.transcript import Message

HAND_WRITTEN = """---
name: Code quality standards
description: How I want code reviewed and written in this repo
type: feedback
---
Never mind the linter's opinion on line length; I review for clarity first.

- Prefer small functions with names that say what they do.
- Never swallow exceptions.

**Why:** reviews kept missing real bugs.
**How to apply:** check these before asking for review.
"""


def _user(text: str) -> Message:
    return Message(role="user", content=[{"type": "text", "text": text}], uuid="u1", timestamp="2026-03-02T10:00:00Z")


def _kept_bytes(store: MemoryStore, rel: str) -> list[bytes]:
    return [v.read() for v in history.versions(store.state_dir, rel)]


def test_extraction_never_rewrites_a_hand_written_feedback_memory(store):
    path = store.root / "feedback_code_quality.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN)
    before = path.read_bytes()
    said = "Never mind! But never swallow exceptions in the worker code, always log them with the request id."
    outcome = apply(store, [_user(said)], today=date(2026, 3, 2))
    assert path.read_bytes() == before  # the person's file is untouched
    assert "feedback_code_quality.md" not in outcome.updated
    assert all(c["file"] != "feedback_code_quality.md" for c in outcome.changes)


def test_explicit_correction_of_a_hand_written_memory_keeps_the_old_bytes(store):
    path = store.root / "feedback_package_manager.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: Package manager\ndescription: Use npm to install packages\ntype: feedback\n---\n"
                    "Use npm.\n\n**Why:** x\n**How to apply:** y\n")
    before = path.read_bytes()
    outcome = apply(store, [_user("No, don't use npm, use pnpm in this repo.")], today=date(2026, 3, 2))
    assert outcome.changes[0]["action"] == "updated" and outcome.changes[0]["kept"]
    assert (store.root / outcome.changes[0]["kept"]).read_bytes() == before
    store.restore("feedback_package_manager.md")
    assert path.read_bytes() == before


def test_remember_then_extract_the_demo_session_keeps_the_remembered_bytes(cli, memory_dir):
    code, out, _ = cli("--dir", str(memory_dir), "remember", "Don't mock the database in integration tests",
                       "--type", "feedback", "--why", "my own words", "--how", "hit the real test database")
    assert code == 0 and out.startswith("created ")
    rel = out.split()[1]
    before = (memory_dir / rel).read_bytes()
    result = extract_transcript(SAMPLE, memory_dir, settings=Settings(engine="offline"))
    assert (memory_dir / rel).read_bytes() == before, result.report_lines()
    assert rel not in [c["file"] for c in result.changes]


def _version_holding(memory_dir, rel: str, wanted: bytes) -> int:
    """The number `memdir history` gives the newest version holding `wanted` (its numbering differs with
    the git history on: there a version is the bytes after each change, the current one included)."""
    rows = MemoryStore(memory_dir).history_rows(rel)
    return next(row.number for row in rows if not row.deletion and wanted in row.read(memory_dir))


def test_same_name_never_overwrites_another_fact_and_an_update_keeps_the_first(cli, memory_dir):
    cli("--dir", str(memory_dir), "remember", "Staging DB is at db.staging.internal", "--type", "reference",
        "--name", "Staging DB")
    first = (memory_dir / "reference_staging_db.md").read_bytes()
    code, out, _ = cli("--dir", str(memory_dir), "remember", "staging db moved to db2.staging.internal",
                       "--type", "reference", "--name", "staging db")
    assert code == 0 and out.startswith("created reference_staging_db_") and "already named 'staging db'" in out
    assert (memory_dir / "reference_staging_db.md").read_bytes() == first  # another fact: never over this one
    # The same fact under its name (in another case) with a reason added is an update, the old bytes kept.
    code, out, _ = cli("--dir", str(memory_dir), "remember", "Staging DB is at  db.staging.internal", "--type",
                       "reference", "--name", "staging db", "--why", "ops moved it there in March")
    assert code == 0 and out.startswith("updated reference_staging_db.md (previous version kept: .memdir/history/")
    kept = out.split("previous version kept: ")[1].rstrip(")\n")
    assert (memory_dir / kept).read_bytes() == first
    code, out, _ = cli("--dir", str(memory_dir), "history", "Staging DB")
    number = _version_holding(memory_dir, "reference_staging_db.md", first)
    assert code == 0 and f"\n  {number}  " in out  # listed with its number (git's numbering, or the kept files')
    code, out, _ = cli("--dir", str(memory_dir), "restore", "reference_staging_db.md", "--version", str(number))
    assert code == 0 and out.startswith("restored reference_staging_db.md") and "previous version kept" in out
    assert (memory_dir / "reference_staging_db.md").read_bytes() == first


def test_demo_refuses_a_folder_that_holds_memories(cli, memory_dir):
    cli("--dir", str(memory_dir), "remember", "I am a data engineer", "--type", "user")
    before = {p.name: p.read_bytes() for p in memory_dir.iterdir() if p.is_file()}
    code, _, err = cli("demo", "--dir", str(memory_dir))
    assert code == 2 and "already holds" in err
    assert {p.name: p.read_bytes() for p in memory_dir.iterdir() if p.is_file()} == before


def test_demo_without_dir_removes_its_throwaway_folder(cli):
    code, out, _ = cli("demo")
    assert code == 0
    folder = out.split("removed at the end) ")[1].splitlines()[0]
    from pathlib import Path

    assert not Path(folder).exists()


def test_two_forgets_in_the_same_second_keep_two_copies(cli, memory_dir, monkeypatch):
    monkeypatch.setattr(history, "_now_stamp", lambda: "20260302T100000.000000Z")  # the very same instant
    for text in ("first version", "second version"):
        cli("--dir", str(memory_dir), "remember", text, "--type", "user", "--name", "Temp")
        code, out, _ = cli("--dir", str(memory_dir), "forget", "Temp")
        assert code == 0 and out.startswith("deleted user_temp.md (kept: .memdir/history/")
    store = MemoryStore(memory_dir)
    kept = _kept_bytes(store, "user_temp.md")
    assert len(kept) == 2 and any(b"first version" in k for k in kept) and any(b"second version" in k for k in kept)
    number = _version_holding(memory_dir, "user_temp.md", b"first version")
    code, out, _ = cli("--dir", str(memory_dir), "restore", "user_temp.md", "--version", str(number))
    assert code == 0 and b"first version" in (memory_dir / "user_temp.md").read_bytes()
    assert "(user_temp.md)" in store.index()


def test_index_rebuild_merges_and_keeps_the_previous_index(cli, memory_dir):
    cli("--dir", str(memory_dir), "remember", "I am a data engineer", "--type", "user", "--name", "Role")
    cli("--dir", str(memory_dir), "remember", "Deploys are announced in #deploys", "--type", "reference",
        "--name", "Deploys")
    index = memory_dir / "MEMORY.md"
    hand = ("# My memory\n\nRead this first.\n\n## People\n- [Who I am](user_role.md) — my own hook, keep it\n"
            "- [Old](gone.md) — file removed\n\n## Hooks\n<!-- my marker -->\n")
    index.write_text(hand)
    code, _, err = cli("--dir", str(memory_dir), "index", "--rebuild")
    assert code == 0 and "added 1, removed 1" in err
    text = index.read_text()
    assert text.startswith("# My memory\n\nRead this first.\n\n## People\n- [Who I am](user_role.md) — my own hook, keep it\n")
    assert "<!-- my marker -->" in text and "gone.md" not in text and "(reference_deploys.md)" in text
    kept = err.split("previous version kept: ")[1].split(")")[0]
    assert (memory_dir / kept).read_text() == hand
    cli("--dir", str(memory_dir), "restore", "MEMORY.md")
    assert index.read_text() == hand


def test_rename_keeps_the_old_file(store):
    from memdir.model import Memory

    store.save(Memory(name="Old", description="d", type="user", body="b"))
    before = (store.root / "user_old.md").read_bytes()
    result = store.rename("Old", "New")
    assert (store.root / result.kept).read_bytes() == before


def test_dry_run_names_real_files_and_shows_update_diffs(store):
    first = apply(store, [_user("Remember that deploys are announced in the #deploys channel.")], today=date(2026, 3, 2))
    rel = first.changes[0]["file"]
    assert first.changes[0]["action"] == "created" and rel.endswith(".md") and "…" not in rel
    before = (store.root / rel).read_bytes()
    dry = apply(store, [_user("Remember that deploys are announced in the #deploys-prod channel now.")],
                today=date(2026, 3, 2), dry_run=True)
    change = dry.changes[0]
    assert change["action"] == "updated" and change["file"] == rel and "+" in change["diff"]
    from memdir.stages.extractor import report

    assert report.lines(dry.changes, dry_run=True)[0] == f"would update {rel} (the current version would be kept)"
    assert (store.root / rel).read_bytes() == before


def test_list_columns_stay_aligned_on_long_names(cli, memory_dir):
    cli("--dir", str(memory_dir), "remember", "short one", "--type", "user", "--name", "A")
    cli("--dir", str(memory_dir), "remember", "long one", "--type", "reference",
        "--name", "A very long memory name that goes on and on well past forty two characters")
    code, out, _ = cli("--dir", str(memory_dir), "list")
    rows = out.splitlines()
    assert code == 0 and len(rows) == 2
    assert len({row.index(" today") for row in rows}) == 1  # the age column starts at the same place


def test_version_and_the_offline_notice_said_once(cli, capsys):
    from memdir import __version__, config, engines

    with pytest.raises(SystemExit):
        cli("--version")
    assert f"memdir {__version__}" in capsys.readouterr().out
    notices = []
    for _ in range(2):
        engines._notice_shown = False  # a new process each time
        engines._said.clear()
        config.choose_engine("auto")
        notices.append(capsys.readouterr().err)
    assert "offline engines" in notices[0] and notices[1] == ""


def test_hook_log_says_what_changed_in_plain_words(tmp_path, monkeypatch):
    import json

    from memdir.entry import worker

    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(tmp_path),
                                      "message": {"role": "user", "content": "Remember that deploys go out on Tuesdays."}}) + "\n")
    memory = tmp_path / "memory"
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    request = {"session_id": "s", "transcript": str(transcript), "cwd": str(tmp_path)}
    assert worker.main([json.dumps(request)]) == 0
    line = (memory / ".memdir" / "hook.log").read_text().splitlines()[-1]
    assert "stop: offline engine (1 prompt(s) read): created project_deploys_tuesdays.md" in line
    assert "saved saved" not in line


def test_llm_engine_updates_are_reported_with_the_kept_copy_and_dry_run_diffs(api, tmp_path):
    import json

    import httpx

    from memdir.model import Memory
    from tests import api_payloads as P

    store = MemoryStore(tmp_path / "memory")
    store.save(Memory(name="Testing", description="How tests should be written", type="feedback",
                      body="Prefer fast tests\n\n**Why:** speed\n**How to apply:** keep them fast"))
    existing = store.root / "feedback_testing.md"
    original = existing.read_bytes()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-03-02T09:00:00Z",
                                      "message": {"role": "user", "content": "Never mock the database in tests."}}) + "\n")
    updated = existing.read_text().replace("Prefer fast tests", "Prefer fast tests; never mock the database")
    turns = lambda: [  # noqa: E731
        httpx.Response(200, json=P.message([P.tool_use("Read", {"file_path": str(existing)}, "r1")], stop_reason="tool_use")),
        httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": str(existing), "content": updated}, "w1")],
                                           stop_reason="tool_use")),
        httpx.Response(200, json=P.message([P.text("Done.")])),
    ]
    route = api.post("/v1/messages").mock(side_effect=turns())
    settings = Settings(engine="llm", max_attempts=1)
    dry = extract_transcript(transcript, store.root, settings=settings, today=date(2026, 3, 2), dry_run=True)
    assert dry.report_lines()[0] == "would update feedback_testing.md (the current version would be kept)"
    assert any(line.strip() == "+Prefer fast tests; never mock the database" for line in dry.report_lines())
    assert existing.read_bytes() == original
    route.side_effect = turns()
    done = extract_transcript(transcript, store.root, settings=settings, today=date(2026, 3, 2))
    change = next(c for c in done.changes if c["file"] == "feedback_testing.md")
    assert change["action"] == "updated" and (store.root / change["kept"]).read_bytes() == original


def test_bounded_history_never_drops_the_original(store, monkeypatch):
    from memdir import constants as C
    from memdir.model import Memory

    monkeypatch.setattr(C, "HISTORY_KEEP_PER_FILE", 3)
    store.root.mkdir(parents=True)
    (store.root / "MEMORY.md").write_text("# Mine, by hand\n")
    for i in range(6):
        store.save(Memory(name=f"M{i}", description="d", type="user", body="b"))
    kept = history.versions(store.state_dir, "MEMORY.md")
    assert len(kept) == 3 and kept[-1].path.read_text() == "# Mine, by hand\n"
