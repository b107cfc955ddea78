"""Every write ends in a commit of the memory folder's git history; others' writes too (issue 23)."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from memdir import constants as C, gitcommit, githistory, gitrepo
from memdir.entry import worker
from memdir.model import Memory
from memdir.store import MemoryStore

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture(autouse=True)
def git_history_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(githistory.ENV, "1")


def _memory(name: str, text: str, mtype: str = "project") -> Memory:
    return Memory(name=name, description=text, type=mtype, body=text + "\n")


def _subjects(folder: Path) -> list[str]:
    return [change.subject for change in gitrepo.changes(folder)]


def _line(kind: str, uuid: str, parent: str | None, content, cwd: Path) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "cwd": str(cwd),
                       "timestamp": "2026-03-02T09:00:00Z", "message": {"role": kind, "content": content}})


def _transcript(folder: Path, memory: Path, written: list[str]) -> Path:
    """A session whose main agent wrote `written` (memory-relative paths) with the Write tool."""
    lines = [_line("user", "u1", None, "Remember that releases go out on Tuesdays.", folder)]
    for i, rel in enumerate(written):
        call = {"type": "tool_use", "id": f"t{i}", "name": "Write",
                "input": {"file_path": str(memory / rel), "content": "x"}}
        lines.append(_line("assistant", f"a{i}", lines and f"{'a' + str(i - 1) if i else 'u1'}", [call], folder))
    path = folder / "s1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_store_writes_are_commits_that_say_what_happened(store: MemoryStore, memory_dir: Path) -> None:
    saved = store.save(_memory("deploy", "deploys go out on fridays"))
    store.save(_memory("deploy", "deploys go out on mondays"), rel_path=saved.rel_path)
    store.delete(saved.rel_path)
    store.restore(saved.rel_path)
    assert _subjects(memory_dir) == [f"restored {saved.rel_path}", f"deleted {saved.rel_path}",
                                     f"updated {saved.rel_path}", f"created {saved.rel_path}"]
    newest = gitrepo.changes(memory_dir, limit=1)[0]
    assert {f.path for f in newest.files} == {saved.rel_path, "MEMORY.md"}
    assert "mondays" in (memory_dir / saved.rel_path).read_text()


def test_a_run_is_one_commit_naming_the_run_and_the_engine(tmp_path: Path, memory_dir: Path) -> None:
    from memdir.stages.extractor.run import extract_transcript

    memory_dir.mkdir()
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(_line("user", "u1", None, "Please remember that our staging DB is shared with QA.",
                                tmp_path) + "\n")
    result = extract_transcript(transcript, memory_dir, engine="offline", today=date(2026, 3, 2))
    assert result.status == "saved"
    change = gitrepo.changes(memory_dir)[0]
    assert change.subject == "extraction run from transcript session.jsonl"
    assert "engine: offline" in change.message and "\nrun: " in change.message
    assert {f.path for f in change.files} == {*result.saved, "MEMORY.md"}
    run_line = json.loads((memory_dir / ".memdir" / "runs.jsonl").read_text().splitlines()[-1])
    assert f"run: {run_line['run']}" in change.message  # the run log and the commit name the same run


def test_restore_after_another_writer_deletes_and_rewrites_between_hooks(store: MemoryStore, memory_dir: Path,
                                                                         cli) -> None:
    a = store.save(_memory("alpha", "alpha is the first service")).rel_path
    b = store.save(_memory("beta", "beta is the second service")).rel_path
    original_a, original_b = (memory_dir / a).read_bytes(), (memory_dir / b).read_bytes()
    githistory.sweep(memory_dir)  # a Stop worker ran: nothing new
    (memory_dir / a).unlink()  # another writer, between two hooks
    (memory_dir / b).write_text("---\nname: beta\n---\nrewritten by someone else\n")

    code, out, _ = cli("--dir", str(memory_dir), "restore", a)
    assert code == 0 and (memory_dir / a).read_bytes() == original_a
    code, out, _ = cli("--dir", str(memory_dir), "restore", b)
    assert code == 0 and (memory_dir / b).read_bytes() == original_b
    # The other writer's deletion and rewrite are history too, and the rewrite comes back on request.
    code, out, _ = cli("--dir", str(memory_dir), "history", b)
    rows = [line for line in out.splitlines() if "bytes" in line]
    assert "restored" in rows[0] and "another writer" in rows[1]
    code, out, _ = cli("--dir", str(memory_dir), "restore", b, "--version", "2")
    assert code == 0 and "rewritten by someone else" in (memory_dir / b).read_text()
    deleted = [c for c in gitrepo.changes(memory_dir) if c.author == "another writer"][0]
    assert {(f.status, f.path) for f in deleted.files} == {("D", a), ("M", b)}


def test_a_secret_planted_on_disk_never_reaches_a_commit(store: MemoryStore, memory_dir: Path, cli) -> None:
    store.save(_memory("alpha", "alpha is the first service"))
    store.save(_memory("token", f"the CI token is {TOKEN}"), allow_secrets=True)  # personal memory may hold it
    (memory_dir / "planted.md").write_text(f"---\nname: planted\n---\nGITHUB_TOKEN={TOKEN}\n")
    code, out, err = cli("--dir", str(memory_dir), "log", "-n", "5")
    assert code == 0 and "created project_alpha.md" in out
    assert "left out planted.md: holds a secret" in err and TOKEN not in out + err
    every_object = gitrepo.run(memory_dir, "cat-file", "--batch-all-objects", "--batch").stdout
    assert TOKEN.encode() not in every_object
    assert gitrepo.committed_files(memory_dir, gitrepo.head(memory_dir)).keys().isdisjoint({"planted.md"})


def test_main_agent_writes_are_attributed(tmp_path: Path, memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    store.save(_memory("alpha", "alpha is the first service"))
    (memory_dir / "by_agent.md").write_text("---\nname: by agent\n---\nwritten by the main agent\n")
    (memory_dir / "by_hand.md").write_text("---\nname: by hand\n---\nwritten in an editor\n")
    transcript = _transcript(tmp_path, memory_dir, ["by_agent.md"])
    worker._sweep(memory_dir, {"transcript": str(transcript), "session_id": "s1"})
    change = gitrepo.changes(memory_dir)[0]
    assert change.author == "another writer (Claude Code's main agent)"
    assert "created by_agent.md (by Claude Code's main agent)" in change.message
    assert "created by_hand.md\n" in change.message


def test_log_after_a_simulated_auto_dream_deletes_23_files(tmp_path: Path, cli, realdata: Path) -> None:
    real_folder = realdata / "memory-folders" / "application-pipeline"
    memory = tmp_path / "memory"
    shutil.copytree(real_folder, memory, ignore=shutil.ignore_patterns(".memdir"))
    githistory.sweep(memory, why="first look at the folder")
    files = sorted(p.name for p in memory.glob("*.md") if p.name != C.INDEX_NAME)
    gone = files[:23]
    session = tmp_path / "s1.jsonl"
    session.write_text(_line("user", "u1", None, "hello", tmp_path) + "\n")
    agents = tmp_path / "s1" / "subagents"
    agents.mkdir(parents=True)
    dream_lines = [_line("user", "d0", None, "Dream: consolidate the memory files.", tmp_path)]
    dream_lines.append(_line("assistant", "d1", "d0", [{"type": "tool_use", "id": "w", "name": "Write", "input": {
        "file_path": str(memory / C.INDEX_NAME), "content": "x"}}], tmp_path))
    (agents / "agent-dream.jsonl").write_text("\n".join(dream_lines) + "\n")
    for name in gone:  # auto dream deletes 23 memories and rewrites the index
        (memory / name).unlink()
    index = memory / C.INDEX_NAME
    index.write_text("".join(line + "\n" for line in index.read_text().splitlines() if not any(g in line for g in gone)))

    worker._sweep(memory, {"transcript": str(session), "session_id": "s1"})
    code, out, _ = cli("--dir", str(memory), "log", "-n", "1")

    print(out)  # the report quotes it
    assert code == 0
    assert sum(line.strip().startswith("deleted ") for line in out.splitlines()) == 23
    assert "updated MEMORY.md (by Claude Code's auto dream)" in out
    code, _, _ = cli("--dir", str(memory), "restore", gone[0])
    assert code == 0 and (memory / gone[0]).read_bytes() == (real_folder / gone[0]).read_bytes()


def test_the_old_history_is_imported_once_oldest_first(memory_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                       cli) -> None:
    monkeypatch.setenv(githistory.ENV, "0")
    store = MemoryStore(memory_dir)
    rel = store.save(_memory("deploy", "version one")).rel_path
    for text in ("version two", "version three"):
        store.save(_memory("deploy", text), rel_path=rel)
    assert not gitrepo.exists(memory_dir)
    monkeypatch.setenv(githistory.ENV, "1")

    store.save(_memory("deploy", "version four"), rel_path=rel)

    bodies = [gitrepo.read_blob(memory_dir, f.new_blob or "").decode()
              for c in reversed(gitrepo.changes(memory_dir, rel)) for f in c.files if f.path == rel]
    assert [next(v for v in ("one", "two", "three", "four") if f"version {v}" in b) for b in bodies] == [
        "one", "two", "three", "four"]
    code, out, _ = cli("--dir", str(memory_dir), "history", rel)
    assert "kept" not in out.replace("kept versions", "")  # every old version is a commit now, listed once
    imported = [c for c in gitrepo.changes(memory_dir) if c.subject.startswith("imported")]
    store.save(_memory("deploy", "version five"), rel_path=rel)
    assert len([c for c in gitrepo.changes(memory_dir) if c.subject.startswith("imported")]) == len(imported)


def test_the_prompt_hook_never_commits(memory_dir: Path, tmp_path: Path) -> None:
    from tests.conftest import run_memdir

    MemoryStore(memory_dir).save(_memory("deploy", "deploys go out on fridays"))
    head = gitrepo.head(memory_dir)
    (memory_dir / "hand.md").write_text("---\nname: hand\n---\nby hand\n")
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "when do deploys go out?",
                          "session_id": "s1", "cwd": str(tmp_path)})
    done = run_memdir("hook", "prompt", stdin=payload, env={"MEMDIR_PATH": str(memory_dir), githistory.ENV: "1"})
    assert done.returncode == 0
    assert gitrepo.head(memory_dir) == head


def test_git_off_means_no_repository(store: MemoryStore, memory_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv(githistory.ENV, "0")
    store.save(_memory("deploy", "deploys go out on fridays"))
    assert not gitrepo.exists(memory_dir)


def test_consolidate_is_one_commit_saying_which_memory_was_superseded(store: MemoryStore, memory_dir: Path) -> None:
    from memdir.model import compose_body
    from memdir.stages.extractor.consolidate import consolidate

    for name, rule in (("Use pnpm", "Use pnpm, not npm, in this repo."),
                       ("Package manager", "use pnpm not npm in this repo")):
        store.save(Memory(name=name, description=rule, type="feedback", body=compose_body(rule, None, None)))
    commits = len(gitrepo.changes(memory_dir))

    result = consolidate(memory_dir, engine="offline", today=date(2026, 11, 23))

    [merge] = result.plan.merges
    [change] = gitrepo.changes(memory_dir)[: len(gitrepo.changes(memory_dir)) - commits]
    assert change.subject == "consolidate: duplicate memories merged" and "engine: offline" in change.message
    assert f"superseded {merge.drop[0]}" in change.message and f"updated {merge.keep}" in change.message


def test_team_memory_has_its_own_history_in_the_same_repository(memory_dir: Path, cli) -> None:
    team = MemoryStore.team_store(memory_dir)
    rel = team.save(_memory("staging", "staging db is shared with QA")).rel_path
    MemoryStore(memory_dir).save(_memory("staging", "my own staging notes"))
    team.delete(rel)
    code, out, _ = cli("--dir", str(memory_dir), "restore", "--team", rel)
    assert code == 0 and "shared with QA" in (team.root / rel).read_text()
    assert _subjects(memory_dir)[0] == f"restored team/{rel}"
    code, out, _ = cli("--dir", str(memory_dir), "history", "--team", rel)
    assert [line.split()[3] for line in out.splitlines() if "bytes" in line] == ["restored", "deleted", "created"]


def test_another_writers_edit_overwritten_by_memdir_at_once_is_a_commit_and_is_undone(
        store: MemoryStore, memory_dir: Path, cli) -> None:
    """An agent edits a memory, and memdir rewrites it within the same second (no hook ran between):
    the agent's bytes are committed as another writer's before memdir's commit, so `memdir restore`
    brings back exactly them (it used to bring back memdir's older version, listed above them)."""
    store.save(_memory("Deploys", "deploys go out on Tuesdays"), rel_path="project_deploys.md")
    theirs = b"---\nname: Deploys\ndescription: deploys on Fridays\ntype: project\n---\n\nFridays now.\n"
    (memory_dir / "project_deploys.md").write_bytes(theirs)
    store.save(_memory("Deploys", "deploys go out on Wednesdays"), rel_path="project_deploys.md")
    authors = [change.author for change in gitrepo.changes(memory_dir, "project_deploys.md")]
    assert authors == ["memdir", gitcommit.ANOTHER_WRITER.name, "memdir"]
    code, out, _ = cli("--dir", str(memory_dir), "restore", "project_deploys.md")
    assert code == 0 and (memory_dir / "project_deploys.md").read_bytes() == theirs, out
    # memdir's own successive writes add no such commit
    store.save(_memory("Deploys", "deploys go out on Thursdays"), rel_path="project_deploys.md")
    assert [c.author for c in gitrepo.changes(memory_dir, "project_deploys.md")][:2] == ["memdir", "memdir"]


def test_the_history_is_repacked_once_packs_pile_up(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each commit leaves objects of its own; past the limits the Stop worker's tidy packs them, and no version is lost."""
    monkeypatch.setenv(githistory.ENV, "1")
    store = MemoryStore(memory_dir)
    rel = store.save(_memory("deploy", "version 0")).rel_path
    for n in range(1, 6):
        store.save(_memory("deploy", f"version {n}"), rel_path=rel)
    objects = memory_dir / ".memdir" / "git" / "objects"

    def files() -> int:  # loose objects and packs: what git has to open
        return sum(1 for p in objects.rglob("*") if p.is_file() and p.parent.name != "info" and p.suffix != ".idx")

    before = files()
    assert before >= 12  # a blob, a tree and a commit per save, at least
    githistory.tidy(memory_dir, loose_limit=5, pack_limit=3)
    assert files() <= 2
    bodies = [gitrepo.read_blob(memory_dir, f.new_blob or "").decode()
              for c in gitrepo.changes(memory_dir, rel) for f in c.files if f.path == rel]
    assert sorted(n for n in range(6) if any(f"version {n}" in b for b in bodies)) == list(range(6))
