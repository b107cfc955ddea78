"""The entries of memdir.header_cache's file as a prompt uses them: an entry's header decodes its
fields, and reads its excerpt from the file, only when something reads them (issue 26). See there for
the layout and what is trusted."""

from __future__ import annotations

import os

from memdir import scan as one_file
from memdir.scan import Header

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from typing import BinaryIO

FIELDS = 9  # rel path, four stamp numbers, name, description, type, problem


class Entries:
    """One load of the cache file: its lines, its arrays, and the file still open, the excerpts read
    from it when asked for (the same inode: a write since replaced the path, never these bytes)."""

    __slots__ = ("root", "handle", "lines", "numbers", "offer", "ends", "base", "size", "blob")

    def __init__(self, root: str | os.PathLike, handle: BinaryIO, lines: bytes, numbers: array, offer: bytes, ends: array,
                 base: int, size: int) -> None:
        self.root, self.handle, self.lines, self.numbers, self.offer = root, handle, lines, numbers, offer
        self.ends, self.base, self.size = ends, base, size
        self.blob: bytes | None = None  # every excerpt, read at once when the file is written again

    def read_all(self) -> None:
        """Read every excerpt at once (to write the file again: one read, not one per entry)."""
        try:
            self.blob = os.pread(self.handle.fileno(), self.size - self.base, self.base)
        except (OSError, ValueError):
            self.blob = b""

    def excerpt(self, i: int) -> bytes | None:
        """Entry i's excerpt as written, or None when the arrays point outside the file (not a file this
        module wrote) or it cannot be read any more (the cache was closed)."""
        start = self.ends[i - 1] if i else 0
        end = self.ends[i]
        if not start <= end <= self.size - self.base:
            return None
        if self.blob is not None:
            return self.blob[start:end] if end <= len(self.blob) else None
        try:
            data = os.pread(self.handle.fileno(), end - start, self.base + start)
        except (OSError, ValueError):  # ValueError: closed
            return None
        return data if len(data) == end - start else None


class CachedHeader(Header):
    """A Header from the cache file, served by its stamp: its fields are decoded from its line, and its
    excerpt read, only when something reads them; an entry that does not decode reads its file instead."""

    entries: Entries | None = None
    at: int = 0  # its line is entries.lines[at:end]
    end: int = 0
    index: int = 0  # its place in the arrays
    offer: bool = True  # memdir.scan.worth_offering, as the line was written
    stamp: bytes = b""  # the file's path and stamp as the cache keeps it: the same stamp, the same header
    parsed: tuple[str | None, str | None, str | None, str | None] | None = None  # name, description, type, problem
    text: str | None = None

    def __init__(self, rel_path: str, abs_path: str, mtime: float, entries: Entries, at: int, end: int, index: int,
                 offer: bool, stamp: bytes) -> None:
        self.rel_path, self.abs_path, self.mtime = rel_path, abs_path, mtime
        self.entries, self.at, self.end, self.index, self.offer, self.stamp = entries, at, end, index, offer, stamp
        self.parsed = self.text = None

    def _decoded(self) -> tuple[str | None, str | None, str | None, str | None]:
        if self.parsed is None:
            entries = self.entries
            self.parsed = decode(entries.lines[self.at : self.end]) if entries is not None else None
            if self.parsed is None:
                self._from_file()
        assert self.parsed is not None
        return self.parsed

    def _from_file(self) -> None:
        """Its line or its excerpt is not as this module writes them: the file's own header, as the scan
        would have read it (a file gone since is an unreadable memory, which `refreshed` leaves out)."""
        try:
            fresh = one_file.read_header(self.abs_path, self.entries.root if self.entries else "")
            fields, text = (fresh.name, fresh.description, fresh.type, fresh.problem), fresh.excerpt
        except OSError as exc:
            fields, text = (None, None, None, f"unreadable: {exc.strerror or exc}"), ""
        self.parsed = self.parsed or fields
        self.text = text if self.text is None else self.text

    @property  # type: ignore[misc]  # a slot in Header, a lazy property here (and the three below)
    def name(self) -> str | None:  # type: ignore[override]
        return self._decoded()[0]

    @property  # type: ignore[misc]
    def description(self) -> str | None:  # type: ignore[override]
        return self._decoded()[1]

    @property  # type: ignore[misc]
    def type(self) -> str | None:  # type: ignore[override]
        return self._decoded()[2]

    @property  # type: ignore[misc]
    def problem(self) -> str | None:  # type: ignore[override]
        return self._decoded()[3]

    @property  # type: ignore[misc]
    def excerpt(self) -> str:
        if self.text is None:
            data = self.entries.excerpt(self.index) if self.entries is not None else None
            if data is None:
                self._from_file()
            else:  # "replace": bytes that are not UTF-8 (a broken file) only change what this memory is ranked on
                self.text = data.decode("utf-8", "replace")
        assert self.text is not None
        return self.text

    @excerpt.setter
    def excerpt(self, value: str) -> None:
        self.text = value


def decode(line: bytes) -> tuple[str | None, str | None, str | None, str | None] | None:
    """An entry's name, description, type and problem, or None when the line is not one memdir.header_cache wrote."""
    try:
        parts = line.decode("utf-8", "surrogatepass").split("\t")  # one decode, one split
    except UnicodeError:
        return None
    if len(parts) != FIELDS:  # the rel path holds no tab: parts[1:5] are the stamp the scan matched
        return None
    texts = [None if p == "-" else p[1:] if p[:1] == "+" else _BAD for p in parts[5:]]
    return None if _BAD in texts else (texts[0], texts[1], texts[2], texts[3])


_BAD = "\x00not a field this module writes"  # never a field's text: fields hold no NUL (inert.one_line)
