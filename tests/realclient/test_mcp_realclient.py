"""The real Claude Code CLI with `memdir mcp` in its MCP config: a recall tool call reaches the model."""

from __future__ import annotations

import json
import subprocess

from memdir.model import Memory
from memdir.store import MemoryStore
from tests.realclient import harness as H, loopback_api as A

RULE = "Integration tests must hit a real Postgres database, never mocks."


def _seed(sandbox: H.Sandbox) -> str:
    memory = Memory(
        name="Integration tests use a real database",
        description="integration tests must hit a real postgres database, not mocks",
        type="feedback",
        body=f"{RULE}\n\n**Why:** mocked tests passed while the prod migration failed.\n"
             "**How to apply:** any test under tests/integration/.",
    )
    return MemoryStore(sandbox.memory_dir).save(memory).rel_path


def test_claude_code_calls_memdir_recall_and_the_model_gets_the_memory(sandbox, scripted_api, claude):
    saved = _seed(sandbox)
    config = sandbox.repo.parent / "mcp.json"
    # No --dir: the server finds the folder the way Claude Code does, from the project it was started for.
    config.write_text(json.dumps({"mcpServers": {"memdir": {"type": "stdio", "command": str(H.memdir_bin()),
                                                           "args": ["mcp"]}}}))
    seen: dict[str, str] = {}

    def call_recall_once_loaded(request: A.Request) -> A.Reply:
        seen["schema"] = request.all_text()
        seen["tools"] = json.dumps([t for t in request.body["tools"] if t.get("name") == "mcp__memdir__recall"])
        return A.tool_use("mcp__memdir__recall", {"query": "write integration tests for the postgres layer"})

    def answer_after_recall(request: A.Request) -> A.Reply:
        seen["recalled"] = request.all_text()
        return A.text("I will use a real Postgres for the integration tests.")

    # 2.1.328 defers MCP tools: the model sees their names and loads a schema with ToolSearch first.
    api = scripted_api(A.Script(main=[
        A.tool_use("ToolSearch", {"query": "select:mcp__memdir__recall", "max_results": 1},
                   preface="Let me check memdir first."),
        call_recall_once_loaded,
        answer_after_recall,
    ]))
    run = claude(sandbox, api, "write integration tests for the postgres layer",
                 "--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", "mcp__memdir__recall")

    assert run.json()["result"] == "I will use a real Postgres for the integration tests."
    first = api.main_requests()[0].all_text()
    for tool in ("recall", "list_memories", "read_memory", "remember", "update_memory", "forget"):
        assert f"mcp__memdir__{tool}" in first
    assert "Find the user's memories that help with a task or question" in seen["tools"]  # loaded by ToolSearch
    recalled = seen["recalled"]
    assert RULE in recalled  # the recalled memory went back to the model as the tool result
    assert saved in recalled and "No memory clearly applies" not in recalled
    assert RULE not in seen["schema"]  # it arrived through the tool call, not from anywhere earlier


def test_the_readme_registration_command_works(sandbox, scripted_api, claude, claude_bin):
    """`claude mcp add memdir -- memdir mcp` (the README's line), then a session that lists memories."""
    saved = _seed(sandbox)
    api = scripted_api(A.Script(main=[
        A.tool_use("ToolSearch", {"query": "select:mcp__memdir__list_memories", "max_results": 1}),
        A.tool_use("mcp__memdir__list_memories", {}),
        A.text("Listed."),
    ]))
    added = subprocess.run([str(claude_bin), "mcp", "add", "memdir", "--", str(H.memdir_bin()), "mcp"],
                           cwd=sandbox.repo, env=H.claude_env(sandbox, api), capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    assert added.returncode == 0, added.stderr
    claude(sandbox, api, "what do you remember about this project?", "--allowedTools", "mcp__memdir__list_memories")
    last = api.main_requests()[-1].all_text()
    assert f"- {saved} (feedback, today): integration tests must hit a real postgres database" in last
