"""`memdir mcp` as a real subprocess, spoken to through the MCP SDK's own stdio client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from memdir.store import MemoryStore  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60  # generous: two cores shared by several test runs


def _server(memory_dir: Path, home: Path, *extra: str) -> StdioServerParameters:
    env = {"HOME": str(home), "MEMDIR_ENGINE": "offline", "MEMDIR_RECALL_SERVER": "0", "PYTHONPATH": str(REPO),
           "MEMDIR_DENSE": os.environ["MEMDIR_DENSE"]}  # the suite's choice (tests/conftest.py), not the default
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir.entry.main", "--dir", str(memory_dir), "mcp", *extra],
        env=env,
        cwd=str(REPO),
    )


async def _session_run(params: StdioServerParameters, body) -> object:
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            return await body(session, init)


def _text(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_protocol_round_trip(tmp_path, isolated_home):
    memory_dir = tmp_path / "memory"

    async def body(session: ClientSession, init):
        assert init.server_info.name == "memdir"
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) >= {"recall", "list_memories", "read_memory", "remember", "update_memory", "forget"}
        assert tools["remember"].input_schema["required"] == ["text", "type"]
        assert "user" in str(tools["remember"].input_schema["properties"]["type"])
        assert tools["recall"].annotations.read_only_hint and tools["forget"].annotations.destructive_hint
        assert tools["remember"].annotations.read_only_hint is False

        saved = await session.call_tool(
            "remember",
            {
                "text": "Integration tests hit a real Postgres, never mocks.",
                "type": "feedback",
                "name": "Integration tests use a real database",
                "description": "integration tests must hit a real Postgres database, not mocks",
                "why": "mocked tests passed while the prod migration failed",
                "how": "when writing or reviewing database tests",
            },
        )
        assert not saved.is_error, _text(saved)
        assert "feedback_integration_tests_use_a_real_database.md" in _text(saved)

        recalled = await session.call_tool("recall", {"query": "write integration tests for the postgres database layer"})
        assert not recalled.is_error, _text(recalled)
        assert "real Postgres" in _text(recalled)

        listed = await session.call_tool("list_memories", {})
        assert "feedback_integration_tests_use_a_real_database.md (feedback, today)" in _text(listed)

        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["memdir://MEMORY.md"]
        index = await session.read_resource("memdir://MEMORY.md")
        assert "(feedback_integration_tests_use_a_real_database.md)" in index.contents[0].text

        updated = await session.call_tool(
            "update_memory", {"file": "feedback_integration_tests_use_a_real_database.md", "how": "in every PR"}
        )
        assert not updated.is_error, _text(updated)
        assert "previous version kept at .memdir/history/" in _text(updated)
        read = await session.call_tool("read_memory", {"file": "feedback_integration_tests_use_a_real_database"})
        assert "**How to apply:** in every PR" in _text(read)
        assert "**Why:** mocked tests passed" in _text(read)  # kept: only `how` was given

        forgot = await session.call_tool("forget", {"file": "feedback_integration_tests_use_a_real_database.md"})
        assert not forgot.is_error, _text(forgot)
        assert "`memdir restore feedback_integration_tests_use_a_real_database.md` brings it back" in _text(forgot)
        index = await session.read_resource("memdir://MEMORY.md")
        assert "integration" not in index.contents[0].text
        gone = await session.call_tool("recall", {"query": "write integration tests for the postgres database layer"})
        assert _text(gone) == "No memory clearly applies to this query."
        return True

    assert anyio.run(_session_run, _server(memory_dir, isolated_home), body)
    assert not (memory_dir / "feedback_integration_tests_use_a_real_database.md").exists()
    kept = [p for p in (memory_dir / ".memdir" / "history").rglob("*") if p.is_file()]
    assert any(b"Integration tests hit a real Postgres" in p.read_bytes() for p in kept)  # forgotten, not destroyed


def test_errors_are_one_line_tool_errors_and_the_server_survives(tmp_path, isolated_home):
    memory_dir = tmp_path / "memory"
    secret = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: Outside\ndescription: not yours\ntype: user\n---\nprivate text\n")
    memory_dir.mkdir()
    (memory_dir / "linked.md").symlink_to(outside)

    async def body(session: ClientSession, init):
        leaked = await session.call_tool("remember", {"text": f"the deploy key is {secret}", "type": "reference"})
        assert leaked.is_error
        assert "Anthropic API key" in _text(leaked) and "\n" not in _text(leaked)
        assert secret not in _text(leaked)

        missing = await session.call_tool("read_memory", {"file": "nope.md"})
        assert missing.is_error and "no memory named 'nope.md'" in _text(missing)

        escape = await session.call_tool("forget", {"file": "../../etc/passwd"})
        assert escape.is_error and "\n" not in _text(escape)

        bad_type = await session.call_tool("remember", {"text": "x y z", "type": "opinion"})
        assert bad_type.is_error
        assert _text(bad_type) == (
            "remember: argument 'type': Input should be 'user', 'feedback', 'project' or 'reference'"
        )
        missing_arg = await session.call_tool("read_memory", {})
        assert _text(missing_arg) == "read_memory: argument 'file': Field required"

        empty = await session.call_tool("update_memory", {"file": "anything.md"})
        assert empty.is_error and "nothing to change" in _text(empty)

        linked = await session.call_tool("read_memory", {"file": "linked.md"})
        assert linked.is_error and "private text" not in _text(linked)
        overwrite = await session.call_tool("update_memory", {"file": "linked.md", "text": "pwned"})
        assert overwrite.is_error

        # Still serving after every failure above.
        ok = await session.call_tool("remember", {"text": "The user is a data engineer.", "type": "user"})
        assert not ok.is_error, _text(ok)
        return True

    assert anyio.run(_session_run, _server(memory_dir, isolated_home), body)
    saved = MemoryStore(memory_dir).scan().headers
    assert [h.type for h in saved] == ["user"]
    assert all(secret not in p.read_text() for p in memory_dir.rglob("*.md") if not p.is_symlink())
    assert outside.read_text().endswith("private text\n")


def test_team_flag_serves_team_memory(tmp_path, isolated_home):
    memory_dir = tmp_path / "memory"

    async def body(session: ClientSession, init):
        saved = await session.call_tool("remember", {"text": "Releases go out on Tuesdays.", "type": "project"})
        assert not saved.is_error, _text(saved)
        return True

    assert anyio.run(_session_run, _server(memory_dir, isolated_home, "--team"), body)
    assert [h.type for h in MemoryStore.team_store(memory_dir).scan().headers] == ["project"]
    assert MemoryStore(memory_dir).scan().headers == []


def test_mcp_is_a_cli_command(capsys):
    from memdir.entry.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["mcp", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "MCP clients" in out and "--team" in out


def test_started_outside_a_project_it_says_how_to_point_it(tmp_path, isolated_home):
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "memdir.entry.main", "mcp"], cwd="/", input="", capture_output=True, text=True, timeout=60,
        env={"HOME": str(isolated_home), "PYTHONPATH": str(REPO), "MEMDIR_RECALL_SERVER": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "/ is not a project; pass --cwd PROJECT or --dir FOLDER" in proc.stderr


def test_argument_errors_fold_to_one_line():
    from memdir.entry.mcp_server import one_line_argument_errors

    sdk = ("Error executing tool forget: 1 validation error for forgetArguments\nfile\n  Input should be a valid "
           "string [type=string_type, input_value=5, input_type=int]\n    For further information visit https://x")
    assert one_line_argument_errors(sdk) == "forget: argument 'file': Input should be a valid string"
    assert one_line_argument_errors("Unknown tool:\n  nope") == "Unknown tool: nope"


def test_decision_tools_read_the_projects_journal_and_graph(tmp_path, isolated_home):
    import json

    from memdir.decisions import Decision, append
    from memdir.paths import decisions_dir

    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    folder = decisions_dir(tmp_path / "memory", project, compat=False)  # the memory folder the server gets
    append(folder, [
        Decision(kind="decision", what="Use Postgres for the job queue", why="one database to run", confidence=0.9,
                 entities=["postgres"]),
        Decision(kind="anti-pattern", what="Never retry payment calls blindly", confidence=0.8),
    ])
    from memdir.graph import graph_path

    graph_file = graph_path(folder)
    graph_file.write_text(
        json.dumps({"type": "entity", "name": "postgres", "entityType": "technology",
                    "observations": ["holds the job queue"]}) + "\n"
        + json.dumps({"type": "entity", "name": "redis", "entityType": "technology", "observations": ["cache only"]})
        + "\n" + json.dumps({"type": "relation", "from": "api", "to": "postgres", "relationType": "uses"}) + "\n"
    )
    params = _server(tmp_path / "memory", isolated_home)
    params.args[2:2] = ["--cwd", str(project)]  # the project whose journal and graph the tools read

    async def body(session: ClientSession, init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["recent_decisions"].annotations.read_only_hint
        assert tools["search_graph"].annotations.read_only_hint
        recent = _text(await session.call_tool("recent_decisions", {}))
        lines = recent.splitlines()
        assert lines[0] == "## Recent Project Decisions" and "not instructions" in lines[1]
        assert lines[2].startswith("- **[Anti-pattern]** Never retry payment calls blindly")  # newest first
        assert "Use Postgres for the job queue _(because: one database to run)_ [postgres]" in lines[3]
        one = _text(await session.call_tool("recent_decisions", {"limit": 1}))
        assert "Never retry" in one and "Postgres for the job queue" not in one
        bad = await session.call_tool("recent_decisions", {"limit": 0})
        assert bad.is_error and "\n" not in _text(bad)

        found = _text(await session.call_tool("search_graph", {"term": "queue"}))
        assert "postgres  (technology)" in found and "    - holds the job queue" in found
        assert "api -uses-> postgres" in found and "redis" not in found
        none = _text(await session.call_tool("search_graph", {"term": "kafka"}))
        assert "matches 'kafka'" in none

    anyio.run(_session_run, params, body)
    assert not list((tmp_path / "memory").glob("*.md"))  # read-only
    assert not (project / ".claude").exists()


def _piped(memory_dir: Path, home: Path, *messages: dict) -> tuple[dict, str]:
    """Send `messages` as one piped stdin that then closes, as `printf ... | memdir mcp` does: the
    answers by request id, and stderr."""
    import json
    import subprocess

    params = _server(memory_dir, home)
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.run([params.command, *params.args], input=lines, capture_output=True, text=True,
                          timeout=TIMEOUT, env=params.env, cwd=params.cwd)
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines()) if "id" in m}
    return answers, proc.stderr


_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def test_end_of_input_still_answers_every_request_sent(tmp_path, isolated_home):
    memory_dir = tmp_path / "memory"
    from memdir.entry import api

    api.remember("Never use npm in this repo, use pnpm; the reason is the lockfile.", type="feedback",
                 name="Package manager", description="never use npm in this repo, use pnpm", folder=memory_dir)
    answers, stderr = _piped(memory_dir, isolated_home, _INITIALIZE, _INITIALIZED,
                             _call(2, "recall", {"query": "which package manager does this repo use?"}),
                             _call(3, "list_memories", {}))
    assert sorted(answers) == [1, 2, 3], stderr
    assert answers[1]["result"]["serverInfo"]["name"] == "memdir"
    assert "the reason is the lockfile" in answers[2]["result"]["content"][0]["text"]
    assert "feedback" in answers[3]["result"]["content"][0]["text"]



def test_the_store_is_imported_at_the_first_tool_call_not_before_initialize(tmp_path):
    """The SDK's own import is most of the ~0.7 s of CPU before `initialize` is answered; memdir's store (~50 ms)
    waits for the first tool call."""
    import subprocess

    probe = ("import sys, anyio\nfrom pathlib import Path\nfrom memdir.entry.mcp_server import build_server\n"
             "server = build_server(Path(sys.argv[1]))\ntools = anyio.run(server.list_tools)\n"
             "print(len(tools), [m for m in ('memdir.entry.api', 'memdir.store') if m in sys.modules])\n"
             "anyio.run(server.call_tool, 'list_memories', {})\nprint('memdir.store' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "memory")], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=REPO, env={**os.environ, "HOME": str(tmp_path)})
    assert proc.stdout.splitlines() == ["8 []", "True"], proc.stderr
