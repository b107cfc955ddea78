"""Finding memory files and reading just their headers (SPEC §4), fast enough for every prompt.

Stdlib only. `list`, `doctor` and recall all see the folder through this one function.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import nullcontext

from memdir import constants as C, inert, safefs
from memdir.frontmatter_io import memory_type, parse_header
from memdir.record import Record

TYPE_CHECKING = False  # folders may be plain strings: the prompt hook passes memdir.locate's, without pathlib
if TYPE_CHECKING:
    from pathlib import Path


class Header(Record):
    """One memory file as the scan sees it.

    rel_path: relative to the scanned root, '/' separators. abs_path: a str, not a Path (building
    20,000 Path objects is a measurable share of a scan). problem: malformed frontmatter, unknown
    type... excerpt: the body as far as the read reaches (free text for lexical ranking): the first
    HEAD_BYTES of the file, or its first max_lines lines when those are longer (read_header).
    """

    rel_path: str
    abs_path: str
    mtime: float
    name: str | None
    description: str | None
    type: str | None
    problem: str | None = None
    excerpt: str = ""
    __eq__ = object.__eq__  # identity: two files are never "equal"
    __hash__ = object.__hash__

    def __init__(self, rel_path: str, abs_path: str, mtime: float, name: str | None, description: str | None,
                 type: str | None, problem: str | None = None, excerpt: str = "") -> None:  # noqa: A002
        # Written out: built once per file per prompt, where Record's generic __init__ shows.
        self.rel_path, self.abs_path, self.mtime = rel_path, abs_path, mtime
        self.name, self.description, self.type = name, description, type
        self.problem, self.excerpt = problem, excerpt

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self.abs_path)

    @property
    def offer(self) -> bool:
        """Whether recall may offer this memory at all (worth_offering)."""
        return worth_offering(self.problem, self.description)


def worth_offering(problem: str | None, description: str | None) -> bool:
    """A memory with a slightly broken header is still worth offering if it has a description. A
    superseded memory (memdir consolidate) is not: the newer one says what holds now. Here, where
    memdir.header_cache's fingerprint covers it: the cache keeps the answer in each entry."""
    return (problem is None or bool(description)) and not (description or "").startswith(C.SUPERSEDED_PREFIX)


class ScanResult(Record):
    """headers: newest first. unreadable: (rel_path, reason), skipped here and reported by `doctor`."""

    headers: list[Header]
    unreadable: list[tuple[str, str]]


def iter_memory_files(root: str | os.PathLike, exclude_dirs: tuple[str, ...] = (), folders: list[str] | None = None) -> list[str]:
    """Every `*.md` below root except index files, memdir's state, daily logs and hidden folders.

    Symlinks are never followed: a symlinked file or folder is not a memory (`doctor` reports it).
    `folders`, when given, receives every folder walked (root first): the recall server watches exactly
    these, so the walk's rule lives here once.
    """
    return [path for _, paths in memory_files_by_folder(root, exclude_dirs, folders) for path in paths]


def memory_files_by_folder(root: str | os.PathLike, exclude_dirs: tuple[str, ...] = (),
                           folders: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """iter_memory_files, as (folder, its memory files' paths) for each folder holding any, in the same
    order: a scan opens each folder once without working out every file's folder again."""
    found: list[tuple[str, list[str]]] = []
    skip = {C.STATE_DIRNAME, C.LOGS_DIRNAME, *exclude_dirs}
    index = C.INDEX_NAME  # looked up once, not per file
    top = str(root)
    stack = [top]
    while stack:
        folder = stack.pop()
        if folders is not None:
            folders.append(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        here: list[str] = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if name.endswith(".md"):
                    if name != index and entry.is_file(follow_symlinks=False):
                        here.append(entry.path)
                elif entry.is_dir(follow_symlinks=False) and not (folder == top and name in skip):
                    stack.append(entry.path)
            except OSError:
                continue
        if here:
            found.append((folder, here))
    return found


HEAD_BYTES = 8192  # one read covers 30 lines of any sane header, and the whole body of most memories


def read_header(path: str | os.PathLike, root: str | os.PathLike, max_lines: int = C.HEADER_SCAN_LINES, *,
                dir_fd: int | None = None) -> Header:
    """The header of one file below root, opened without following a symlink at any component
    (a FIFO, device or symlink is an OSError the scan reports) and read at most
    HEADER_READ_MAX_BYTES, however long its lines. `dir_fd`: the file's folder, already opened safely
    (the scan opens each folder once rather than walking the path again for every file)."""
    path = str(path)
    rel_os = path[len(str(root)) + 1 :]
    if dir_fd is not None:
        fd = safefs.open_file_at(dir_fd, os.path.basename(path), rel_os, os.O_RDONLY)
    else:
        fd = safefs.open_file(root, rel_os.replace(os.sep, "/"))
    with os.fdopen(fd, "rb") as handle:
        mtime = os.fstat(handle.fileno()).st_mtime
        data = handle.read(HEAD_BYTES)
        if len(data) == HEAD_BYTES and data.count(b"\n") < max_lines:
            data += handle.read(C.HEADER_READ_MAX_BYTES - HEAD_BYTES)  # very long lines: read on, bounded
            pieces = data.split(b"\n", max_lines)
            data = b"\n".join(pieces[:max_lines]) + (b"\n" if len(pieces) > max_lines else b"")
    head = data.decode("utf-8-sig", errors="replace")
    parsed = parse_header(head, max_lines=max_lines)
    fields = parsed.fields
    problem = parsed.problem
    if not parsed.has_header:
        problem = "no frontmatter (expected name, description, type between '---' lines)"

    def text(key: str) -> str | None:
        value = fields.get(key)
        return inert.one_line(value) or None if isinstance(value, str) else None

    mtype = memory_type(fields)  # top-level `type:` or Claude Code 2.1.x's `metadata: {type: ...}`
    if mtype is not None:
        mtype = mtype.lower()
        if mtype not in C.MEMORY_TYPES and problem is None:
            problem = f"type {mtype!r} is not one of {', '.join(C.MEMORY_TYPES)}"
    prefix = len(str(root)) + 1
    rel = path[prefix:].replace(os.sep, "/")
    problem = inert.one_line(problem) if problem else None  # may quote the file (a YAML anchor's name)
    return Header(rel, path, mtime, text("name"), text("description"), mtype, problem, parsed.body.strip())


# Headers already read, by (scanned root, path), with the (inode, size, mtime, ctime) they were read at. A hook
# process scans once and exits; the warm recall server scans the same folder every prompt, where reading 200
# headers was half its answer time. Any write (even one that restores the mtime) changes ctime. The root is in
# the key because a Header's rel_path is relative to it: team/x.md of the personal folder is x.md of team/.
_seen_headers: dict[tuple[str, str], tuple[tuple[int, int, int, int], int, Header]] = {}
SEEN_HEADERS_MAX = 50_000


def _read_header_cached(path: str, root: str | os.PathLike, max_lines: int, dfd: int | None) -> Header:
    st = os.stat(os.path.basename(path), dir_fd=dfd, follow_symlinks=False) if dfd is not None else os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return read_header(path, root, max_lines, dir_fd=dfd)  # refuses it with the usual error
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    key = (str(root), path)
    seen = _seen_headers.get(key)
    if seen is not None and seen[0] == stamp and seen[1] == max_lines:
        return seen[2]
    header = read_header(path, root, max_lines, dir_fd=dfd)
    if len(_seen_headers) >= SEEN_HEADERS_MAX:
        _seen_headers.clear()
    _seen_headers[key] = (stamp, max_lines, header)
    return header


def scan(root: str | os.PathLike, exclude_dirs: tuple[str, ...] = (), max_lines: int = C.HEADER_SCAN_LINES) -> ScanResult:
    """Headers of every memory file below root; what cannot be read safely is listed in `unreadable`."""
    return scan_with(root, exclude_dirs, lambda path, rel, dfd: _read_header_cached(path, root, max_lines, dfd))


def scan_with(root: str | os.PathLike, exclude_dirs: tuple[str, ...],
              read: Callable[[str, str, int | None], Header]) -> ScanResult:
    """Every memory file below root through `read(path, rel, folder_fd)`, newest first, each folder opened once
    without following a symlink; what raises OSError is listed in `unreadable` (file_facts.scan shares this).
    folder_fd is None where folders cannot be held open (safefs.BY_DESCRIPTOR false): each folder is checked
    instead, and each file opened by safefs (memdir.safefs_paths)."""
    headers: list[Header] = []
    unreadable: list[tuple[str, str]] = []
    prefix = len(str(root)) + 1
    for folder, paths in memory_files_by_folder(root, exclude_dirs):
        rel_folder = folder[prefix:].replace(os.sep, "/") if len(folder) >= prefix else ""
        rel_prefix, cut = (rel_folder + "/" if rel_folder else ""), len(os.path.join(folder, ""))  # folder/name
        try:
            if not safefs.BY_DESCRIPTOR:
                safefs.check_inside(root, rel_folder)
            with safefs.open_dir(root, rel_folder) if safefs.BY_DESCRIPTOR else nullcontext() as dfd:
                for path in paths:  # a folder swapped for a symlink is refused above
                    rel = rel_prefix + path[cut:]
                    try:
                        headers.append(read(path, rel, dfd))
                    except OSError as exc:
                        unreadable.append((rel, exc.strerror or str(exc)))
        except OSError as exc:
            unreadable.extend((p[prefix:].replace(os.sep, "/"), exc.strerror or str(exc)) for p in paths)
    headers.sort(key=lambda h: h.mtime, reverse=True)
    return ScanResult(headers, unreadable)
