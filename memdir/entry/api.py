"""memdir's public Python API: `import memdir`, then `memdir.remember(...)`, `memdir.recall(...)`...

The stable surface is the names in `__all__`; `memdir/__init__.py` exposes them lazily so that
`import memdir` stays free of pydantic and pathlib for the hooks. Every function takes the memory
folder as `folder=` (default: the folder Claude Code would use for the current directory) and
returns a frozen dataclass; bad input raises `memdir.MemdirError` with one line naming the fix.

Layering: this module is an entry point, like the CLI and the MCP server, not core. It is the one
place under `memdir/` besides them that imports both stages (`recall` for recall, `extractor` for
extract); core modules never import it. The functions wrap the same library calls the CLI makes
(`memdir.entry.manual.remember`, `MemoryStore`, `recall.api.recall`, `extractor.schedule.request_extraction`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.provenance import entry
from memdir.store import MemoryStore

__all__ = [
    "Extraction",
    "Forgotten",
    "MemdirError",
    "MemoryDoc",
    "MemoryInfo",
    "RecallAnswer",
    "Recalled",
    "Saved",
    "extract",
    "forget",
    "read_index",
    "list_memories",
    "read",
    "recall",
    "remember",
    "resolve_folder",
    "update",
]

FolderArg = str | os.PathLike[str] | None


# --- typed returns ------------------------------------------------------------
@dataclass(frozen=True)
class MemoryInfo:
    """One memory as `list_memories` sees it (header only). `problem`: malformed frontmatter etc."""

    file: str  # relative to the folder, '/' separators: what every other function accepts
    path: Path
    name: str | None
    description: str | None
    type: str | None
    modified: float  # mtime, seconds since the epoch
    problem: str | None = None


@dataclass(frozen=True)
class MemoryDoc:
    """One memory read in full. `text` is the file exactly as stored, frontmatter included."""

    file: str
    path: Path
    name: str
    description: str
    type: str
    body: str
    text: str
    modified: float


@dataclass(frozen=True)
class Saved:
    """A write. `created`: a new file; `changed`: False when the file already held these bytes;
    `kept`: where the previous version went (relative to the folder), for an update; `name_taken`:
    the name asked for when another memory has it (this one was saved under a name of its own)."""

    file: str
    path: Path
    created: bool
    changed: bool = True
    kept: str | None = None
    name_taken: str | None = None
    proposed: str | None = None  # write mode confirm: the id of the proposal recorded instead (`memdir review`)


@dataclass(frozen=True)
class Forgotten:
    """A removed memory. `kept`: where its bytes went (`memdir restore FILE` brings it back)."""

    file: str
    path: Path
    kept: str | None = None
    proposed: str | None = None  # write mode confirm: the deletion was proposed, not done


@dataclass(frozen=True)
class Recalled:
    file: str
    path: Path
    type: str | None
    description: str | None


@dataclass(frozen=True)
class RecallAnswer:
    """`context`: what the prompt hook would inject ("" when nothing clearly applies)."""

    memories: tuple[Recalled, ...]
    context: str
    engine: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extraction:
    """One extraction run. status: saved | nothing | skipped | failed | stashed."""

    status: str
    engine: str | None
    saved: tuple[str, ...]
    deleted: tuple[str, ...]
    errors: tuple[str, ...]
    reason: str
    dry_run: bool
    usage: Mapping[str, int] = field(default_factory=dict)


# --- helpers ------------------------------------------------------------------
def resolve_folder(folder: FolderArg = None, *, cwd: FolderArg = None) -> Path:
    """The memory folder: `folder` when given, else the one Claude Code uses for `cwd` (default: here)."""
    from memdir.paths import resolve_memory_dir, validate_configured_path

    if folder is not None:  # relative folders are taken from the current directory, `~` is expanded
        return validate_configured_path(os.path.abspath(os.path.expanduser(os.fspath(folder))), "folder")
    return resolve_memory_dir(Path(cwd) if cwd is not None else None).path


def _store(folder: FolderArg, team: bool, agent: str | None = None) -> MemoryStore:
    """The folder's store; for an AI agent's write (`agent`: "mcp", "memory tool"), the one the write mode
    gives agents (memdir/write_mode.py): the folder, proposals for review, or a read-only refusal."""
    root = resolve_folder(folder)
    if agent is not None:
        from memdir import write_mode

        return write_mode.Writers(root, agent, team=team).store(write_mode.AGENT) or MemoryStore(root)
    return MemoryStore.team_store(root) if team else MemoryStore(root)


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    """pydantic's multi-line validation report becomes one MemdirError line naming the field."""
    from pydantic import ValidationError

    try:
        yield
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "memory"
        raise MemdirError(f"{where}: {err['msg']}") from None


def _saved(result) -> Saved:
    return Saved(result.rel_path, result.path, result.created, result.changed, result.kept,
                 result.name_taken, result.proposed)


# --- the API ------------------------------------------------------------------
def remember(
    text: str,
    *,
    type: str,  # noqa: A002 - the memory's type is what callers call it
    name: str | None = None,
    description: str | None = None,
    why: str | None = None,
    how: str | None = None,
    folder: FolderArg = None,
    team: bool = False,
    allow_secrets: bool = False,
    agent: str | None = None,
) -> Saved:
    """Save a memory (what `memdir remember` does). type: user, feedback, project or reference; `agent`
    ("mcp") also names the writer in the memory's provenance (else "api").

    Feedback and project memories carry **Why:** and **How to apply:** lines; missing ones are
    filled in plainly. The same rule under the same name updates that memory in place; a different
    one never overwrites it: it is saved under a name of its own (`Saved.name_taken`). Secrets are refused.
    `agent` names an AI agent's tool writing ("mcp"): the write mode may turn it into a proposal (`Saved.proposed`).
    """
    from memdir.entry.manual import remember as manual_remember

    with _one_line_errors():
        result = manual_remember(
            _store(folder, team, agent), text, type_=type, name=name, description=description, why=why, how=how,
            allow_secrets=allow_secrets, by=agent or "api",
        )
    return _saved(result)


def update(
    ref: str,
    *,
    text: str | None = None,
    description: str | None = None,
    why: str | None = None,
    how: str | None = None,
    type: str | None = None,  # noqa: A002
    name: str | None = None,
    folder: FolderArg = None,
    team: bool = False,
    allow_secrets: bool = False,
    agent: str | None = None,
) -> Saved:
    """Change an existing memory; only the fields given change. A new `name` renames the file.

    Refused when the file changed on disk since it was read here (no lost update). `agent`: as `remember`.
    """
    from memdir import body_sections as sections
    from memdir.model import Memory, parse_type

    if all(v is None for v in (text, description, why, how, type, name)):
        raise MemdirError(f"update {ref!r}: nothing to change; pass text, description, why, how, type or name")
    store = _store(folder, team, agent)
    memory, header = store.read(ref)
    before = store.read_file(header.rel_path)
    changes: dict[str, object] = {}
    body = memory.body
    if text is not None:  # a new rule or fact; the Why and How sections already there stay, as written
        body = text.strip()
        for prefix in (C.WHY_PREFIX, C.HOW_PREFIX):
            if (kept := sections.section(memory.body, prefix)) is not None:
                body = sections.set_section(body, prefix, kept[len(prefix) :])
    # Each given section replaces the whole existing one (label to the next **Label:**), never adding an empty one.
    for prefix, value in ((C.WHY_PREFIX, why), (C.HOW_PREFIX, how)):
        if value is not None:
            body = sections.set_section(body, prefix, value)
    if body != memory.body:
        changes["body"] = body
    if description is not None:
        changes["description"] = description
    if type is not None:
        changes["type"] = parse_type(type, "type")
    with _one_line_errors():
        updated = Memory.model_validate({**memory.model_dump(), **changes})
        result = store.save(updated, rel_path=header.rel_path, allow_secrets=allow_secrets, expected_text=before,
                            provenance=entry(agent or "api"))
        if name is not None and name.strip() != memory.name:
            result = store.rename(header.rel_path, name)
    return _saved(result)


def forget(ref: str, *, folder: FolderArg = None, team: bool = False, agent: str | None = None) -> Forgotten:
    """Remove a memory (by file name, path or name) and its index line; its bytes are kept. `agent`: as `remember`."""
    store = _store(folder, team, agent)
    result = store.delete(ref)
    return Forgotten(result.rel_path, store.root / result.rel_path, result.kept, result.proposed)


def read(ref: str, *, folder: FolderArg = None, team: bool = False) -> MemoryDoc:
    """One memory in full, by file name (with or without .md), relative path or name."""
    store = _store(folder, team)
    memory, header = store.read(ref)
    return MemoryDoc(
        file=header.rel_path,
        path=header.path,
        name=memory.name,
        description=memory.description,
        type=memory.type.value,
        body=memory.body,
        text=store.read_file(header.rel_path),
        modified=header.mtime,
    )


def list_memories(*, type: str | None = None, folder: FolderArg = None, team: bool = False) -> list[MemoryInfo]:  # noqa: A002
    """Every memory in the folder, newest first; `type` keeps only that type."""
    from memdir.model import parse_type

    wanted = parse_type(type, "type").value if type else None
    return [
        MemoryInfo(h.rel_path, h.path, h.name, h.description, h.type, h.mtime, h.problem)
        for h in _store(folder, team).scan().headers
        if wanted is None or h.type == wanted
    ]


def read_index(*, folder: FolderArg = None, team: bool = False) -> str:
    """MEMORY.md as stored ("" when there is none yet)."""
    return _store(folder, team).index()


def recall(
    query: str,
    *,
    folder: FolderArg = None,
    engine: str | None = None,
    tools: list[str] | None = None,
    session_id: str | None = None,
) -> RecallAnswer:
    """The memories the prompt hook would inject for `query`, with the same engines and caps.

    engine: auto (default, from $MEMDIR_ENGINE), llm or offline. With a `session_id`, memories
    already surfaced in that session are skipped and these are recorded, as the hook does.
    """
    from memdir.config import Settings
    from memdir.stages.recall.api import recall as recall_query

    if not query.strip():
        raise MemdirError("recall: the query is empty; pass the task or question memories should help with")
    settings = Settings.from_env()
    if engine is not None:
        settings = settings.with_overrides(engine=engine)
    result = recall_query(
        resolve_folder(folder), query, settings=settings, tools=tools, session_id=session_id,
        record=session_id is not None,
    )
    memories = tuple(Recalled(h.rel_path, h.path, h.type, h.description) for h in result.selected)
    return RecallAnswer(memories, result.context, result.engine, tuple(result.debug))


def extract(
    transcript: str | os.PathLike[str],
    *,
    folder: FolderArg = None,
    session_id: str | None = None,
    last_n: int | None = None,
    engine: str | None = None,
    dry_run: bool = False,
) -> list[Extraction]:
    """Save what a transcript (Claude Code JSONL or a JSON message list) teaches, as `memdir extract`.

    One run per folder at a time: when another is in progress the request is queued and the
    result says "stashed". API failures come back as status "failed", never raised.
    """
    from memdir.config import Settings
    from memdir.stages.extractor.schedule import request_extraction

    path = Path(transcript)
    if not path.is_file():
        raise MemdirError(f"{path}: transcript not found")
    settings = Settings.from_env()
    if engine is not None:
        settings = settings.with_overrides(engine=engine)
    request = {"transcript": str(path), "session_id": session_id, "last_n": last_n, "engine": settings.engine,
               "dry_run": dry_run}
    return [
        Extraction(r.status, r.engine, tuple(r.saved), tuple(r.deleted), tuple(r.errors), r.reason, r.dry_run,
                   dict(r.usage))
        for r in request_extraction(resolve_folder(folder), request, settings=settings)
    ]
