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
which number on) and the next number, which recall.older_words keys its index to, the count of
entries and the length of their lines), then one line per file in the scan's order: rel path, the four
stamp numbers, name, description, type, problem (each `-` for None or `+` and the text); then three
native arrays, one item per entry: its number, whether recall may offer it at all (memdir.scan.
worth_offering) and where its excerpt ends; then the excerpts, as they are.

Only what every prompt needs is read for every memory (issue 26): the lines and the arrays, not the
excerpts (a real 5,000-memory folder's are 22 MB: reading them took 15 ms a prompt). An entry is
matched by the bytes of its path and stamp at the place the scan expects it (the scan visits files in
the order it wrote them); its fields are decoded, and its excerpt read from the file, only when
something reads them: a hook with 5,000 memories ranks about 250 of them.

The file is read as untrusted: through safefs (no symlink, no FIFO, at most HEAD_MAX_BYTES of it
read per prompt, a file past MAX_BYTES not at all), cut with bytes
methods and arrays (no pickle, no marshal), an entry that fails to parse is read from its file when
something reads its fields (and healed when the cache is next written). A planted entry
can make the hook rank a memory by other words, or offer one it would leave out (its flag), never
inject other text: `refreshed` reads the
selected memories' headers from their files again before they are rendered. Written atomically, not
fsynced (it is a cache), only when an entry changed, and never past MAX_BYTES.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from array import array

from memdir import constants as C, frontmatter_io, header_entries, inert, safefs, safefs_write, scan as one_file
from memdir.header_entries import CachedHeader, Entries, decode
from memdir.scan import Header, ScanResult

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

FORMAT = b"memdir-headers 2"
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/headers"
MAX_BYTES = 256 << 20  # about 50,000 real-sized memories (a prompt reads the head and ~250 excerpts of it)
HEAD_MAX_BYTES = 32 << 20  # the first line, the lines and the arrays, which every prompt reads: ~75 MB at 200,000
MAX_ENTRIES = 200_000  # more than MAX_BYTES holds: a count past this is not one it wrote
LINEAGE_MAX = 4096  # the lineage grows by a write's token per write that numbers new memories; then numbers start over
FIRST_MAX = LINEAGE_MAX + 256  # the first line's length at most (a lineage one write past LINEAGE_MAX)
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its stamp's tick
NUMBER, END = array("I"), array("Q")  # the arrays' item types: an entry's number, where its excerpt ends
ENTRY_BYTES = NUMBER.itemsize + 1 + END.itemsize  # per entry in the arrays: number, offer flag, excerpt end


_fingerprint: bytes | None = None


def fingerprint() -> bytes:
    """The header reader's identity: its modules' source, the Python version and the arrays' native
    layout (b"" if unreadable)."""
    global _fingerprint
    if _fingerprint is None:
        h = blake2b(digest_size=8)
        h.update(f"{sys.version} {sys.byteorder} {NUMBER.itemsize} {END.itemsize}".encode())
        try:
            for module in (one_file, frontmatter_io, inert, C, header_entries, sys.modules[__name__]):
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
    gets the next; numbers start over (under another `lineage`) when most of them are gone. `close()`
    when done: the cache file stays open for the excerpts until then."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = root
        self.tag = fingerprint()
        self.token: bytes | None = None  # the file's token once it matches what this scan saw
        self.doc: dict[Header, int] = {}
        self.entries: Entries | None = None
        self._places: dict[bytes, tuple[int, int]] | None = None  # rel path -> (index, line start), when first needed
        self._loaded_token = b""
        self.lineage = b""
        self.next = 0  # the number the next new memory gets
        if self.tag:
            self._load()

    def _load(self) -> None:
        parent, _, name = CACHE_FILE.rpartition("/")
        try:
            with safefs.open_dir(self.root, parent) as dfd:
                handle = os.fdopen(safefs.open_file_at(dfd, name, CACHE_FILE, os.O_RDONLY), "rb")
        except OSError:
            return
        try:
            self.entries = self._read(handle)
        except OSError:
            self.entries = None
        if self.entries is None:
            handle.close()

    def _read(self, handle: BinaryIO) -> Entries | None:
        """The first line: format, fingerprint, token, lineage, next number, count of entries, length of their lines."""
        size = os.fstat(handle.fileno()).st_size
        line = handle.readline(FIRST_MAX)
        first = line[:-1].split(b" ")
        if (size > MAX_BYTES or line[-1:] != b"\n" or len(first) != 8 or b" ".join(first[:2]) != FORMAT
                or first[2] != self.tag or not all(f.isdigit() and len(f) <= 12 for f in first[5:])
                or int(first[6]) > MAX_ENTRIES):
            return None  # MAX_ENTRIES: a planted count of millions would cost every prompt its arrays
        count, length = int(first[6]), int(first[7])
        base = len(line) + length + count * ENTRY_BYTES
        head = handle.read(base - len(line)) if base <= min(size, HEAD_MAX_BYTES) else b""
        lines = head[:length]
        if len(head) != base - len(line) or lines[-1:] != (b"\n" if count else b""):
            return None  # the lines end with a newline and the arrays follow (a line past `count` is never served)
        numbers, ends = array("I"), array("Q")
        numbers.frombytes(head[length : length + count * NUMBER.itemsize])
        offer = head[length + count * NUMBER.itemsize : length + count * (NUMBER.itemsize + 1)]
        ends.frombytes(head[length + count * (NUMBER.itemsize + 1) :])
        if max(numbers, default=-1) >= int(first[5]):
            return None  # a number the file has not given out
        self._loaded_token, self.lineage, self.next = first[3], first[4], int(first[5])
        return Entries(self.root, handle, lines, numbers, offer, ends, base, size)

    def close(self) -> None:
        """Close the cache file: an excerpt not read yet is read from its memory's file."""
        if self.entries is not None:
            self.entries.handle.close()

    def scan(self, max_lines: int = C.HEADER_SCAN_LINES) -> ScanResult:
        """memdir.scan.scan(root), each unchanged file's header from the cache; the cache rewritten if
        any entry changed. Where folders cannot be held open (safefs.BY_DESCRIPTOR false: native Windows) the
        cache is neither read nor written (it reads each file relative to its folder's descriptor): the scan as it is."""
        if not safefs.BY_DESCRIPTOR:
            return one_file.scan(self.root, max_lines=max_lines)
        kept: list[Header] = []
        numbers: list[int] = []  # each kept header's number in the file, -1 for one read now
        new: dict[int, tuple[bytes, bytes]] = {}  # by place in `kept`: the line and excerpt of a header read now
        entries = self.entries if max_lines == C.HEADER_SCAN_LINES else None
        lines = entries.lines if entries is not None else b""
        offer, old = (entries.offer, entries.numbers) if entries is not None else (b"", array("I"))
        expected = at = 0  # the entry the scan expects next and where its line starts
        changed = False
        now = time.time_ns()
        lstat, is_file, sep, served, count = os.stat, stat.S_ISREG, os.sep, CachedHeader, len(old)  # per file: local

        def read(path: str, rel: str, dfd: int | None) -> Header:  # an int: scan_with gives None only without BY_DESCRIPTOR
            nonlocal expected, at, changed
            st = lstat(path.rpartition(sep)[2], dir_fd=dfd, follow_symlinks=False)
            if not is_file(st.st_mode):
                return one_file.read_header(path, self.root, max_lines, dir_fd=dfd)  # refused as usual
            try:
                key = b"%s\t%d\t%d\t%d\t%d\t" % (rel.encode("utf-8", "surrogatepass"), st.st_ino, st.st_size,
                                                 st.st_mtime_ns, st.st_ctime_ns)
            except UnicodeError:  # pragma: no cover - surrogatepass encodes what the file system decodes
                key = b""
            if entries is not None and key:
                i, start = expected, at
                if not lines.startswith(key, start):  # not where the last scan had it: moved, new or changed
                    i, start = self._place(key)
                    changed = changed or start >= 0  # written again in this scan's order, so that the next one finds it in place
                if start >= 0 and i < count:
                    end = lines.find(b"\n", start)
                    expected, at = i + 1, end + 1
                    header: Header = served(rel, path, st.st_mtime, entries, start, end, i, offer[i] != 0, key[:-1])
                    kept.append(header)
                    numbers.append(old[i])
                    return header
            header = one_file.read_header(path, self.root, max_lines, dir_fd=dfd)
            line = _encode(header, key[:-1]) if key and now - st.st_ctime_ns > RACY_NS else None
            # One not kept (changed within RACY_NS, or a field the format cannot hold) leaves a file that holds
            # entries as it was: written again, it cost every prompt every excerpt read and the whole file written.
            changed = changed or line is not None or entries is None
            if line is not None:
                new[len(kept)] = (line, header.excerpt.encode("utf-8", "surrogatepass"))
                kept.append(header)
                numbers.append(-1)
            return header

        result = one_file.scan_with(self.root, (), read)
        if max_lines == C.HEADER_SCAN_LINES and self.tag:
            self._settle(kept, numbers, new, changed or len(kept) != count)
        return result

    def _place(self, key: bytes) -> tuple[int, int]:
        """(index, line start) of the entry starting with `key` (a rel path and stamp), (-1, -1) if none."""
        assert self.entries is not None
        lines = self.entries.lines
        if self._places is None:
            self._places, at = {}, 0
            for i, line in enumerate(lines.split(b"\n")[:-1]):
                self._places[line[: line.find(b"\t")]] = (i, at)
                at += len(line) + 1
        place = self._places.get(key[: key.find(b"\t")], (-1, -1))
        return place if place[1] >= 0 and lines.startswith(key, place[1]) else (-1, -1)

    def _settle(self, kept: list[Header], numbers: list[int], new: dict[int, tuple[bytes, bytes]],
                changed: bool) -> None:
        """Number the headers (writing the file first when it differs from this scan); `numbers`: each
        one's number in the file, -1 for one read now (`new`: its line and excerpt, by its place)."""
        hits = [n for n in numbers if n >= 0] if -1 in numbers else numbers
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
            if not self._write(kept, numbers, new, token):
                return
            self._loaded_token = token
        self.token = self._loaded_token
        self.doc = dict(zip(kept, numbers, strict=True))

    def _write(self, kept: list[Header], numbers: list[int], new: dict[int, tuple[bytes, bytes]], token: bytes) -> bool:
        lines, excerpts, offer, written = [], [], bytearray(), array("I")
        ends, at = array("Q"), 0
        if self.entries is not None and len(new) < len(kept):
            self.entries.read_all()
        for place, (header, number) in enumerate(zip(kept, numbers, strict=True)):
            if place in new:
                line, excerpt = new[place]
                offered = one_file.worth_offering(header.problem, header.description)
            else:
                assert isinstance(header, CachedHeader)
                maybe, excerpt, offered = _as_written(header)
                if maybe is None:
                    continue  # its file holds what the format cannot: read every time
                line = maybe
            lines.append(line + b"\n")
            excerpts.append(excerpt)
            offer.append(offered)
            written.append(number)
            at += len(excerpt)
            ends.append(at)
        body = b"".join(lines)
        first = b"%s %s %s %s %d %d %d\n" % (FORMAT, self.tag, token, self.lineage, self.next, len(lines), len(body))
        data = b"".join([first, body, written.tobytes(), bytes(offer), ends.tobytes(), *excerpts])
        if (len(data) > MAX_BYTES or len(first) > FIRST_MAX
                or len(first) + len(body) + len(lines) * ENTRY_BYTES > HEAD_MAX_BYTES):
            return False
        try:
            safefs_write.write_bytes(self.root, CACHE_FILE, data, durable=False)
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
            if fresh.rel_path == h.rel_path and one_file.worth_offering(fresh.problem, fresh.description):
                out.append(fresh)
        return out


def _as_written(header: CachedHeader) -> tuple[bytes | None, bytes, bool]:
    """A kept entry's line, excerpt and offer flag for the next file: as they are in this one, or (when
    they are not as this module writes them) as its file says now (line None: not representable)."""
    entries = header.entries
    assert entries is not None
    line = entries.lines[header.at : header.end]
    fields = decode(line)
    excerpt = entries.excerpt(header.index)
    if fields is not None and excerpt is not None:
        return line, excerpt, one_file.worth_offering(fields[3], fields[1])
    header.parsed = header.text = None
    header._from_file()
    return (_encode(header, header.stamp), header.excerpt.encode("utf-8", "surrogatepass"),
            one_file.worth_offering(header.problem, header.description))


def _optional(value: str | None) -> bytes:
    return b"-" if value is None else b"+" + value.encode("utf-8", "surrogatepass")


def _encode(header: Header, prefix: bytes) -> bytes | None:
    """One header's line, after `prefix` (its rel path and stamp), or None when a field holds what the
    format cannot (a tab or a newline)."""
    fields = (header.name, header.description, header.type, header.problem)
    if any(f is not None and ("\t" in f or "\n" in f) for f in (header.rel_path, *fields)):
        return None
    try:
        return b"\t".join([prefix, *(_optional(f) for f in fields)])
    except UnicodeError:
        return None

