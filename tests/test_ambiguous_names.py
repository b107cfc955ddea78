"""A reference that names several memories is a one-line error listing them by path, on every
surface (CLI, Python API, MCP, memory tool): acting on an arbitrary one could forget or rewrite
the wrong memory."""

from __future__ import annotations

import anyio
import pytest

from memdir.entry import api
from memdir.errors import MemdirError

CLAUDE_CODE_FORM = "---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {type}\n---\n{body}\n"


def _memory(folder, rel: str, name: str, type_: str, body: str = "") -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CLAUDE_CODE_FORM.format(name=name, description=f"{type_} notes on {name}", type=type_,
                                            body=body or f"The {type_} side of {name}."))


@pytest.fixture
def twins(memory_dir):
    """Claude Code's own form: two types, one `name:` slug."""
    _memory(memory_dir, "feedback_testing.md", "testing", "feedback", "Use pytest, never mocks of the DB.")
    _memory(memory_dir, "project_testing.md", "testing", "project", "The test plan for the March release.")
    (memory_dir / "MEMORY.md").write_text("# Memory\n- [testing](feedback_testing.md) — how I test\n"
                                          "- [testing](project_testing.md) — the test plan\n")
    return memory_dir


def _untouched(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.md"))}


def _one_line_naming_both(message: str) -> None:
    assert "\n" not in message.strip() and "Traceback" not in message
    assert "feedback_testing.md" in message and "project_testing.md" in message


@pytest.mark.parametrize("argv", [["show", "testing"], ["forget", "testing"], ["history", "testing"],
                                  ["restore", "testing"], ["show", "Testing"]])
def test_cli_refuses_an_ambiguous_name(twins, cli, argv):
    before = _untouched(twins)
    code, out, err = cli("--dir", str(twins), *argv)
    assert code != 0 and out == ""
    _one_line_naming_both(err.removeprefix("memdir: error: "))
    assert _untouched(twins) == before


def test_cli_acts_on_the_path_given(twins, cli):
    code, out, _ = cli("--dir", str(twins), "show", "project_testing.md")
    assert code == 0 and "March release" in out and "pytest" not in out


def test_api_update_and_forget_refuse_an_ambiguous_name(twins):
    before = _untouched(twins)
    for call in (lambda: api.update("testing", text="Use unittest.", folder=twins),
                 lambda: api.forget("testing", folder=twins),
                 lambda: api.read("testing", folder=twins)):
        with pytest.raises(MemdirError) as refused:
            call()
        _one_line_naming_both(str(refused.value))
    assert _untouched(twins) == before


def test_mcp_tools_refuse_an_ambiguous_name(twins):
    from memdir.entry.mcp_server import build_server

    server = build_server(twins)
    before = _untouched(twins)

    async def run(tool: str, args: dict) -> str:
        result = await server.call_tool(tool, args)
        blocks = result[0] if isinstance(result, tuple) else result
        return "\n".join(getattr(b, "text", "") for b in getattr(blocks, "content", blocks))

    for tool, args in (("forget", {"file": "testing"}), ("read_memory", {"file": "testing"}),
                       ("update_memory", {"file": "testing", "text": "Use unittest."})):
        try:
            text = anyio.run(run, tool, args)
        except Exception as exc:  # the SDK may surface a tool error as an exception
            text = str(exc)
        _one_line_naming_both(text.replace("Error executing tool forget: ", ""))
    assert _untouched(twins) == before


@pytest.mark.parametrize("files, ref, exact", [
    ([("ops/deploy.md", "Ops deploys"), ("mine/deploy.md", "My deploys")], "deploy", "ops/deploy"),  # one file name, two folders
    ([("testing.md", "How the CI runs"), ("project_testing.md", "testing")], "testing", "testing.md"),  # a file name, another's name
])
def test_other_ambiguous_references_forget_nothing(store, memory_dir, files, ref, exact):
    for rel, name in files:
        _memory(memory_dir, rel, name, "project")
    with pytest.raises(MemdirError) as refused:
        store.delete(ref)
    assert all(rel in str(refused.value) for rel, _ in files)
    assert all((memory_dir / rel).exists() for rel, _ in files)
    assert store.find(exact).rel_path == files[0][0]  # a path is never ambiguous


def test_a_spoken_forget_that_fits_two_memories_forgets_neither(memory_dir):
    """The offline extractor's "forget ..." names memories by their words: a tie is not a choice."""
    from datetime import date

    from memdir.stages.extractor.offline import apply
    from memdir.store import MemoryStore
    from memdir.transcript import Message

    _memory(memory_dir, "feedback_testing.md", "testing", "feedback")
    _memory(memory_dir, "project_testing.md", "testing", "project")
    for rel in ("feedback_testing.md", "project_testing.md"):  # the same subject words in both
        text = (memory_dir / rel).read_text()
        (memory_dir / rel).write_text(text.replace(text.split("description: ")[1].split("\n")[0],
                                                   "Integration tests run against the staging database"))
    said = Message(role="user", content=[{"type": "text", "text": "Please forget that integration tests run "
                                          "against the staging database."}], uuid="u1", timestamp="2026-03-02T10:00:00Z")
    before = _untouched(memory_dir)
    outcome = apply(MemoryStore(memory_dir), [said], today=date(2026, 3, 2))
    assert outcome.deleted == [] and _untouched(memory_dir) == before
    (error,) = outcome.errors
    _one_line_naming_both(error)
