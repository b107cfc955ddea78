"""Write modes (issue 24): auto, confirm (proposals), manual and read-only, for every writer."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from memdir import proposals, write_mode
from memdir.config import Settings
from memdir.errors import MemdirError
from memdir.model import Memory
from memdir.stages.extractor.run import extract_transcript
from memdir.store import MemoryStore
from tests import api_payloads as P

TODAY = date(2026, 3, 2)
WHY = "\n\n**Why:** {why}\n**How to apply:** {how}"
SAID = [
    "Remember that the staging database is called ledger-staging.",
    "I always prefer tabs over spaces in the Go code.",
    "Let's use pnpm instead of npm for this repo.",
]


def _transcript(tmp_path: Path, *texts: str) -> Path:
    lines = []
    for i, text in enumerate(texts):
        lines.append({"type": "user", "uuid": f"u{i}", "sessionId": "s1", "timestamp": f"2026-03-02T09:0{i}:00Z",
                      "cwd": str(tmp_path), "message": {"role": "user", "content": text}})
        lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "s1", "timestamp": f"2026-03-02T09:0{i}:05Z",
                      "message": {"id": f"msg_{i}", "role": "assistant", "content": [{"type": "text", "text": "OK."}]}})
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _folder_files(memory_dir: Path) -> dict[str, bytes]:
    """Every file of the memory folder outside memdir's own state, with its bytes."""
    if not memory_dir.exists():
        return {}
    return {p.relative_to(memory_dir).as_posix(): p.read_bytes() for p in sorted(memory_dir.rglob("*"))
            if p.is_file() and ".memdir" not in p.relative_to(memory_dir).parts}


@pytest.fixture
def seeded(memory_dir) -> Path:
    MemoryStore(memory_dir).save(Memory(name="Testing", description="How tests should be written", type="feedback",
                                        body="Prefer fast tests" + WHY.format(why="speed", how="keep them fast")))
    return memory_dir


def _mode(monkeypatch, mode: str) -> None:
    monkeypatch.setenv(write_mode.ENV, mode)


def _offline(tmp_path, memory_dir):
    return extract_transcript(_transcript(tmp_path, *SAID), memory_dir, session_id="s1",
                              settings=Settings(engine="offline"), today=TODAY)


# --- the setting -------------------------------------------------------------------------------------
def test_unknown_mode_is_one_line_naming_the_setting_and_the_allowed_values(monkeypatch, cli, seeded):
    with pytest.raises(MemdirError, match=r"\$MEMDIR_WRITE_MODE='sometimes' is unknown; use auto, confirm, manual "
                                          r"or read-only"):
        Settings.from_env({"MEMDIR_WRITE_MODE": "sometimes"})
    _mode(monkeypatch, "sometimes")
    code, out, err = cli("--dir", str(seeded), "remember", "x y z", "--type", "user")
    assert code == 2 and err.count("\n") == 1 and "MEMDIR_WRITE_MODE" in err and "read-only" in err


def test_settings_read_the_variable_and_config_files_the_strictest(tmp_path, memory_dir, monkeypatch):
    assert Settings.from_env({"MEMDIR_WRITE_MODE": " Read_Only "}).write_mode == "read-only"
    assert Settings.from_env({}).write_mode is None
    home = Path.home() / ".claude" / "memdir"
    home.mkdir(parents=True)
    (home / "config.json").write_text(json.dumps({"write_mode": "confirm"}))
    assert write_mode.current(memory_dir) == "confirm"
    (memory_dir / ".memdir").mkdir(parents=True)
    (memory_dir / ".memdir" / "config.json").write_text(json.dumps({"write_mode": "auto"}))
    assert write_mode.current(memory_dir) == "confirm"  # a folder cannot loosen the user's global choice
    (memory_dir / ".memdir" / "config.json").write_text(json.dumps({"write_mode": "read-only"}))
    mode, source = write_mode.current_with_source(memory_dir)
    assert mode == "read-only" and str(memory_dir) in source
    _mode(monkeypatch, "auto")
    assert write_mode.current(memory_dir) == "auto"  # the variable wins
    monkeypatch.delenv(write_mode.ENV)
    (memory_dir / ".memdir" / "config.json").write_text(json.dumps({"write_mode": 3}))
    with pytest.raises(MemdirError, match="write_mode must be a string"):
        write_mode.current(memory_dir)


# --- read-only ------------------------------------------------------------------------------------------
def test_read_only_extraction_writes_zero_files(tmp_path, seeded, monkeypatch):
    before = _folder_files(seeded)
    _mode(monkeypatch, "auto")
    assert _offline(tmp_path / "a", MemoryStore(tmp_path / "auto").root).saved  # the same window does save in auto
    _mode(monkeypatch, "read-only")
    result = _offline(tmp_path / "b", seeded)
    assert result.status == "skipped" and "read-only" in result.reason
    assert _folder_files(seeded) == before
    assert not proposals.pending(seeded)


def test_read_only_refuses_every_command_that_changes_the_folder(cli, seeded, monkeypatch):
    before = _folder_files(seeded)
    _mode(monkeypatch, "read-only")
    for argv in (["remember", "the CI runs on Fridays", "--type", "project"], ["forget", "Testing"],
                 ["index", "--rebuild"], ["remember", "we chose Postgres", "--success"]):
        code, out, err = cli("--dir", str(seeded), *argv)
        assert code == 2, argv
        assert err.count("\n") == 1 and "read-only (MEMDIR_WRITE_MODE=read-only)" in err, (argv, err)
    assert _folder_files(seeded) == before
    from memdir.daylog import append

    with pytest.raises(write_mode.ReadOnly):
        append(seeded, TODAY, ["- 09:00 [project] x — why: y"])
    assert _folder_files(seeded) == before


# --- confirm ----------------------------------------------------------------------------------------------
def test_confirm_extraction_proposes_and_never_touches_the_folder(tmp_path, seeded, monkeypatch):
    before = _folder_files(seeded)
    _mode(monkeypatch, "confirm")
    result = _offline(tmp_path / "a", seeded)
    assert result.status == "proposed" and not result.saved and len(result.proposed) == 3
    assert _folder_files(seeded) == before
    waiting = proposals.pending(seeded)
    assert sorted(p.target for p in waiting) == sorted(result.proposed)
    assert {p.action for p in waiting} == {"create"} and all(p.source == "extraction of session s1" for p in waiting)
    assert any("ledger-staging" in (p.text or "") for p in waiting)
    assert all("proposed" in line and "memdir review" in line for line in result.report_lines())


def test_confirm_tells_the_user_once_per_new_batch(tmp_path, seeded, monkeypatch):
    from memdir.entry.hooks import HookPayload, session_start_output
    from memdir.entry.prompt_hook import prompt_output

    _mode(monkeypatch, "confirm")
    monkeypatch.setenv("MEMDIR_PATH", str(seeded))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    _offline(tmp_path / "a", seeded)
    payload = HookPayload.parse(json.dumps({"session_id": "s2", "cwd": str(tmp_path), "prompt": "how do we run tests"}))
    assert json.loads(session_start_output(payload))["systemMessage"] == "3 memories proposed: `memdir review`"
    assert "systemMessage" not in json.loads(prompt_output(payload) or "{}")  # told already
    proposals.propose(seeded, target="project_x.md", action="create", text="---\nname: x\n---\nx\n", source="t")
    assert json.loads(prompt_output(payload))["systemMessage"] == "4 memories proposed: `memdir review`"


def test_confirm_llm_extraction_proposes_writes_and_edits(api, tmp_path, seeded, monkeypatch):
    _mode(monkeypatch, "confirm")
    existing = seeded / "feedback_testing.md"
    before = _folder_files(seeded)
    updated = existing.read_text().replace("Prefer fast tests", "Prefer fast tests; never mock the database")
    new = ("---\nname: Real database\ndescription: Integration tests hit a real database\ntype: feedback\n---\n"
           "Do not mock the database." + WHY.format(why="a migration failed", how="use the test DB") + "\n")
    api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.tool_use("Read", {"file_path": str(existing)}, "t1")],
                                           stop_reason="tool_use")),
        httpx.Response(200, json=P.message([
            P.tool_use("Write", {"file_path": str(existing), "content": updated}, "t2"),
            P.tool_use("Write", {"file_path": str(seeded / "feedback_real_database.md"), "content": new}, "t3"),
            # an edit of what it proposed in this run: still one proposal, edited
            P.tool_use("Edit", {"file_path": str(seeded / "feedback_real_database.md"),
                                "old_string": "Do not mock the database.",
                                "new_string": "Never mock the database."}, "t4"),
        ], stop_reason="tool_use")),
    ])
    said = ("Don't mock the database, we got burned when a migration failed. Integration tests hit a real "
            "database: use the test DB. Prefer fast tests still.")  # what the memories say (extractor/support.py)
    result = extract_transcript(_transcript(tmp_path / "a", said), seeded,
                                session_id="s1", settings=Settings(engine="llm", max_attempts=1), today=TODAY)
    assert result.status == "proposed", result.as_dict()
    assert not result.saved and sorted(result.proposed) == ["feedback_real_database.md", "feedback_testing.md"]
    assert _folder_files(seeded) == before
    waiting = {p.target: p for p in proposals.pending(seeded)}
    assert waiting.keys() == {"feedback_real_database.md", "feedback_testing.md"}
    assert "Never mock the database." in (waiting["feedback_real_database.md"].text or ""), result.errors
    assert waiting["feedback_testing.md"].action == "update"


# --- manual -----------------------------------------------------------------------------------------------
def test_manual_saves_only_what_the_user_asked_for_without_calling_the_model(api, tmp_path, seeded, monkeypatch):
    _mode(monkeypatch, "manual")  # `api` answers no request: a model call would fail the test
    result = extract_transcript(_transcript(tmp_path / "a", *SAID, "Forget how tests should be written."), seeded,
                                session_id="s1", settings=Settings(engine="llm"), today=TODAY)
    assert result.engine == "offline" and "manual" in result.reason
    assert len(result.saved) == 1 and "ledger-staging" in (seeded / result.saved[0]).read_text()
    assert result.deleted == ["feedback_testing.md"]  # an explicit forget is the user's request too
    assert not proposals.pending(seeded)


# --- review -----------------------------------------------------------------------------------------------
@pytest.fixture
def proposed(tmp_path, seeded, monkeypatch) -> Path:
    """A confirm-mode run's proposals: three new memories."""
    _mode(monkeypatch, "confirm")
    _offline(tmp_path / "a", seeded)
    return seeded


def test_review_lists_with_diffs_and_accepts_through_the_store(cli, proposed, monkeypatch):
    code, out, _ = cli("--dir", str(proposed), "review")
    assert code == 0 and "3 proposal(s) waiting" in out and "+++ b/" in out and "ledger-staging" in out
    target = next(p for p in proposals.pending(proposed) if "ledger" in (p.text or ""))
    code, out, _ = cli("--dir", str(proposed), "review", "--accept", target.target)
    assert code == 0 and f"accepted {target.id}: created {target.target}" in out
    assert "ledger-staging" in (proposed / target.target).read_text()
    assert target.target in (proposed / "MEMORY.md").read_text()
    assert len(proposals.pending(proposed)) == 2
    assert list((proposed / ".memdir" / "proposals" / "accepted").iterdir())


def test_an_accepted_update_keeps_the_previous_bytes(proposed):
    from memdir import review

    original = (proposed / "feedback_testing.md").read_bytes()
    p = proposals.propose(proposed, target="feedback_testing.md", action="update", base_text=original.decode(),
                          text=original.decode().replace("Prefer fast tests", "Prefer fast, hermetic tests"))
    assert "updated feedback_testing.md (previous version kept" in review.accept(proposed, p.id)
    store = MemoryStore(proposed)
    assert store.history_versions("feedback_testing.md")[0].read() == original


def test_reject_moves_the_proposal_aside(cli, proposed):
    before = _folder_files(proposed)
    target = proposals.pending(proposed)[0]
    code, out, _ = cli("--dir", str(proposed), "review", "--reject", target.id)
    assert code == 0 and "rejected" in out
    assert _folder_files(proposed) == before
    kept = list((proposed / ".memdir" / "proposals" / "rejected").iterdir())
    assert len(kept) == 1 and json.loads(kept[0].read_text())["text"] == target.text


def test_a_stale_proposal_needs_force(cli, seeded):
    text = (seeded / "feedback_testing.md").read_text()
    p = proposals.propose(seeded, target="feedback_testing.md", action="update", base_text=text,
                          text=text.replace("Prefer fast tests", "Prefer slow tests"))
    (seeded / "feedback_testing.md").write_text(text.replace("Prefer fast tests", "Prefer my own words"))
    code, out, _ = cli("--dir", str(seeded), "review", "--list")
    assert "[stale" in out
    code, _, err = cli("--dir", str(seeded), "review", "--accept", p.id)
    assert code == 2 and "changed since" in err and "--force" in err
    assert "my own words" in (seeded / "feedback_testing.md").read_text()
    code, out, _ = cli("--dir", str(seeded), "review", "--accept", p.id, "--force")
    assert code == 0 and "Prefer slow tests" in (seeded / "feedback_testing.md").read_text()
    kept = MemoryStore(seeded).history_versions("feedback_testing.md")[0].read().decode()
    assert "my own words" in kept  # the overwritten edit is still kept


def test_accept_all_accepts_each_and_reports_the_stale(cli, proposed):
    first = proposals.pending(proposed)[0]
    (proposed / first.target).write_text("someone wrote this meanwhile\n")
    code, out, err = cli("--dir", str(proposed), "review", "--accept-all")
    assert code == 1 and out.count("accepted") == 2 and first.id in err and "changed since" in err
    assert [p.id for p in proposals.pending(proposed)] == [first.id]


def test_edit_opens_the_editor_then_accepts_the_edited_text(cli, proposed, tmp_path, monkeypatch):
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/ledger-staging/ledger-stage-2/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    target = next(p for p in proposals.pending(proposed) if "ledger" in (p.text or ""))
    code, out, _ = cli("--dir", str(proposed), "review", "--edit", target.id)
    assert code == 0 and "accepted" in out
    assert "ledger-stage-2" in (proposed / target.target).read_text()


def test_secrets_are_refused_at_proposal_and_at_acceptance(cli, seeded, tmp_path, monkeypatch):
    secret = "sk-ant-api03-" + "A" * 90
    with pytest.raises(MemdirError, match="refusing to save"):
        proposals.propose(seeded, target="project_key.md", action="create", text=f"---\nname: k\n---\n{secret}\n")
    assert not proposals.pending(seeded)
    p = proposals.propose(seeded, target="project_key.md", action="create",
                          text="---\nname: key\ndescription: where the key is\ntype: reference\n---\nkey: TODO\n")
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\nsed -i 's/TODO/{secret}/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    code, _, err = cli("--dir", str(seeded), "review", "--edit", p.id)
    assert code == 2 and "refusing to save" in err
    assert not (seeded / "project_key.md").exists() and proposals.pending(seeded)


# --- the agent's tools -----------------------------------------------------------------------------------
def test_api_agent_writes_follow_the_mode(seeded, monkeypatch):
    from memdir.entry import api

    before = _folder_files(seeded)
    _mode(monkeypatch, "confirm")
    saved = api.remember("deploys need two approvals", type="project", folder=seeded, agent="mcp")
    assert saved.proposed and _folder_files(seeded) == before
    assert api.forget("Testing", folder=seeded, agent="mcp").proposed
    assert api.update("Testing", why="faster feedback", folder=seeded, agent="mcp").proposed
    assert _folder_files(seeded) == before and len(proposals.pending(seeded)) == 3
    assert api.remember("a person's own call", type="user", folder=seeded).proposed is None  # not an agent: written
    _mode(monkeypatch, "read-only")
    with pytest.raises(write_mode.ReadOnly, match="read-only"):
        api.remember("x y z", type="user", folder=seeded, agent="mcp")


def test_mcp_tools_propose_in_confirm_and_refuse_in_read_only(seeded, monkeypatch):
    import anyio

    pytest.importorskip("mcp")
    from mcp.server.mcpserver.exceptions import ToolError

    from memdir.entry.mcp_server import build_server

    before = _folder_files(seeded)
    server = build_server(seeded)  # the mode is read on each call

    async def call(name, args):
        return await server.call_tool(name, args)

    _mode(monkeypatch, "confirm")
    reply = str(anyio.run(call, "remember", {"text": "deploys need two approvals", "type": "project"}))
    assert "Proposed" in reply and "write mode confirm" in reply and "memdir review" in reply
    assert "Proposed forgetting" in str(anyio.run(call, "forget", {"file": "feedback_testing.md"}))
    assert _folder_files(seeded) == before
    _mode(monkeypatch, "read-only")
    with pytest.raises(ToolError, match=r"read-only \(MEMDIR_WRITE_MODE=read-only\)"):
        anyio.run(call, "remember", {"text": "x y z", "type": "user"})
    assert _folder_files(seeded) == before


def test_memory_tool_proposes_in_confirm_and_refuses_in_read_only(seeded, monkeypatch):
    from anthropic.lib.tools import ToolError

    from memdir.entry.memory_tool import MemdirMemoryTool

    before = _folder_files(seeded)
    _mode(monkeypatch, "confirm")
    tool = MemdirMemoryTool(seeded)
    reply = tool.call({"command": "create", "path": "/memories/deploys.md", "file_text": "Deploys need two approvals."})
    assert "Proposed creating /memories/deploys.md" in reply and "memdir review" in reply
    reply = tool.call({"command": "str_replace", "path": "/memories/feedback_testing.md",
                       "old_str": "Prefer fast tests", "new_str": "Prefer hermetic tests"})
    assert "Proposed an edit" in reply
    assert "Proposed deleting" in tool.call({"command": "delete", "path": "/memories/feedback_testing.md"})
    assert _folder_files(seeded) == before
    # One session's last word on a file stands: its deletion replaced its edit.
    assert sorted((p.target, p.action) for p in proposals.pending(seeded)) == [
        ("deploys.md", "create"), ("feedback_testing.md", "delete")]
    _mode(monkeypatch, "read-only")
    with pytest.raises(ToolError, match="read-only"):
        MemdirMemoryTool(seeded).call({"command": "create", "path": "/memories/x.md", "file_text": "x y z"})
    assert _folder_files(seeded) == before


# --- dream and decision promotion -------------------------------------------------------------------------
def test_decision_promotion_is_proposed_in_confirm_and_dropped_in_manual(tmp_path, seeded, monkeypatch):
    from memdir.stages.extractor.capture import capture_explicit
    from memdir.stages.extractor.decision_pipeline import record

    before = _folder_files(seeded)
    captured = capture_explicit("We chose Postgres over MySQL because of JSONB support", outcome="success",
                                scope="user", project="demo")
    _mode(monkeypatch, "confirm")
    outcome = record([captured], folder=tmp_path / "decisions", memory_dir=seeded)
    assert [p.action for p in outcome.promotions] == ["proposed"] and _folder_files(seeded) == before
    _mode(monkeypatch, "manual")
    outcome = record([capture_explicit("We picked Redis for the cache because it is fast", outcome="success",
                                       scope="user", project="demo")], folder=tmp_path / "decisions", memory_dir=seeded)
    assert outcome.promotions == [] and _folder_files(seeded) == before


def test_dream_proposes_in_confirm_and_is_skipped_in_read_only(seeded, monkeypatch):
    from memdir.daylog import append
    from memdir.stages.extractor import dream

    append(seeded, TODAY, ["- 09:00 [project] The staging database is ledger-staging — why: the user said so"])
    before = _folder_files(seeded)
    _mode(monkeypatch, "read-only")
    assert dream.dream(seeded, settings=Settings(engine="offline"), today=TODAY).status == "skipped"
    _mode(monkeypatch, "confirm")
    result = dream.dream(seeded, settings=Settings(engine="offline"), today=TODAY)
    assert result.status == "proposed" and len(result.proposed) == 1
    assert _folder_files(seeded) == before
    assert proposals.pending(seeded)[0].source == "dream"


def test_batch_back_fill_proposes_in_confirm(tmp_path, isolated_home, monkeypatch):
    from memdir.paths import sanitize
    from memdir.stages.extractor.batch import run_batch, summary_table

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    session = isolated_home / ".claude" / "projects" / sanitize(str(repo))
    _transcript(session, "Remember that repo deploys happen on Mondays.")
    (session / "session.jsonl").rename(session / "s1.jsonl")
    raw = (session / "s1.jsonl").read_text().replace(json.dumps(str(session)), json.dumps(str(repo)))
    (session / "s1.jsonl").write_text(raw)
    _mode(monkeypatch, "confirm")
    report = run_batch(None, settings=Settings(engine="offline"), engine="offline")
    folder = session / "memory"
    assert _folder_files(folder) == {} and [p.action for p in proposals.pending(folder)] == ["create"]
    row = report.rows[str(folder)]
    assert (row.saved, row.proposed) == (0, 1)
    assert f"1 change(s) proposed for review in {folder}" in summary_table(report, Settings())


def test_two_new_memories_of_one_run_are_two_proposals(seeded):
    from memdir.proposing import ProposingStore

    store = ProposingStore(seeded, source="test")
    body = "{}" + WHY.format(why="x", how="y")
    first = store.save(Memory(name="Deploys", description="Deploys on Mondays", type="project",
                              body=body.format("Deploys happen on Mondays.")))
    second = store.save(Memory(name="Deploys", description="Deploys need approval", type="project",
                               body=body.format("Deploys need two approvals.")))
    assert first.rel_path != second.rel_path
    assert sorted(p.target for p in proposals.pending(seeded)) == sorted([first.rel_path, second.rel_path])


def test_malformed_proposal_files_are_skipped_and_a_symlinked_folder_refused(cli, seeded, tmp_path):
    folder = seeded / ".memdir" / "proposals"
    good = proposals.propose(seeded, target="project_x.md", action="create",
                             text="---\nname: x\ndescription: x\ntype: user\n---\nx\n")
    for name, data in (("a.json", "not json"), ("b.json", "[1, 2]"), ("c.json", json.dumps({"id": "c"})),
                       ("d.json", json.dumps({**good.as_dict(), "id": "other"}))):
        (folder / name).write_text(data)
    assert [p.id for p in proposals.pending(seeded)] == [good.id]
    code, out, _ = cli("--dir", str(seeded), "review")
    assert code == 0 and "1 proposal(s) waiting" in out
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.json").write_text(json.dumps({**good.as_dict(), "id": "evil"}))
    for p in folder.iterdir():
        p.unlink() if p.is_file() else None
    folder.rename(tmp_path / "moved")
    folder.symlink_to(outside)
    assert proposals.new_batch_notice(seeded) is None
    code, _, err = cli("--dir", str(seeded), "review")
    assert code == 2 and err.count("\n") == 1 and "symlink" in err
