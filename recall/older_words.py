"""Which older memories have a word starting with a stem, from an index kept on disk (issue 26).

`manifest.older_matches` tests every older memory's text for each of the prompt's stems. The warm
server keeps the words in memory (recall.older_index); a prompt hook with the server down is a new
process each time, and at 5,000 memories that test (with reading every text) was most of its time.
This keeps, in `<memory>/.memdir/cache/older-words`, every memory's `words_only` words -> the numbers
of the memories holding them, as memdir.header_cache numbers them (a memory keeps its number while its
file is unchanged; a new or edited one gets the next). The file says which numbers it covers (the
header cache's lineage and next number then): a prompt after memories changed adds only the new
numbers' words; a number whose file changed since stays in the lists but is never asked about. The
lineage names every write that gave out numbers, so an index of numbers another process gave out to
other files (two hooks at once after a change) is not taken for this one: it is built again. A
lookup decodes only the postings of the words starting with a stem (the vocabulary is sorted), so it
costs about the same at any folder size.

The answer is exactly the linear test's: a memory matches when one of its words starts with the stem
(`b" " + stem in b" " + text`); memories the header cache does not number (just changed, or not
representable) are tested on their text, as before. A non-ASCII stem matches anywhere in a word and
is left to the linear test by the caller.

Layout: a first line (format, fingerprint, the header cache's lineage, the count of numbers covered),
the vocabulary (sorted, space-separated), a base64 array of where each word's numbers end, then the
numbers: a native array of unsigned ints per word, back to back, read (os.pread, from the file opened
once) only for the words looked up: they are most of the file (8 of 8.8 MB at 5,000 memories), and
reading them all cost a hook more than the rest of the lookup.

Read as untrusted: through safefs (no symlink, no FIFO, at most MAX_BYTES), bytes and arrays only
(no pickle, no marshal), the vocabulary checked sorted, the ends ascending, whole ints, one per word
and ending with the file; a number past those the header cache gave out makes the lookup fall back
to testing the texts. A planted file that passes the checks can add an older memory to the
candidates or leave one out, as editing the memories could; it never puts text in the answer that a
memory's own file does not hold (memdir.header_cache.refreshed).
"""

from __future__ import annotations

import binascii
import os
import sys
from array import array
from bisect import bisect_left
from itertools import islice, repeat
from operator import ge, gt, mod

from memdir import constants as C, safefs, safefs_write
from memdir.header_cache import HeaderCache
from memdir.scan import Header

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

FORMAT = b"memdir-older-words 1"
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/older-words"
MAX_BYTES = 64 << 20
MAX_WORDS = 1_000_000  # distinct words of every older memory; a real 20,000-memory folder holds about 10% of this
HEAD_READ = 1 << 16  # the first lines are read in steps of this, doubling, until the numbers start


class Broken(Exception):
    """The index file is not one this module wrote: the caller tests the texts instead."""


def _fingerprint() -> bytes:
    """The source of the code deciding a memory's words (manifest.words_only) and of this module."""
    h = blake2b(digest_size=8)
    h.update(f"{sys.byteorder} {array('I').itemsize} {array('Q').itemsize}".encode())  # the arrays are native
    # Imported, not looked up in sys.modules: a test (or a reload) may have dropped the entry while the
    # module stays in use, and an empty fingerprint turns the index off for the rest of the process.
    from memdir.stages.recall import manifest

    for path in (manifest.__file__, __file__):
        try:
            with open(path or "", "rb") as handle:
                h.update(handle.read())
        except OSError:
            return b""
    return h.hexdigest().encode()


class WordIndex:
    """The index of the folder `cache` scanned; built or loaded on the first lookup."""

    def __init__(self, cache: HeaderCache) -> None:
        self.cache = cache
        self.vocabulary: list[bytes] = []
        self.data = b""  # the file as built here, or up to the numbers as read: see _posting
        self.base = 0  # where the numbers start: word k's are at base + ends[k - 1] to base + ends[k]
        self.ends = array("Q")
        self.fd = -1  # the file read, open while its numbers are asked for (closed with this index)
        self.state = "new"  # "new", "ready" or "unusable"
        self.first = b""  # the file's first line, for the folder as the header cache numbers it now

    def matches(self, stems: list[bytes], older: list[Header], words_of) -> dict[bytes, list[int]] | None:
        """Per ASCII stem, the positions in `older` of the memories with a word starting with it,
        ascending; None when there is no usable index (the caller tests every text).
        `words_of(header)`: the header's text as `words_only` bytes."""
        if not self._ready(words_of):
            return None
        # Number -> position, and the positions by number, in C loops: a common stem is held by thousands of memories.
        numbers = list(map(self.cache.doc.get, older))
        position: dict[int | None, int] = dict(zip(numbers, range(len(older)), strict=True))
        missing = [i for i, number in enumerate(numbers) if number is None] if None in position else []
        position.pop(None, None)
        texts = {i: b" " + words_of(older[i]) for i in missing}
        out: dict[bytes, list[int]] = {}
        try:
            for stem in stems:
                found: set[int | None] = set(map(position.get, self._numbers(stem)))
                found.discard(None)
                found.update(i for i, text in texts.items() if b" " + stem in text)
                out[stem] = sorted(found)  # type: ignore[arg-type]  # None was discarded
        except Broken:
            self.state = "unusable"
            return None
        return out

    def _numbers(self, stem: bytes) -> array:
        """The numbers of the memories with a word starting with `stem` (each once per such word)."""
        vocabulary = self.vocabulary
        k = bisect_left(vocabulary, stem)
        numbers = array("I")
        while k < len(vocabulary) and vocabulary[k].startswith(stem):
            numbers.extend(self._posting(k))
            k += 1
        if max(numbers, default=0) >= self.cache.next:
            raise Broken  # a number the header cache never gave out: not a file this module wrote
        return numbers

    def _posting(self, k: int) -> array:
        start, end = self.base + (self.ends[k - 1] if k else 0), self.base + self.ends[k]
        numbers = array("I")
        if self.fd < 0:
            numbers.frombytes(self.data[start:end])
            return numbers
        try:
            numbers.frombytes(os.pread(self.fd, end - start, start))
        except (OSError, ValueError):
            raise Broken from None  # cut short (or replaced in place) since it was read: test the texts instead
        if len(numbers) * numbers.itemsize != end - start:
            raise Broken
        return numbers

    def __del__(self) -> None:
        self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _ready(self, words_of) -> bool:
        if self.state == "new":
            self.state = "unusable"
            cache, tag = self.cache, _fingerprint()
            if cache.token is not None and tag:
                self.first = b"%s %s %s %d" % (FORMAT, tag, cache.lineage, cache.next)
                covered = self._load(tag)
                if covered is None:
                    covered, self.vocabulary, self.ends = 0, [], array("Q")
                new = sorted((n, h) for h, n in cache.doc.items() if n >= covered) if covered < cache.next else []
                try:
                    if new or covered != cache.next:
                        self._extend(new, words_of)
                        self._save()
                    self.state = "ready"
                except Broken:
                    pass
        return self.state == "ready"

    def _load(self, tag: bytes) -> int | None:
        """The file's lists and the count of numbers they cover (None: no file of this lineage)."""
        try:
            self.fd = safefs.open_file(self.cache.root, CACHE_FILE)
            data, size = self._head()
        except OSError:
            self._close()
            return None
        covered = self._check_first(data, tag)
        if covered is None or not self._parse(data, size):
            self._close()
            return None
        return covered

    def _head(self) -> tuple[bytes, int]:
        """The file up to where its numbers start (its first three lines), and its size."""
        size = os.fstat(self.fd).st_size
        if size > MAX_BYTES:
            raise OSError("over the read limit")
        step = HEAD_READ
        while True:
            data = os.pread(self.fd, min(step, size), 0)
            lines = data.count(b"\n", 0, len(data))
            if lines >= 3 or len(data) >= size:
                return data, size
            step *= 2

    def _check_first(self, data: bytes, tag: bytes) -> int | None:
        first = data[: data.find(b"\n")].split(b" ")
        lineage = self.cache.lineage
        if (len(first) != 5 or b" ".join(first[:2]) != FORMAT or first[2] != tag
                or not (lineage == first[3] or lineage.startswith(first[3] + b","))  # numbers given out since: fine
                or not first[4].isdigit() or len(first[4]) > 12 or int(first[4]) > self.cache.next):
            return None
        return int(first[4])

    def _parse(self, data: bytes, size: int) -> bool:
        """Take the file's vocabulary line and its line of where each word's numbers end, when they agree
        with each other and with the numbers that follow (a native array of unsigned ints per word, back to
        back, to the end of the file's `size` bytes; `data` holds at least the first three lines)."""
        one = data.find(b"\n")
        two = data.find(b"\n", one + 1)
        three = data.find(b"\n", two + 1)
        if min(one, two, three) < 0:
            return False
        if data.count(b" ", one + 1, two) >= MAX_WORDS:
            return False  # a planted vocabulary of millions of words would cost every prompt its split
        vocabulary = data[one + 1 : two].split(b" ") if two > one + 1 else []
        ends = array("Q")
        try:
            ends.frombytes(binascii.a2b_base64(data[two + 1 : three], strict_mode=True))
        except (ValueError, binascii.Error):
            return False
        item = array("I").itemsize
        # Checked in C (map over operator functions): at 5,000 memories these three were 2 ms as generators.
        if (len(ends) != len(vocabulary) or (ends and ends[-1] != size - three - 1)
                or any(map(ge, vocabulary, islice(vocabulary, 1, None)))
                or any(map(gt, ends, islice(ends, 1, None))) or any(map(mod, ends, repeat(item)))):
            return False
        self.vocabulary, self.data, self.base, self.ends = vocabulary, data, three + 1, ends
        return True

    def _extend(self, new: list[tuple[int, Header]], words_of) -> None:
        """The lists with the words of `new` (number, header), numbers ascending, added."""
        if self.fd >= 0:  # every word's numbers are wanted: read them at once, not word by word
            try:
                numbers = os.pread(self.fd, self.ends[-1] if self.ends else 0, self.base)
            except OSError:
                raise Broken from None
            if len(numbers) != (self.ends[-1] if self.ends else 0):
                raise Broken  # cut short since it was read
            self.data = self.data[: self.base] + numbers
            self._close()
        holders: dict[bytes, array] = {word: self._posting(k) for k, word in enumerate(self.vocabulary)}
        for number, header in new:
            for word in set(words_of(header).split()):
                listed = holders.get(word)
                if listed is None:
                    holders[word] = listed = array("I")
                listed.append(number)
        vocabulary = sorted(holders)
        blobs = [holders[w].tobytes() for w in vocabulary]
        ends, at = array("Q"), 0
        for blob in blobs:
            at += len(blob)
            ends.append(at)
        data = b"\n".join([self.first, b" ".join(vocabulary), binascii.b2a_base64(ends.tobytes(), newline=False),
                           b"".join(blobs)])
        self._close()  # the numbers are all in `data` now
        if not self._parse(data, len(data)):
            raise Broken  # pragma: no cover - what this module writes, it reads back

    def _save(self) -> None:
        if len(self.data) <= MAX_BYTES:
            try:
                safefs_write.write_bytes(self.cache.root, CACHE_FILE, self.data, durable=False)
            except OSError:
                pass  # a read-only folder: this process still uses what it built
