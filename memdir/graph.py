"""Tier 1: a knowledge graph of entities and typed relations (SPEC §8).

Stored in the JSONL format of the MCP reference memory server (`@modelcontextprotocol/server-memory`):
one `{"type":"entity","name","entityType","observations"}` or `{"type":"relation","from","to",
"relationType"}` per line, so that server can serve memdir's graph as is (point its MEMORY_FILE_PATH
at the file, or point MEMDIR_GRAPH_FILE at the file the server already uses).

Writers never touch the graph directly during a session: they append operations to a queue, and the
Stop worker merges the queue into the graph (deduplicated) in one atomic rewrite. When the graph
cannot be written the queue is kept, so nothing is lost and `memdir status` can say why.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from memdir import constants as C
from memdir.decisions import Decision, Relation, append_lines, lock_for
from memdir.fsio import atomic_write_text, locked

ENTITY_TYPES = {"decision": "Decision", "preference": "Preference", "pattern": "Pattern",
                "anti-pattern": "AntiPattern", "problem": "Problem", "note": "Note"}
_LINK = re.compile(r"\[\[([^\[\]\n|#]{1,120})(?:[|#][^\[\]\n]*)?\]\]")
ENTITY_NAME_MAX = 120


def graph_path(folder: Path) -> Path:
    """The graph file in the decisions folder (memdir.paths.decisions_dir), or MEMDIR_GRAPH_FILE's."""
    override = os.environ.get(C.GRAPH_FILE_ENV, "").strip()
    return Path(override).expanduser() if override else Path(folder) / C.GRAPH_FILE


def queue_path(folder: Path) -> Path:
    return Path(folder) / C.GRAPH_QUEUE


@dataclass
class Graph:
    entities: dict[str, dict] = field(default_factory=dict)  # by name, insertion order kept
    relations: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    corrupt_lines: int = 0

    def add_entity(self, name: str, entity_type: str, observations: list[str]) -> bool:
        """Merge into an existing entity of that name (observations deduplicated); True when anything changed."""
        name = name.strip()[:ENTITY_NAME_MAX]
        if not name:
            return False
        existing = self.entities.get(name)
        if existing is None:
            self.entities[name] = {"type": "entity", "name": name, "entityType": entity_type,
                                   "observations": list(dict.fromkeys(o for o in observations if o))}
            return True
        before = len(existing["observations"])
        existing["observations"] = list(dict.fromkeys([*existing["observations"], *(o for o in observations if o)]))
        return len(existing["observations"]) != before

    def add_relation(self, source: str, target: str, relation_type: str) -> bool:
        key = (source.strip()[:ENTITY_NAME_MAX], target.strip()[:ENTITY_NAME_MAX], relation_type)
        if not key[0] or not key[1] or key in self.relations:
            return False
        self.relations[key] = {"type": "relation", "from": key[0], "to": key[1], "relationType": relation_type}
        return True

    def apply(self, op: dict) -> bool:
        if op.get("action") == "create_entity":
            entity = op.get("entity") or {}
            return self.add_entity(str(entity.get("name", "")), str(entity.get("entityType", "Entity")),
                                   [str(o) for o in entity.get("observations") or []])
        if op.get("action") == "create_relation":
            rel = op.get("relation") or {}
            return self.add_relation(str(rel.get("from", "")), str(rel.get("to", "")), str(rel.get("relationType", "")))
        return False

    def to_jsonl(self) -> str:
        lines = [json.dumps(e, ensure_ascii=False) for e in self.entities.values()]
        lines += [json.dumps(r, ensure_ascii=False) for r in self.relations.values()]
        return "\n".join(lines) + ("\n" if lines else "")

    def as_dict(self) -> dict:
        strip = lambda d: {k: v for k, v in d.items() if k != "type"}  # noqa: E731
        return {"entities": [strip(e) for e in self.entities.values()],
                "relations": [strip(r) for r in self.relations.values()]}


def open_read(path: Path) -> BinaryIO:
    """`path` opened for reading, when it is a regular file (a link to one is followed: MEMDIR_GRAPH_FILE may name
    the user's own). A FIFO planted at the graph or its queue made open() wait for a writer that never comes (`memdir
    status`, the Stop worker's flush); a device reads for ever. FileNotFoundError when it is missing; UnsafePath, one
    line naming it, when it is anything else. The caller closes it."""
    from memdir import safefs

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise safefs.UnsafePath(_not_a_file(path, mode))
    if hasattr(os, "O_NONBLOCK"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _not_a_file(path: Path, mode: int) -> str:
    from memdir import safefs

    return f"{path} is {safefs.kind_of(mode)}; memdir keeps a regular file there: remove it"


def load_graph(path: Path) -> Graph:
    graph = Graph()
    try:
        handle = open_read(path)
    except FileNotFoundError:
        return graph
    with handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
                if item["type"] == "entity":
                    graph.add_entity(item["name"], item["entityType"], list(item.get("observations") or []))
                elif item["type"] == "relation":
                    graph.add_relation(item["from"], item["to"], item["relationType"])
                else:
                    raise ValueError
            except (ValueError, KeyError, TypeError, AttributeError):
                graph.corrupt_lines += 1
    return graph


# --- operations ------------------------------------------------------------------------------
def _entity_op(name: str, entity_type: str, observations: list[str], ts: str) -> dict:
    return {"action": "create_entity", "entity": {"name": name, "entityType": entity_type,
                                                  "observations": observations}, "timestamp": ts}


def _relation_op(source: str, target: str, relation_type: str, ts: str) -> dict:
    return {"action": "create_relation", "relation": {"from": source, "to": target, "relationType": relation_type},
            "timestamp": ts}


def ops_for_decision(decision: Decision, relations: list[Relation], entity_types: dict[str, str] | None = None) -> list[dict]:
    """The decision as an entity, each of its entities, the project, and the typed relations between them."""
    ts = decision.timestamp
    entity_types = entity_types or {}
    observations = [decision.what]
    if decision.why:
        observations.append(f"because: {decision.why}")
    observations.append(f"confidence {decision.confidence:.2f}, {decision.source}, {ts}")
    ops = [_entity_op(decision.what[:ENTITY_NAME_MAX], ENTITY_TYPES[decision.kind], observations, ts)]
    for name in decision.entities:
        ops.append(_entity_op(name, entity_types.get(name, "Technology"), [f"{decision.kind}: {decision.what}"], ts))
    if decision.project:
        ops.append(_entity_op(decision.project, "Project", [], ts))
    for rel in relations:
        ops.append(_relation_op(rel.from_, rel.to, rel.relationType, ts))
    return ops


def ops_for_links(memory_dir: Path) -> list[dict]:
    """Memory files as entities and their `[[slug]]` links as LINKS_TO relations."""
    from memdir.frontmatter_io import parse_document
    from memdir.fsio import read_text
    from memdir.scan import scan

    ops: list[dict] = []
    if not memory_dir.is_dir():
        return ops
    for header in scan(memory_dir).headers:
        try:
            text = read_text(header.path)
            parsed = parse_document(text)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        # Claude Code writes `name: <slug>` and links `[[slug]]`; a title-style name falls back to the file stem.
        declared = str(parsed.fields.get("name") or "")
        name = declared if re.fullmatch(r"[a-z0-9][a-z0-9_-]*", declared) else header.path.stem
        meta = parsed.fields.get("metadata")
        mtype = header.type or parsed.fields.get("type") or (meta.get("type") if isinstance(meta, dict) else None) or "memory"
        observations = [o for o in (header.description, f"file {header.rel_path}") if o]
        ops.append(_entity_op(name, f"Memory:{mtype}", observations, ""))
        for target in dict.fromkeys(m.strip() for m in _LINK.findall(text)):
            if target and target != name:
                ops.append(_relation_op(name, target, C.LINK_RELATION, ""))
    return ops


def enqueue(folder: Path, ops: list[dict]) -> Path:
    path = queue_path(folder)
    append_lines(path, ops)
    return path


@dataclass
class FlushResult:
    applied: int = 0
    changed: int = 0
    pending: int = 0
    error: str = ""


def _read_ops(path: Path) -> tuple[list[dict], int]:
    ops: list[dict] = []
    corrupt = 0
    try:
        handle = open_read(path)
    except FileNotFoundError:
        return ops, 0
    with handle:
        for raw in handle:
            if raw.strip():
                try:
                    op = json.loads(raw)
                    if not isinstance(op, dict):
                        raise ValueError
                    ops.append(op)
                except ValueError:
                    corrupt += 1
    return ops, corrupt


def drop_links(graph: Graph) -> None:
    """Forget memory-file entities and their links, so a fresh reading of the files replaces them."""
    graph.entities = {n: e for n, e in graph.entities.items() if not e["entityType"].startswith("Memory:")}
    graph.relations = {k: r for k, r in graph.relations.items() if r["relationType"] != C.LINK_RELATION}


def flush(folder: Path, extra_ops: list[dict] | None = None, *, links: list[dict] | None = None) -> FlushResult:
    """Merge the queue and `extra_ops` into the graph; empty the queue on success.

    `links`, when given, is the current reading of the memory files: it replaces the memory entities and
    LINKS_TO relations the graph had, so a link removed from a file is gone from the graph too.
    """
    queue = queue_path(folder)
    target = graph_path(folder)
    result = FlushResult()
    if not extra_ops and links is None and not queue.exists():
        return result  # nothing to do; and taking the lock would create the folder
    with locked(lock_for(queue)):
        ops, _corrupt = _read_ops(queue)
        all_ops = ops + list(extra_ops or []) + list(links or [])
        result.applied = len(all_ops)
        if not all_ops and links is None:
            return result
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with locked(lock_for(target)):
                graph = load_graph(target) if not target.is_dir() else None
                if graph is None:
                    raise IsADirectoryError(f"{target} is a directory")
                before = graph.to_jsonl() if links is not None else ""
                if links is not None:
                    drop_links(graph)
                result.changed = sum(graph.apply(op) for op in all_ops)
                if links is not None and graph.to_jsonl() == before:
                    result.changed = 0
                elif links is not None:
                    result.changed = max(result.changed, 1)
                if result.changed or graph.corrupt_lines:
                    atomic_write_text(target, graph.to_jsonl())
        except OSError as exc:
            result.error = f"{target}: cannot write the graph ({exc.strerror or exc}); {len(ops)} operation(s) kept queued"
            result.pending = len(ops)
            return result
        if queue.exists():
            atomic_write_text(queue, "")
    return result


# --- queries -----------------------------------------------------------------------------------
def search(graph: Graph, term: str) -> Graph:
    """What the reference server's search_nodes returns: matching entities and relations touching them."""
    needle = term.casefold()
    found = Graph()
    for name, entity in graph.entities.items():
        if needle in name.casefold() or needle in entity["entityType"].casefold() or any(
            needle in o.casefold() for o in entity["observations"]
        ):
            found.entities[name] = entity
    found.relations = {k: r for k, r in graph.relations.items() if k[0] in found.entities or k[1] in found.entities}
    return found


def render_lines(found: Graph) -> list[str]:
    """Entities with their observations, then relations: what `memdir graph search` prints."""
    lines = []
    for entity in found.entities.values():
        lines.append(f"{entity['name']}  ({entity['entityType']})")
        lines.extend(f"    - {observation}" for observation in entity["observations"])
    lines.extend(f"{source} -{rtype}-> {target}" for source, target, rtype in found.relations)
    return lines


def show(graph: Graph, name: str) -> Graph | None:
    entity = graph.entities.get(name) or next(
        (e for n, e in graph.entities.items() if n.casefold() == name.casefold()), None
    )
    if entity is None:
        return None
    found = Graph(entities={entity["name"]: entity})
    found.relations = {k: r for k, r in graph.relations.items() if entity["name"] in (k[0], k[1])}
    return found


def writable_problem(path: Path) -> str:
    """Why the graph file could not be written right now ("" when it can), without changing it."""
    if path.is_dir():
        return f"{path} is a directory"
    probe_dir = path.parent
    while not probe_dir.exists():
        if probe_dir.parent == probe_dir:
            break
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        return f"{probe_dir} is not a folder"
    try:
        if path.exists():
            mode = path.stat().st_mode
            if not stat.S_ISREG(mode):  # a FIFO: opened for writing, it would wait for a reader
                return _not_a_file(path, mode)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.close(fd)
        probe = probe_dir / f".memdir-probe-{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return ""
