"""`memdir mcp`: the memory folder as an MCP server over stdio, on the official `mcp` SDK.

An entry point (top layer, like the CLI): every tool is a call into `memdir.entry.api`, so writes go
through the store (atomic, locked, secret guard, MEMORY.md kept in sync) exactly as they do from
the CLI. Tool descriptions are written for the model that reads them: when to call, what comes
back. A failure becomes an MCP tool error with one line, never a crashed server.
"""

from __future__ import annotations

import functools
import logging
import re
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from memdir import constants as C
from memdir.errors import MemdirError, os_error_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memdir.entry import api  # each tool imports it when called: the store behind it is ~50 ms of CPU at
    # start that the client's `initialize` and `tools/list` need not wait for

SERVER_NAME = "memdir"
INDEX_URI = "memdir://MEMORY.md"
MemoryTypeName = Literal["user", "feedback", "project", "reference"]
# Hints clients use to decide what needs the user's approval: reads are safe, forget is not.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
FORGETS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = """\
memdir is the user's persistent memory, shared by every agent they use (Claude Code, Cursor, \
Codex, Claude Desktop...). Call `recall` with the task at hand before starting work that may \
depend on the user's preferences, past decisions or where things live. Save with `remember` only \
what cannot be read from the code or git history: who the user is, how they want the work done \
(corrections and confirmed approaches), what is going on and why, where things live outside the \
repo. Never save secrets. Prefer `update_memory` over creating a near-duplicate."""


def _write_mode(folder: Path) -> str:
    from memdir import write_mode

    return write_mode.current(folder)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _tool_errors(fn):
    """Every failure reaches the client as a ToolError with one line; the server keeps running."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except MemdirError as exc:
            raise ToolError(_one_line(exc)) from None
        except OSError as exc:  # disk full, read-only, permissions: words and a fix
            raise ToolError(os_error_line(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
            logging.getLogger(__name__).exception("memdir tool %s failed", fn.__name__)
            raise ToolError(f"internal error ({type(exc).__name__}: {_one_line(exc)}); run `memdir doctor`") from None

    return wrapper


_ARGUMENT_ERROR = re.compile(r"validation error for (?P<tool>\w+?)Arguments\n(?P<field>\S+)\n\s+(?P<msg>.+?)(?: \[type=|\n|$)")


def one_line_argument_errors(text: str) -> str:
    """The SDK's multi-line pydantic report for bad arguments, as one line naming the argument."""
    match = _ARGUMENT_ERROR.search(text)
    if match:
        return f"{match['tool']}: argument '{match['field']}': {match['msg']}"
    return " ".join(text.split())


async def _one_line_tool_errors(ctx, call_next):
    """Middleware: every failed tools/call reaches the client as one line, argument errors included."""
    result = await call_next(ctx)
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):  # the wire form
        for block in result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                block["text"] = one_line_argument_errors(block["text"])
    return result


PROPOSED = ("Proposed {file} for the user's review: write mode {mode} keeps it out of the memory folder until "
            "the user accepts it with `memdir review`; nothing is saved yet.")


def _described(saved: api.Saved, mode: str = "confirm") -> str:
    if saved.proposed:
        return PROPOSED.format(file=saved.file, mode=mode)
    if saved.created and saved.name_taken:
        what = f"Saved {saved.file} (another memory is already named {saved.name_taken!r}; it was left as is)"
    elif saved.created:
        what = f"Saved {saved.file}"
    elif not saved.changed:
        what = f"{saved.file} already says exactly this; nothing changed"
    else:
        what = f"Updated {saved.file} (previous version kept at {saved.kept})"
    return f"{what}. {C.INDEX_NAME} is up to date."


def _entry(info: api.MemoryInfo) -> str:
    from memdir import inert
    from memdir.ages import age_label

    flag = f"  [problem: {info.problem}]" if info.problem else ""
    return (f"- {inert.one_line(info.file)} ({info.type or '?'}, {age_label(info.modified)}): "
            f"{info.description or info.name or ''}{flag}")


def _others_first(folder: Path) -> None:
    """Before a write: commit what others changed since the last commit (memdir/githistory.py), so the
    git history tells their change from this one."""
    from memdir import githistory

    githistory.sweep(folder, why="changes made outside memdir, found by the MCP server")


def build_server(folder: Path, *, team: bool = False, project: Path | None = None) -> MCPServer:
    """The server for one memory folder (`team`: the folder's shared team memory instead).

    `project`: the repository whose decision journal and graph the decision tools read (default: the
    project around the current directory, as the CLI finds it).
    """
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=_version(), middleware=[_one_line_tool_errors])
    _add_reading_tools(server, folder, team)
    _add_remember(server, folder, team)
    _add_changing_tools(server, folder, team)
    _add_decision_tools(server, functools.partial(_decisions_folder, folder, project))
    _add_index_resource(server, folder, team)
    return server


def _add_reading_tools(server: MCPServer, folder: Path, team: bool) -> None:
    """recall, list_memories and read_memory: the tools that only read the memory folder."""

    @server.tool(
        description=(
            "Find the user's memories that help with a task or question. Pass the task in plain words "
            "(e.g. 'set up the release pipeline for the API'). Returns the few memories that clearly apply, "
            "each with its age (older memories may be stale: verify against the code before relying on them), "
            "or says none applies. Uses the same selection engine and size caps as memdir's prompt hook."
        ),
        structured_output=False,
        annotations=READS,
    )
    @_tool_errors
    def recall(query: str) -> str:
        from memdir.entry import api

        answer = api.recall(query, folder=folder)
        if not answer.memories:
            return "No memory clearly applies to this query."
        return answer.context

    @server.tool(
        description=(
            "List the memories saved in this folder, newest first: file name, type, age and one-line description. "
            "Optionally only one type: user (who the user is), feedback (how they want the work done), "
            "project (what is going on and why), reference (where things live outside the repo)."
        ),
        structured_output=False,
        annotations=READS,
    )
    @_tool_errors
    def list_memories(type: MemoryTypeName | None = None) -> str:  # noqa: A002
        from memdir.entry import api

        infos = api.list_memories(type=type, folder=folder, team=team)
        if not infos:
            return "No memories saved yet." if type is None else f"No {type} memories saved yet."
        return "\n".join(_entry(info) for info in infos)

    @server.tool(
        description=(
            "Read one memory in full (frontmatter and body). `file` is the file name from list_memories or "
            "recall (e.g. feedback_testing.md); the memory's name also works."
        ),
        structured_output=False,
        annotations=READS,
    )
    @_tool_errors
    def read_memory(file: str) -> str:
        from memdir import inert
        from memdir.entry import api

        # A planted file's Unicode tags or selector runs would be words the model reads and the user never sees.
        return inert.block(api.read(file, folder=folder, team=team).text)


def _add_remember(server: MCPServer, folder: Path, team: bool) -> None:
    """remember: a new memory, by the rules the description gives the model."""

    @server.tool(
        description=(
            "Save a new memory that will help in future conversations, in any agent. Save only what the code "
            "and git history cannot tell: type user = who the user is (role, expertise); feedback = how they "
            "want the work done (a correction or a confirmed approach); project = what is going on and why "
            "(decisions, deadlines, constraints; write dates as YYYY-MM-DD); reference = where things live "
            "outside the repo (dashboards, tickets, docs). `text` is the rule or fact in one or two sentences. "
            "For feedback and project give `why` (the reason, often the incident behind it) and `how` (when and "
            "how to apply it). Name it by its distinctive words; a name another memory has is never reused (use "
            "update_memory to change that memory). Text that looks "
            "like a secret (API keys, passwords, tokens) is refused: save where the secret is kept instead."
        ),
        structured_output=False,
        annotations=WRITES,
    )
    @_tool_errors
    def remember(
        text: str,
        type: MemoryTypeName,  # noqa: A002
        name: str | None = None,
        description: str | None = None,
        why: str | None = None,
        how: str | None = None,
    ) -> str:
        from memdir.entry import api

        _others_first(folder)
        saved = api.remember(
            text, type=type, name=name, description=description, why=why, how=how, folder=folder, team=team,
            agent="mcp",
        )
        return _described(saved, _write_mode(folder))


def _add_changing_tools(server: MCPServer, folder: Path, team: bool) -> None:
    """update_memory and forget: the tools that change or drop a memory the model names."""

    @server.tool(
        description=(
            "Change an existing memory when it is outdated or wrong; only the fields you pass change. "
            "`file` is from list_memories or recall. `text` replaces the rule or fact; `why` / `how` replace "
            "those lines; a new `name` renames the file. Prefer this over saving a near-duplicate."
        ),
        structured_output=False,
        annotations=WRITES,
    )
    @_tool_errors
    def update_memory(
        file: str,
        text: str | None = None,
        description: str | None = None,
        why: str | None = None,
        how: str | None = None,
        type: MemoryTypeName | None = None,  # noqa: A002
        name: str | None = None,
    ) -> str:
        from memdir.entry import api

        _others_first(folder)
        saved = api.update(
            file, text=text, description=description, why=why, how=how, type=type, name=name, folder=folder,
            team=team, agent="mcp",
        )
        return _described(saved, _write_mode(folder))

    @server.tool(
        description=(
            "Forget a memory that is wrong or no longer true, or that the user asks to drop. `file` is from "
            "list_memories or recall. The memory leaves the index; memdir keeps its bytes in history."
        ),
        structured_output=False,
        annotations=FORGETS,
    )
    @_tool_errors
    def forget(file: str) -> str:
        from memdir.entry import api

        _others_first(folder)
        gone = api.forget(file, folder=folder, team=team, agent="mcp")
        if gone.proposed:
            return (f"Proposed forgetting {gone.file} for the user's review (write mode {_write_mode(folder)}); "
                    "it stays until the user accepts with `memdir review`.")
        kept = f"its last version is kept at {gone.kept}" if gone.kept else "its bytes are kept"
        return f"Forgot {gone.file}; {kept} (`memdir restore {gone.file}` brings it back)."


def _decisions_folder(folder: Path, project: Path | None) -> Path:
    """The journal and graph of the project we serve: memdir.paths.decisions_dir decides where."""
    from memdir.paths import decisions_dir, orchestkit_compat, project_root as find_project_root

    root = project if project is not None else find_project_root(Path.cwd())
    return decisions_dir(folder, root, compat=orchestkit_compat(folder, root).enabled)


def _add_decision_tools(server: MCPServer, decisions_folder: Callable[[], Path]) -> None:
    """recent_decisions and search_graph: the project's decision journal and graph, read only."""

    @server.tool(
        description=(
            "The project's most recent decisions, preferences and known problems from its decision journal, "
            "newest first, as memdir's prompt hook shows them at the start "
            "of a session. Call it when starting work in a project or before changing an approach, to avoid "
            f"repeating what was tried and rejected. `limit`: how many (1-{C.MCP_DECISIONS_MAX}, default "
            f"{C.RECENT_DECISIONS_SHOWN})."
        ),
        structured_output=False,
        annotations=READS,
    )
    @_tool_errors
    def recent_decisions(limit: int = C.RECENT_DECISIONS_SHOWN) -> str:
        from memdir.decision_context import recent_decisions_markdown
        from memdir.decisions import journal_path

        if not 1 <= limit <= C.MCP_DECISIONS_MAX:
            raise ToolError(f"recent_decisions: argument 'limit': pass a number from 1 to {C.MCP_DECISIONS_MAX}")
        journal = journal_path(decisions_folder())
        if not journal.is_file():
            return f"No decisions recorded yet for this project ({journal} does not exist)."
        return recent_decisions_markdown(str(journal), limit=limit) or f"No decisions recorded yet in {journal}."

    @server.tool(
        description=(
            "Search the project's decision knowledge graph (entities such as libraries, services and files, "
            "with the observations and relations memdir recorded about them) for a word or name, e.g. "
            "'postgres' or 'retry'. Returns the matching entities with their observations and the relations "
            "touching them; same as `memdir graph search TERM`."
        ),
        structured_output=False,
        annotations=READS,
    )
    @_tool_errors
    def search_graph(term: str) -> str:
        from memdir import graph

        if not term.strip():
            raise ToolError("search_graph: argument 'term': pass a word or name to look for")
        path = graph.graph_path(decisions_folder())
        loaded = graph.load_graph(path)
        lines = graph.render_lines(graph.search(loaded, term.strip()))
        if loaded.corrupt_lines:
            lines.append(f"(skipped {loaded.corrupt_lines} corrupt line(s) in {path}; see `memdir status`)")
        return "\n".join(lines) if lines else f"Nothing in the decision graph ({path}) matches {term.strip()!r}."


def _add_index_resource(server: MCPServer, folder: Path, team: bool) -> None:
    """MEMORY.md as the resource memdir://MEMORY.md."""

    @server.resource(
        INDEX_URI,
        name=C.INDEX_NAME,
        description="The memory index: one line per memory, `- [Title](file.md) — hook`.",
        mime_type="text/markdown",
    )
    def memory_index() -> str:
        from memdir.entry import api

        try:
            from memdir import inert

            return inert.block(api.read_index(folder=folder, team=team))  # MEMORY.md is a file anyone can plant too
        except (MemdirError, OSError) as exc:
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(_one_line(exc)) from None


def _version() -> str:
    from memdir import __version__

    return __version__


def serve(folder: Path, *, team: bool = False, project: Path | None = None) -> None:
    """Serve `folder` over stdin/stdout until the client closes its end and every request it sent is answered."""
    import anyio

    from memdir.entry.mcp_stdio import serve_stdio_answering_all

    anyio.run(serve_stdio_answering_all, build_server(folder, team=team, project=project))
