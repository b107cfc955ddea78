"""The folder-wide views `memdir ui` shows, as plain data: the `[[links]]` graph, the decision graph,
model spend per day (runs.jsonl), health (what `doctor` reports, proposals waiting for review), and
each memory's verification against the code, computed once in the background (it takes seconds on a
real folder, and the first page must not wait for it).
"""

from __future__ import annotations

import math
import stat
import threading
from pathlib import Path

from memdir import constants as C, safefs
from memdir.record import Record, field
from memdir.store import MemoryStore

PROPOSALS_DIRNAME = "proposals"  # under STATE_DIRNAME: automatic writes waiting for review (confirm mode)


class Graph(Record):
    """Nodes placed on a circle (x, y in 0..1000) and edges between their indexes, for an SVG."""

    nodes: list[dict] = field(default_factory=list)  # {"name", "kind", "rel_path", "x", "y"}
    edges: list[dict] = field(default_factory=list)  # {"from", "to", "label", "a", "b"}
    corrupt_lines: int = 0


def _place(names: list[str]) -> list[tuple[int, int]]:
    n = max(len(names), 1)
    return [(int(500 + 420 * math.cos(2 * math.pi * i / n)), int(500 + 420 * math.sin(2 * math.pi * i / n)))
            for i in range(len(names))]


def _graph(entities: list[tuple[str, str, str]], relations: list[tuple[str, str, str]], corrupt: int = 0) -> Graph:
    """entities: (name, kind, rel_path or ""); relations: (from, to, label). A relation to an unknown
    name adds that name as a node of kind "missing" (a `[[link]]` to no memory)."""
    order = {name: i for i, (name, _, _) in enumerate(entities)}
    nodes: list[dict] = [{"name": name, "kind": kind, "rel_path": rel} for name, kind, rel in entities]
    for source, target, _ in relations:
        for name in (source, target):
            if name not in order:
                order[name] = len(nodes)
                nodes.append({"name": name, "kind": "missing", "rel_path": ""})
    for node, (x, y) in zip(nodes, _place([n["name"] for n in nodes]), strict=True):
        node["x"], node["y"] = x, y
    edges = [{"from": s, "to": t, "label": label, "a": nodes[order[s]], "b": nodes[order[t]]}
             for s, t, label in relations]
    return Graph(nodes, edges, corrupt)


def links_graph(store: MemoryStore) -> Graph:
    """Memories as nodes, their `[[links]]` as edges (memdir.graph.ops_for_links reads them)."""
    from memdir.graph import ops_for_links

    entities: list[tuple[str, str, str]] = []
    relations: list[tuple[str, str, str]] = []
    for op in ops_for_links(store.root) if store.root.is_dir() else []:
        if op.get("action") == "create_entity":
            entity = op["entity"]
            rel = next((o[5:] for o in entity.get("observations", []) if o.startswith("file ")), "")
            entities.append((entity["name"], entity.get("entityType", ""), rel))
        elif op.get("action") == "create_relation":
            rel_op = op["relation"]
            relations.append((rel_op["from"], rel_op["to"], rel_op.get("relationType", "")))
    return _graph(entities, relations)


def decision_graph(memory_dir: Path, project_root: Path | None) -> tuple[Graph, str]:
    """The decision graph (SPEC §8) and the file it was read from."""
    from memdir import graph
    from memdir.paths import decisions_dir, orchestkit_compat

    root = project_root or memory_dir
    folder = decisions_dir(memory_dir, root, compat=orchestkit_compat(memory_dir, root).enabled)
    path = graph.graph_path(folder)
    loaded = graph.load_graph(path)
    entities = [(e["name"], e.get("entityType", ""), "") for e in loaded.entities.values()]
    relations = [(r["from"], r["to"], r["relationType"]) for r in loaded.relations.values()]
    return _graph(entities, relations, loaded.corrupt_lines), str(path)


def spend(memory_dir: Path, days: int = C.COST_REPORT_DAYS) -> dict:
    """Model usage and estimated cost per day from runs.jsonl: {"days": rows, "total_usd", "tokens"}."""
    from memdir import runlog

    try:
        rows = runlog.cost_by_day(memory_dir, days)
    except OSError:
        rows = []
    return {"days": rows, "window": days, "total_usd": sum(r["cost_usd"] for r in rows),
            "tokens": sum(r["tokens"] for r in rows), "runs": sum(r["runs"] for r in rows)}


class Health(Record):
    healthy: bool
    findings: list  # memdir.doctor.Finding
    proposals: int | None  # None: no proposals folder (write modes not in use)


def health(store: MemoryStore) -> Health:
    """What `memdir doctor` reports (nothing fixed), and how many proposals wait for `memdir review`."""
    from memdir.doctor import check, healthy

    findings = check(store, fix=False)
    return Health(healthy(findings), findings, proposals(store))


def proposals(store: MemoryStore) -> int | None:
    rel = f"{store.state_rel}/{PROPOSALS_DIRNAME}"
    try:
        st = safefs.lstat(store.base, rel) if store.base.is_dir() else None
        if st is None or not stat.S_ISDIR(st.st_mode):
            return None
        return sum(1 for name, kind in safefs.listdir(store.base, rel) if kind == "file" and not name.startswith("."))
    except OSError:
        return None


class Verification:
    """`memdir verify` for every folder, run once in a background thread started by the first `status()`
    (the page asks for it once it is shown: the first page never shares the interpreter with the check);
    `status()` never waits."""

    def __init__(self, stores: dict[str, MemoryStore], project_root: str | None) -> None:
        self._stores, self._root = stores, project_root
        self._results: dict[str, dict[str, dict]] = {}
        self._done = threading.Event()
        self._started = threading.Lock()
        self.error = ""

    def start(self) -> Verification:
        """Start the check unless it has started already."""
        if self._started.acquire(blocking=False):
            threading.Thread(target=self._run, name="memdir-ui-verify", daemon=True).start()
        return self

    def _run(self) -> None:
        from memdir.verify import verify_folder

        try:
            if self._root:
                for key, store in self._stores.items():
                    found = verify_folder(store.root, self._root) if store.root.is_dir() else {}
                    self._results[key] = {rel: ev.as_dict() for rel, ev in found.items()}
        except Exception as exc:  # noqa: BLE001 - a failed check leaves statuses unknown; the page says why
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def status(self) -> dict:
        """{"ready", "project", "error", "memories": {source: {rel: {status, summary, gone...}}}}."""
        self.start()
        ready = self._done.is_set()
        return {"ready": ready, "project": self._root or "", "error": self.error,
                "memories": self._results if ready else {}}
