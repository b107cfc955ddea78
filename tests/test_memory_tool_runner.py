"""The memory-tool example in docs/mcp-and-memory-tool.md, run as written by the SDK's tool runner against a
mocked Messages API."""

from __future__ import annotations

import json
import re

import httpx

import memdir
from memdir.index import linked_files
from memdir.store import MemoryStore
from tests import api_payloads as P
from tests.conftest import REPO

MODEL = "claude-sonnet-5-5"
MEMORY_FILE = (
    "---\nname: PR reviews in the morning\ndescription: The user reviews pull requests only in the mornings\n"
    "type: user\n---\nThe user reviews pull requests only in the mornings.\n"
)


def readme_example() -> str:
    page = (REPO / "docs" / "mcp-and-memory-tool.md").read_text()
    match = re.search(r"<!-- memory-tool-example[^>]*-->\n```python\n(.*?)```", page, re.S)
    assert match, "docs/mcp-and-memory-tool.md lost its memory-tool example block"
    return match.group(1)


def test_readme_example_drives_the_backend(api, tmp_path, isolated_home, monkeypatch, capsys):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message(
            [P.text("Let me check my memory first."),
             P.tool_use("memory", {"command": "view", "path": "/memories"}, "toolu_view")],
            stop_reason="tool_use", model=MODEL, input_tokens=1850, output_tokens=64, cache_write=1600)),
        httpx.Response(200, json=P.message(
            [P.tool_use("memory", {"command": "create", "path": "/memories/user_review_hours.md",
                                   "file_text": MEMORY_FILE}, "toolu_create")],
            stop_reason="tool_use", model=MODEL, input_tokens=1990, output_tokens=120, cache_read=1600)),
        httpx.Response(200, json=P.message(
            [P.text("Noted: you review pull requests only in the mornings.")],
            stop_reason="end_turn", model=MODEL, input_tokens=2150, output_tokens=18, cache_read=1600)),
    ])

    exec(compile(readme_example(), "docs/mcp-and-memory-tool.md", "exec"), {})  # noqa: S102 - documented, verbatim

    assert capsys.readouterr().out.strip() == "Noted: you review pull requests only in the mornings."
    bodies = [json.loads(call.request.content) for call in route.calls]
    assert len(bodies) == 3 and all(b["model"] == MODEL for b in bodies)
    assert bodies[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]  # later turns continue the thread

    def tool_result(body: dict, tool_use_id: str) -> dict:
        blocks = [b for b in body["messages"][-1]["content"] if b.get("tool_use_id") == tool_use_id]
        assert len(blocks) == 1
        return blocks[0]

    viewed = tool_result(bodies[1], "toolu_view")
    assert not viewed.get("is_error") and "Here're the files and directories" in json.dumps(viewed["content"])
    created = tool_result(bodies[2], "toolu_create")
    assert not created.get("is_error")
    assert "File created successfully at: /memories/user_review_hours.md" in json.dumps(created["content"])

    folder = memdir.resolve_folder()
    assert isolated_home in folder.parents  # the isolated HOME, never the machine's ~/.claude
    assert (folder / "user_review_hours.md").read_text().endswith("only in the mornings.\n")
    assert linked_files(MemoryStore(folder).index()) == ["user_review_hours.md"]


def test_a_refused_command_reaches_the_model_as_a_tool_error(api, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message(
            [P.tool_use("memory", {"command": "create", "path": "/memories/../../.bashrc", "file_text": "x"},
                        "toolu_escape")],
            stop_reason="tool_use", model=MODEL)),
        httpx.Response(200, json=P.message([P.text("I could not save that.")], stop_reason="end_turn", model=MODEL)),
    ])
    exec(compile(readme_example(), "docs/mcp-and-memory-tool.md", "exec"), {})  # noqa: S102
    last = json.loads(route.calls[1].request.content)["messages"][-1]["content"][0]
    assert last["is_error"] is True and "plain names" in json.dumps(last["content"])
    assert not (tmp_path / ".bashrc").exists()
