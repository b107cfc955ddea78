"""What a person browsing their memory sees, as plain data: the folders, each memory's row, one memory
with its links both ways, its frontmatter and its history as diffs (`memdir ui` renders it; any other
front end could).

Every read goes through the store: bounded, never through a symlink, never outside the folder.
"""

from __future__ import annotations

import difflib
import stat
from pathlib import Path

from memdir import constants as C, safefs
from memdir.ages import age_label
from memdir.errors import MemdirError
from memdir.frontmatter_io import parse_document
from memdir.graph import _LINK as LINK
from memdir.model import kebab_slug
from memdir.record import Record, field
from memdir.scan import Header
from memdir.store import MemoryStore

DIFF_MAX_LINES = 400  # a version's diff shown past this is cut, with a line saying so
AGENT_SCOPES = ("project", "local", "user")


class Source(Record):
    """One memory folder the browser shows. key: in URLs (personal, team, agent-project-NAME...)."""

    key: str
    label: str
    kind: str  # personal | team | agent
    scope: str  # the agent memory scope (project, local, user); "" for personal and team
    store: MemoryStore


def sources(memory_dir: Path, project_root: Path | None = None, user_home: Path | None = None) -> list[Source]:
    """The personal folder, its team folder when present, and every agent's memory folder found in the
    project (`.claude/agent-memory*/NAME`) and in the user's config home. Symlinked folders are skipped."""
    found = [Source("personal", "personal", "personal", "", MemoryStore(memory_dir))]
    if _real_dir(memory_dir, C.TEAM_DIRNAME):
        found.append(Source("team", "team", "team", "", MemoryStore.team_store(memory_dir)))
    bases = {}
    if project_root is not None:
        bases["project"] = (project_root, ".claude/agent-memory")
        bases["local"] = (project_root, ".claude/agent-memory-local")
    if user_home is not None:
        bases["user"] = (user_home, "agent-memory")
    for scope, (root, rel) in bases.items():
        for name in _agent_names(root, rel):
            found.append(Source(f"agent-{scope}-{name}", f"agent {name} ({scope})", "agent", scope,
                                MemoryStore(Path(root) / rel / name)))
    return found


def _real_dir(root: Path, rel: str) -> bool:
    st = safefs.lstat(root, rel) if Path(root).is_dir() else None
    return st is not None and stat.S_ISDIR(st.st_mode)


def _agent_names(root: Path, rel: str) -> list[str]:
    try:
        return [name for name, kind in safefs.listdir(root, rel) if kind == "dir" and not name.startswith(".")]
    except OSError:  # a symlink on the way: never followed (doctor reports it)
        return []


# --- the list ------------------------------------------------------------------------------------
class Row(Record):
    source: str
    rel_path: str
    name: str
    description: str
    type: str
    mtime: float
    age: str
    problem: str


def rows(source: Source, now: float | None = None) -> list[Row]:
    """Every memory of one folder, newest first (the scan's order)."""
    return [Row(source.key, h.rel_path, h.name or Path(h.rel_path).stem, h.description or "", h.type or "",
                h.mtime, age_label(h.mtime, now), h.problem or "")
            for h in source.store.scan().headers]


def matches(row: Row, query: str) -> bool:
    """A plain case-insensitive search over what the list shows."""
    wanted = query.strip().casefold()
    return not wanted or wanted in f"{row.name}\n{row.description}\n{row.rel_path}\n{row.type}".casefold()


# --- one memory ----------------------------------------------------------------------------------
class Link(Record):
    target: str  # as written inside [[...]]
    rel_path: str | None  # the memory it names, None when no memory has that name


class Change(Record):
    """One kept version and what changed when the next one replaced it."""

    number: int
    stamp: str
    action: str
    size: int
    diff: list[str]
    restorable: bool
    note: str = ""


class Detail(Record):
    source: str
    rel_path: str
    text: str
    name: str
    description: str
    type: str
    body: str
    age: str
    problem: str
    extra: dict = field(default_factory=dict)  # other frontmatter keys: provenance, metadata, verified...
    links_out: list[Link] = field(default_factory=list)
    links_in: list[str] = field(default_factory=list)
    history: list[Change] = field(default_factory=list)


def header_of(store: MemoryStore, rel_path: str) -> Header:
    """The memory at exactly `rel_path`; anything else (outside the folder, a symlink, not a memory) is refused."""
    store.resolve_rel(rel_path)  # refuses '..', absolute and hidden paths, symlinked folders on the way
    for h in store.scan().headers:
        if h.rel_path == rel_path:
            return h
    raise MemdirError(f"no memory at {rel_path!r} in {store.root}")


def detail(source: Source, rel_path: str, now: float | None = None) -> Detail:
    store = source.store
    header = header_of(store, rel_path)
    text = store.read_file(rel_path)
    parsed = parse_document(text)
    extra = {k: v for k, v in parsed.fields.items() if k not in ("name", "description", "type")}
    found = Detail(source.key, rel_path, text, header.name or Path(rel_path).stem, header.description or "",
                   header.type or "", parsed.body, age_label(header.mtime, now), header.problem or "", extra)
    names = _names(store.scan().headers)
    found.links_out = [Link(t, names.get(t.casefold()) or names.get(kebab_slug(t)))
                       for t in dict.fromkeys(m.strip() for m in LINK.findall(parsed.body))]
    found.links_in = linking_to(store, header, names)
    found.history = changes(store, rel_path, text)
    return found


def _names(headers: list[Header]) -> dict[str, str]:
    """Every way a `[[link]]` may name a memory (its name, slug or file stem) -> its rel_path."""
    names: dict[str, str] = {}
    for h in headers:
        for key in (Path(h.rel_path).stem, h.name or "", kebab_slug(h.name or "")):
            if key:
                names.setdefault(key.casefold(), h.rel_path)
    return names


def linking_to(store: MemoryStore, header: Header, names: dict[str, str]) -> list[str]:
    """The memories whose body links to `header`'s memory."""
    out = []
    for other in store.scan().headers:
        if other.rel_path == header.rel_path:
            continue
        text = store.text_or_empty(other.rel_path)
        targets = (m.strip() for m in LINK.findall(text))
        if any((names.get(t.casefold()) or names.get(kebab_slug(t))) == header.rel_path for t in targets):
            out.append(other.rel_path)
    return out


def changes(store: MemoryStore, rel_path: str, current: str | None) -> list[Change]:
    """Every version (the folder's git history and the old reader's kept copies), newest first, each with
    the diff to what came after it (the next newer version, or the file now)."""
    from memdir import history

    rows = store.history_rows(rel_path) if store.state_rel == C.STATE_DIRNAME else []
    if not rows:  # team memory and other stores without a git history of their own: the kept copies
        return _kept_changes(store, rel_path, current)
    out = []
    after, after_label = (current or ""), "now" if current is not None else "deleted"
    for row in rows:
        try:
            before = row.read(store.base).decode("utf-8", errors="replace")
        except OSError as exc:
            out.append(Change(row.number, row.stamp, row.action, row.size, [], False, f"unreadable: {exc}"))
            continue
        torn = row.old is not None and (history.torn(row.old) or bool(row.old.shared_with))
        note = ("the bytes this deleted" if row.deletion else "not restorable (torn or shared)" if torn else "")
        out.append(Change(row.number, row.stamp, row.action, row.size, _diff(before, after, row.number, after_label),
                          not torn, note))
        after, after_label = before, f"version {row.number}"
    return out


def _diff(before: str, after: str, number: int, after_label: str) -> list[str]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"version {number}", after_label,
                                     lineterm=""))
    if len(diff) > DIFF_MAX_LINES:
        diff = [*diff[:DIFF_MAX_LINES], f"... {len(diff) - DIFF_MAX_LINES} more lines"]
    return diff


def _kept_changes(store: MemoryStore, rel_path: str, current: str | None) -> list[Change]:
    from memdir import history

    out = []
    after, after_label = (current or ""), "now" if current is not None else "deleted"
    for version in store.history_versions(rel_path):
        try:
            data = version.read()
        except OSError as exc:
            out.append(Change(version.number, version.stamp, version.action, 0, [], False, f"unreadable: {exc}"))
            continue
        before = data.decode("utf-8", errors="replace")
        torn = history.torn(version)
        note = ("empty: left by a failed write" if torn else
                f"old name shared with {', '.join(version.shared_with)}" if version.shared_with else "")
        out.append(Change(version.number, version.stamp, version.action, len(data),
                          _diff(before, after, version.number, after_label), not torn and not version.shared_with,
                          note))
        after, after_label = before, f"version {version.number}"
    return out


def deleted(store: MemoryStore) -> list[str]:
    """Memories that have kept versions but no file now (restorable)."""
    here = {h.rel_path for h in store.scan().headers}
    return [rel for rel in dict.fromkeys(store.files_with_history()) if rel.endswith(".md") and rel != C.INDEX_NAME
            and rel not in here]


def edit(store: MemoryStore, rel_path: str, *, description: str, type_: str, body: str, expected_text: str):
    """Save a person's edit of one memory through the store: its previous bytes are kept, the secret
    guard runs, and a file changed since `expected_text` was read is refused (nothing is lost)."""
    from pydantic import ValidationError

    from memdir.model import Memory, parse_type

    header_of(store, rel_path)
    memory = store.load(rel_path)
    try:
        changed = Memory.model_validate({**memory.model_dump(), "description": description,
                                         "type": parse_type(type_, "type"), "body": body})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "memory"
        raise MemdirError(f"{where}: {first['msg']}") from None
    return store.save(changed, rel_path=rel_path, expected_text=expected_text)
