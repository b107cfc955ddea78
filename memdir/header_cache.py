"""The prompt hook's scan, from headers kept on disk between processes (issue 26).

With the recall server down, each prompt hook is a new process: it read every memory's header (and
the body lines recall ranks on) again, and sent the ones with `: ` in a description to PyYAML. This
keeps each file's Header, excerpt included, in `<memory>/.memdir/cache/headers` under the file's
stamp (inode, size, mtime_ns, ctime_ns), the approach of memdir.file_facts and memdir.scan's in-process
table: any write changes ctime, so a stamp that still matches means the same bytes; any other stamp
re-reads the file. file_facts' own file is not used: it holds no excerpts, and loading it is one JSON
parse of the whole folder, which is the cost this avoids. A file changed less than RACY_NS before
it was read is not kept (a same-size write within the clock's tick would leave its stamp as it was).

Layout: a first line (format, fingerprint of the code that reads headers, a token that changes with
every write, the lineage of the memories' numbers (the token of each write that gave some out, from
which number on) and the next number, which recall.older_words keys its index to, the count of lines
and where the excerpts start), then one line per file in the scan's order: rel path, the four stamp
numbers, name, description, type, problem (each `-` for None or `+` and the text), its number, and
its excerpt's offset and length; then the excerpts, as they are. An
excerpt is sliced and decoded only when something reads it: a hook with 5,000 memories ranks about
250 of them, and copying the other 4,750 cost more than the rest of the load.

The file is read as untrusted: through safefs (no symlink, no FIFO, at most MAX_BYTES), cut with bytes
methods (no pickle, no marshal), an entry that fails to parse is read from its file. A planted entry
can make the hook rank a memory by other words, never inject other text: `refreshed` reads the
selected memories' headers from their files again before they are rendered. Written atomically, not
fsynced (it is a cache), only when an entry changed, and never past MAX_BYTES.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from memdir import constants as C, frontmatter_io, inert, safefs, scan as one_file
from memdir.scan import Header, ScanResult

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

FORMAT = b"memdir-headers 1"
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/headers"
MAX_BYTES = 64 << 20  # about 13,000 real-sized memories; a bigger folder is read file by file, as before
MAX_ENTRIES = 100_000  # the cache stops at MAX_BYTES, about 13,000 memories: a count past this is not one it wrote
LINEAGE_MAX = 4096  # the lineage grows by a write's token per write that numbers new memories; then numbers start over
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its stamp's tick
FIELDS = 12  # rel path, four stamp numbers, name, description, type, problem, number, excerpt offset and length


class CachedHeader(Header):
    """A Header from the cache file: its excerpt stays bytes in the file's data until something reads it."""

    source: bytes = b""
    start: int = 0
    end: int = 0
    text: str | None = None
    number: int = 0
    stamp: bytes = b""  # the file's path and stamp as the cache keeps it: the same stamp, the same header

    def __init__(self, rel_path: str, abs_path: str, mtime: float, name: str | None, description: str | None,
                 type: str | None, problem: str | None, source: bytes, start: int, end: int,  # noqa: A002
                 number: int, stamp: bytes = b"") -> None:
        self.rel_path, self.abs_path, self.mtime = rel_path, abs_path, mtime
        self.name, self.description, self.type, self.problem = name, description, type, problem
        self.source, self.start, self.end, self.text, self.number = source, start, end, None, number
        self.stamp = stamp

    @property  # type: ignore[misc]  # a slot in Header, a lazy property here
    def excerpt(self) -> str:
        if self.text is None:
            # "replace": bytes that are not UTF-8 (a broken file) only change what this memory is ranked on
            self.text = self.source[self.start : self.end].decode("utf-8", "replace")
            self.source = b""
        return self.text

    @excerpt.setter
    def excerpt(self, value: str) -> None:
        self.text = value


_fingerprint: bytes | None = None


def fingerprint() -> bytes:
    """The header reader's identity: its modules' source and the Python version (b"" if unreadable)."""
    global _fingerprint
    if _fingerprint is None:
        h = blake2b(digest_size=8)
        h.update(sys.version.encode())
        try:
            for module in (one_file, frontmatter_io, inert, C, sys.modules[__name__]):
                with open(module.__file__ or "", "rb") as handle:
                    h.update(handle.read())
        except OSError:
            _fingerprint = b""
            return _fingerprint
        _fingerprint = h.hexdigest().encode()
    return _fingerprint


class HeaderCache:
    """One scanned folder's cache: `scan()` serves and refreshes it; `doc` holds each header's number,
    for recall.older_words. A memory keeps its number while its file is unchanged; a new or changed one
    gets the next; numbers start over (under another `lineage`) when most of them are gone."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tag = fingerprint()
        self.token: bytes | None = None  # the file's token once it matches what this scan saw
        self.doc: dict[Header, int] = {}
        self.lines: dict[str, bytes] = {}  # each file's line, not parsed yet
        self.data = b""  # the file: excerpts are read from it at (base + offset)
        self.base = 0
        self._loaded_token = b""
        self.lineage = b""
        self.next = 0  # the number the next new memory gets
        if self.tag:
            self._load()

    def _load(self) -> None:
        """The first line: format, fingerprint, token, lineage, next number, count of lines, where the excerpts start."""
        try:
            data = safefs.read_bytes(self.root, CACHE_FILE, MAX_BYTES)
        except OSError:
            return
        first = data[: data.find(b"\n")].split(b" ")
        if (len(first) != 8 or b" ".join(first[:2]) != FORMAT or first[2] != self.tag
                or not all(f.isdigit() and len(f) <= 12 for f in first[5:]) or int(first[7]) > len(data)
                or int(first[6]) > MAX_ENTRIES):
            return  # MAX_ENTRIES: a planted file of millions of empty lines would cost every prompt its split
        lines = data[: int(first[7])].split(b"\n")
        if len(lines) != int(first[6]) + 2 or lines[-1]:
            return  # the lines' part ends with a newline, and holds as many lines as the first one says
        self._loaded_token, self.lineage, self.next = first[3], first[4], int(first[5])
        self.data, self.base = data, int(first[7])
        for line in lines[1:-1]:
            rel = line[: line.find(b"\t")]
            try:
                self.lines[rel.decode("utf-8", "surrogatepass")] = line
            except UnicodeError:
                continue

    def scan(self, max_lines: int = C.HEADER_SCAN_LINES) -> ScanResult:
        """memdir.scan.scan(root), each unchanged file's header from the cache; the cache rewritten if
        any entry changed."""
        kept: list[tuple[Header, bytes, bytes | None]] = []  # header, its line's fields, a new excerpt
        changed = [False]
        now = time.time_ns()

        def read(path: str, rel: str, dfd: int) -> Header:
            st = os.stat(path.rpartition(os.sep)[2], dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                return one_file.read_header(path, self.root, max_lines, dir_fd=dfd)  # refused as usual
            stamp = b"%d\t%d\t%d\t%d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            line = self.lines.get(rel)
            header: Header | None = None
            if line is not None and max_lines == C.HEADER_SCAN_LINES:
                header = self._parse(line, stamp, path, st.st_mtime)
                if header is not None:
                    kept.append((header, line[: line.rfind(b"\t", 0, line.rfind(b"\t"))], None))  # but the excerpt's place
                    return header
            header = one_file.read_header(path, self.root, max_lines, dir_fd=dfd)
            changed[0] = True
            fields = _encode(header, stamp) if now - st.st_ctime_ns > RACY_NS else None
            if fields is not None:
                kept.append((header, fields, header.excerpt.encode("utf-8", "surrogatepass")))
            return header

        result = one_file.scan_with(self.root, (), read)
        if max_lines == C.HEADER_SCAN_LINES and self.tag:
            self._settle(kept, changed[0] or len(kept) != len(self.lines))
        return result

    def _parse(self, line: bytes, stamp: bytes, path: str, mtime: float) -> CachedHeader | None:
        """The entry as a header when its stamp is `stamp` and every field decodes; else None."""
        if not line.startswith(stamp + b"\t", line.find(b"\t") + 1):
            return None  # the file changed since (or the line is not one this module wrote)
        try:
            parts = line.decode("utf-8", "surrogatepass").split("\t")  # one decode: 5,000 lines per prompt
        except UnicodeError:
            return None
        if len(parts) != FIELDS:  # the rel path holds no tab: parts[1:5] are the stamp checked above
            return None
        texts = [None if p == "-" else p[1:] if p[:1] == "+" else _BAD for p in parts[5:9]]
        number, offset, length = parts[9:12]
        if _BAD in texts or not all(p.isdigit() and p.isascii() and len(p) <= 12 for p in (number, offset, length)):
            return None
        if int(number) >= self.next:
            return None  # a number the file has not given out
        start = self.base + int(offset)
        end = start + int(length)
        if end > len(self.data):
            return None
        return CachedHeader(parts[0], path, mtime, texts[0], texts[1], texts[2], texts[3], self.data, start, end,
                            int(number), line[: line.find(b"\t") + 1 + len(stamp)])

    def _settle(self, kept: list[tuple[Header, bytes, bytes | None]], changed: bool) -> None:
        """Number the headers (writing the file first when it differs from this scan)."""
        numbers = [h.number if isinstance(h, CachedHeader) and excerpt is None else -1 for h, _, excerpt in kept]
        hits = [n for n in numbers if n >= 0]
        if len(set(hits)) != len(hits):  # a number twice: not a file this module wrote
            changed, self.lineage = True, b""
        if changed:
            token = os.urandom(8).hex().encode()
            if not self.lineage or self.next > 2 * len(kept) + 1000 or len(self.lineage) > LINEAGE_MAX:
                self.lineage, self.next, numbers = token, 0, [-1] * len(kept)  # mostly gone: start the numbers over
            elif -1 in numbers:
                # Which write gave out the numbers from here on: two hooks that both saw a change give out the
                # same numbers to different files, and their word indexes must not be mistaken for each other.
                self.lineage += b",%d:%s" % (self.next, token)
            for i, number in enumerate(numbers):
                if number < 0:
                    numbers[i], self.next = self.next, self.next + 1
            if not self._write(kept, numbers, token):
                return
            self._loaded_token = token
        self.token = self._loaded_token
        self.doc = {header: number for (header, _, _), number in zip(kept, numbers, strict=True)}

    def _write(self, kept: list[tuple[Header, bytes, bytes | None]], numbers: list[int], token: bytes) -> bool:
        lines, excerpts, offset = [], [], 0
        for (header, fields, excerpt), number in zip(kept, numbers, strict=True):
            if excerpt is None:  # from the old file: its fields end with its number
                assert isinstance(header, CachedHeader)
                fields = fields[: fields.rfind(b"\t")]
                excerpt = self.data[header.start : header.end] if header.text is None else \
                    header.text.encode("utf-8", "surrogatepass")
            lines.append(b"%s\t%d\t%d\t%d\n" % (fields, number, offset, len(excerpt)))
            excerpts.append(excerpt)
            offset += len(excerpt)
        body = b"".join(lines)
        first = b"%s %s %s %s %d %d " % (FORMAT, self.tag, token, self.lineage, self.next, len(lines))
        first += b"%012d\n" % (len(first) + 13 + len(body))  # where the excerpts start
        data = b"".join([first, body, *excerpts])
        if len(data) > MAX_BYTES:
            return False
        try:
            safefs.write_bytes(self.root, CACHE_FILE, data, durable=False)
        except OSError:
            return False  # a read-only folder: the next prompt reads the files again
        return True

    def refreshed(self, headers: list[Header]) -> list[Header]:
        """`headers` read again from their files (what is rendered is the files' text, never the
        cache's); one that is gone, unreadable or no longer offered is left out."""
        out = []
        for h in headers:
            if not isinstance(h, CachedHeader):
                out.append(h)
                continue
            try:
                fresh = one_file.read_header(h.abs_path, self.root)
            except OSError:
                continue
            if fresh.rel_path == h.rel_path and (fresh.problem is None or fresh.description) and not (
                    fresh.description or "").startswith(C.SUPERSEDED_PREFIX):
                out.append(fresh)
        return out


def _optional(value: str | None) -> bytes:
    return b"-" if value is None else b"+" + value.encode("utf-8", "surrogatepass")


def _encode(header: Header, stamp: bytes) -> bytes | None:
    """The fields of one header's line but the excerpt's place, or None when a field holds what the
    format cannot (a tab or a newline)."""
    fields = (header.rel_path, header.name, header.description, header.type, header.problem)
    if any(f is not None and ("\t" in f or "\n" in f) for f in fields):
        return None
    try:
        return b"\t".join([header.rel_path.encode("utf-8", "surrogatepass"), stamp, *(_optional(f) for f in fields[1:])])
    except UnicodeError:
        return None


_BAD = "\x00not a field this module writes"  # never a field's text: fields hold no NUL (inert.one_line)
