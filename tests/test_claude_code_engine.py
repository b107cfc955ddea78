"""`--engine claude-code`: the user's own `claude` login through the Claude Agent SDK, tested on a
scripted CLI (tests/fake_claude_cli.py) that speaks the SDK's control protocol."""

from __future__ import annotations

import json
import os
import stat
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code engine's optional extra (memdir[claude-code])")

from memdir import claude_code as cc  # noqa: E402
from memdir.config import Settings  # noqa: E402
from memdir.engines import choose_engine  # noqa: E402
from memdir.model import Memory  # noqa: E402
from memdir.stages.extractor import state  # noqa: E402
from memdir.stages.extractor.run import extract_transcript  # noqa: E402
from memdir.stages.recall.api import recall  # noqa: E402
from memdir.store import MemoryStore  # noqa: E402
from tests.fake_claude_cli import ScriptedCLI, command_line  # noqa: E402

TODAY = date(2026, 3, 2)
MEMORY = ("---\nname: Role\ndescription: The user is the tech lead for payments\ntype: user\n---\n"
          "The user is the tech lead for payments.\n")


@pytest.fixture
def claude_on_path(tmp_path, monkeypatch):
    """An executable named `claude` on PATH and a logged-in Claude Code config (never run here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text("#!/bin/sh\nexit 1\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"oauthAccount": {"emailAddress": "a@example.com"}}))
    return exe


@pytest.fixture
def transcript(tmp_path) -> Path:
    lines = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
              "message": {"role": "user", "content": "Remember that I'm the tech lead for payments."}}]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_auto_order_api_then_claude_login_then_offline(claude_on_path, monkeypatch, capsys):
    from memdir import engines

    monkeypatch.setattr(engines, "_notice_shown", False)  # a new process
    monkeypatch.setattr(engines, "_said", set())
    assert choose_engine("auto") == "claude-code"
    assert "Claude Code login" in capsys.readouterr().err
    choose_engine("auto")
    assert capsys.readouterr().err == ""  # said once
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert choose_engine("auto", quiet=True) == "llm"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    (Path(os.environ["HOME"]) / ".claude.json").write_text("{}")  # installed, not logged in
    assert choose_engine("auto", quiet=True) == "offline"
    monkeypatch.setenv("PATH", "/nonexistent")
    assert choose_engine("auto", quiet=True) == "offline"


def test_the_session_gets_only_memdir_tools_no_settings_a_cap_and_a_budget(claude_on_path, tmp_path):
    tools = cc.mcp_tools([{"name": "Read", "description": "r", "input_schema": {"type": "object", "properties": {}}}],
                         lambda name, args: ("", False))
    opts = cc.options(system="s", model="claude-sonnet-5-5", effort="medium", max_turns=6, budget_usd=0.5,
                      cwd=tmp_path / "scratch", tools=tools)
    argv = command_line(opts)
    assert argv[0] == str(claude_on_path)  # the user's own CLI, not the SDK's bundled one
    assert argv[argv.index("--tools") + 1] == ""  # no built-in tool at all
    disallowed = argv[argv.index("--disallowedTools") + 1].split(",")
    assert {"Bash", "Read", "Write", "Edit", "WebFetch", "Task"} <= set(disallowed)
    assert argv[argv.index("--allowedTools") + 1] == "mcp__memdir__Read"
    assert "--setting-sources=" in argv  # no settings, so no hooks: memdir never runs inside itself
    assert "--strict-mcp-config" in argv
    assert argv[argv.index("--max-turns") + 1] == "6" and argv[argv.index("--max-budget-usd") + 1] == "0.5"
    assert opts.env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] == "1"


def test_extraction_through_the_scripted_cli_writes_through_the_store(claude_on_path, transcript, tmp_path):
    memory = tmp_path / "memory"
    target = str(memory / "user_role.md")
    cli = ScriptedCLI([
        [{"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}}],
        [{"type": "tool_use", "name": "Write", "input": {"file_path": target, "content": MEMORY}}],
        [{"type": "text", "text": "Saved the role."}],
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="claude-code"),
                                today=TODAY, client=cli)
    assert result.status == "saved" and result.engine == "claude-code", result.as_dict()
    assert result.saved == ["user_role.md"] and "tech lead for payments" in (memory / "user_role.md").read_text()
    assert "user_role.md" in (memory / "MEMORY.md").read_text()  # the store's index, as on the API path
    assert state.load_cursor(memory, "s1")["uuid"] == "u1"
    assert result.cost_usd == pytest.approx(0.0123) and result.usage["input_tokens"] == 300
    assert "Remember that I'm the tech lead for payments." in cli.prompt
    assert all(not r.get("isError") for r in cli.tool_results)
    assert sorted(cli.listed_tools) == ["Edit", "Glob", "Grep", "Read", "Write"]  # memdir's memory-only tools
    run = json.loads((memory / ".memdir" / "runs.jsonl").read_text().splitlines()[-1])
    assert run["engine"] == "claude-code" and run["cost_usd"] == pytest.approx(0.0123)


def test_a_write_outside_the_memory_folder_is_refused_by_the_same_toolbox(claude_on_path, transcript, tmp_path):
    memory = tmp_path / "memory"
    cli = ScriptedCLI([[{"type": "tool_use", "name": "Write",
                         "input": {"file_path": str(tmp_path / "outside.md"), "content": MEMORY}}]])
    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="claude-code"),
                                today=TODAY, client=cli)
    assert not (tmp_path / "outside.md").exists() and result.errors
    assert cli.tool_results[0]["isError"] is True


def test_a_failed_session_keeps_the_cursor(claude_on_path, transcript, tmp_path):
    memory = tmp_path / "memory"
    cli = ScriptedCLI([[{"type": "text", "text": "..."}]],
                      result={"subtype": "error_max_budget_usd", "is_error": True, "result": "budget"})
    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="claude-code"),
                                today=TODAY, client=cli)
    assert result.status == "failed" and "error_max_budget_usd" in result.reason
    assert state.load_cursor(memory, "s1")["uuid"] is None


def _folder(tmp_path):
    store = MemoryStore(tmp_path / "memory")
    store.save(Memory(name="Alice", description="Alice leads payments", type="user", body="Alice leads payments."))
    store.save(Memory(name="Board", description="Grafana board for payments latency", type="reference",
                      body="grafana.internal/d/pay"))
    return store.root


def test_recall_uses_structured_output_and_no_tools(claude_on_path, tmp_path):
    memory = _folder(tmp_path)
    cli = ScriptedCLI([[{"type": "text", "text": "{}"}]],
                      result={"structured_output": {"selected_memories": ["reference_board.md"]}})
    result = recall(memory, "where is the payments latency board", settings=Settings(engine="claude-code"), client=cli)
    assert result.engine == "claude-code" and [h.rel_path for h in result.selected] == ["reference_board.md"]
    assert "payments latency board" in cli.prompt


def test_recall_falls_back_when_the_structured_output_is_missing(claude_on_path, tmp_path):
    memory = _folder(tmp_path)
    cli = ScriptedCLI([[{"type": "text", "text": "the board"}]])
    result = recall(memory, "payments latency board", settings=Settings(engine="claude-code"), client=cli)
    assert result.engine == "offline" and result.selected
    assert any("no parsable selection" in d and "offline" in d for d in result.debug)


def test_auto_recall_on_a_login_stays_offline_in_time(claude_on_path, tmp_path):
    memory = _folder(tmp_path)
    result = recall(memory, "payments latency board", settings=Settings(engine="auto"))
    assert result.engine == "offline" and result.selected


def test_memdirs_own_sessions_are_never_back_filled(tmp_path):
    from memdir.paths import sanitize
    from memdir.stages.extractor.batch import discover

    scratch = cc.scratch_dir(tmp_path / "memory")
    own = tmp_path / "projects" / sanitize(str(scratch)) / "s.jsonl"
    user = tmp_path / "projects" / sanitize(str(tmp_path / "repo")) / "s.jsonl"
    for path in (own, user):
        path.parent.mkdir(parents=True)
        path.write_text("{}\n")
    assert discover([tmp_path / "projects"]) == [user]
