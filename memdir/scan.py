"""Finding memory files and reading just their headers (SPEC §4), fast enough for every prompt.

Stdlib only. `list`, `doctor` and recall all see the folder through this one function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from memdir import constants as C
from memdir.frontmatter_io import parse_header


@dataclass
class Header:
    rel_path: str  # relative to the scanned root, with '/' separators
    path: Path
    mtime: float
    name: str | None
    description: str | None
    type: str | None
    problem: str | None = None  # malformed frontmatter, unknown type, ...


@dataclass
class ScanResult:
    headers: list[Header]  # newest first
    unreadable: list[tuple[str, str]]  # (rel_path, reason): skipped here, reported by `doctor`


def iter_memory_files(root: Path, exclude_dirs: tuple[str, ...] = ()) -> list[Path]:
    """Every `*.md` below root except index files, memdir's state, daily logs and hidden folders."""
    found: list[Path] = []
    skip = {C.STATE_DIRNAME, C.LOGS_DIRNAME, *exclude_dirs}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (folder == root and name in skip):
                        stack.append(Path(entry.path))
                elif name.endswith(".md") and name != C.INDEX_NAME and entry.is_file():
                    found.append(Path(entry.path))
            except OSError:
                continue
    return found


def read_header(path: Path, root: Path, max_lines: int = C.HEADER_SCAN_LINES) -> Header:
    stat = path.stat()
    with open(path, "rb") as handle:
        head = b"".join(islice(handle, max_lines)).decode("utf-8-sig", errors="replace")
    parsed = parse_header(head, max_lines=max_lines)
    fields = parsed.fields
    problem = parsed.problem
    if not parsed.has_header:
        problem = "no frontmatter (expected name, description, type between '---' lines)"

    def text(key: str) -> str | None:
        value = fields.get(key)
        return value.strip() or None if isinstance(value, str) else None

    mtype = text("type")
    if mtype is not None:
        mtype = mtype.lower()
        if mtype not in C.MEMORY_TYPES and problem is None:
            problem = f"type {mtype!r} is not one of {', '.join(C.MEMORY_TYPES)}"
    rel = path.relative_to(root).as_posix()
    return Header(rel, path, stat.st_mtime, text("name"), text("description"), mtype, problem)


def scan(root: Path, exclude_dirs: tuple[str, ...] = (), max_lines: int = C.HEADER_SCAN_LINES) -> ScanResult:
    headers: list[Header] = []
    unreadable: list[tuple[str, str]] = []
    for path in iter_memory_files(root, exclude_dirs):
        try:
            headers.append(read_header(path, root, max_lines))
        except OSError as exc:
            unreadable.append((path.relative_to(root).as_posix(), exc.strerror or str(exc)))
    headers.sort(key=lambda h: h.mtime, reverse=True)
    return ScanResult(headers, unreadable)
