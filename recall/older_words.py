"""Which older memories have a word starting with a stem, from an index kept on disk (issue 26).

`manifest.older_matches` tests every older memory's text for each of the prompt's stems. The warm
server keeps the words in memory (recall.older_index); a prompt hook with the server down is a new
process each time, and at 5,000 memories that test (with reading every text) was most of its time.
This keeps, in `<memory>/.memdir/cache/older-words`, every memory's `words_only` words -> the numbers
of the memories holding them, as memdir.header_cache numbers them (a memory keeps its number while its
file is unchanged; a new or edited one gets the next). The file says which numbers it covers (the
header cache's lineage and next number then): a prompt after memories changed adds only the new
numbers' words; a number whose file changed since stays in the lists but is never asked about. A
lookup decodes only the postings of the words starting with a stem (the vocabulary is sorted), so it
costs about the same at any folder size.

The answer is exactly the linear test's: a memory matches when one of its words starts with the stem
(`b" " + stem in b" " + text`); memories the header cache does not number (just changed, or not
representable) are tested on their text, as before. A non-ASCII stem matches anywhere in a word and
is left to the linear test by the caller.

Read as untrusted: through safefs (no symlink, no FIFO, at most MAX_BYTES), bytes and base64 arrays
only, the vocabulary checked sorted and as long as the postings, every number below the count of
memories; a file that fails a check is not used (the caller tests the texts). A planted file that
passes them can add an older memory to the candidates or leave one out, as editing the memories
could; it never puts text in the answer that a memory's own file does not hold
(memdir.header_cache.refreshed).
"""

from __future__ import annotations

import binascii
import sys
from array import array
from bisect import bisect_left

from memdir import constants as C, safefs
from memdir.header_cache import HeaderCache
from memdir.scan import Header

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

FORMAT = b"memdir-older-words 1"
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/older-words"
MAX_BYTES = 64 << 20


class Broken(Exception):
    """The index file is not one this module wrote: the caller tests the texts instead."""


def _fingerprint() -> bytes:
    """The source of the code deciding a memory's words (manifest.words_only) and of this module."""
    h = blake2b(digest_size=8)
    for name in ("memdir.stages.recall.manifest", __name__):
        module = sys.modules.get(name)
        try:
            with open(getattr(module, "__file__", None) or "", "rb") as handle:
                h.update(handle.read())
        except OSError:
            return b""
    return h.hexdigest().encode()


class WordIndex:
    """The index of the folder `cache` scanned; built or loaded on the first lookup."""

    def __init__(self, cache: HeaderCache) -> None:
        self.cache = cache
        self.vocabulary: list[bytes] = []
        self.postings: list[bytes] = []  # base64 arrays of memory numbers, decoded when looked up
        self.state = "new"  # "new", "ready" or "unusable"

    def matches(self, stems: list[bytes], older: list[Header], words_of) -> dict[bytes, list[int]] | None:
        """Per ASCII stem, the positions in `older` of the memories with a word starting with it,
        ascending; None when there is no usable index (the caller tests every text).
        `words_of(header)`: the header's text as `words_only` bytes."""
        if not self._ready(words_of):
            return None
        position: dict[int, int] = {}
        missing: list[int] = []
        doc = self.cache.doc
        for i, header in enumerate(older):
            number = doc.get(header)
            if number is None:
                missing.append(i)
            else:
                position[number] = i
        texts = {i: b" " + words_of(older[i]) for i in missing}
        out: dict[bytes, list[int]] = {}
        try:
            for stem in stems:
                found = {position[d] for d in self._numbers(stem) if d in position}
                found.update(i for i, text in texts.items() if b" " + stem in text)
                out[stem] = sorted(found)
        except Broken:
            self.state = "unusable"
            return None
        return out

    def _numbers(self, stem: bytes):
        vocabulary = self.vocabulary
        k = bisect_left(vocabulary, stem)
        while k < len(vocabulary) and vocabulary[k].startswith(stem):
            numbers = self._decoded(self.postings[k])
            if max(numbers, default=0) >= self.cache.next:
                raise Broken  # a number the header cache never gave out: not a file this module wrote
            yield from numbers
            k += 1

    @staticmethod
    def _decoded(encoded: bytes) -> array:
        if encoded[:1] != b"I":
            raise Broken
        numbers = array("I")
        try:
            numbers.frombytes(binascii.a2b_base64(encoded[1:], strict_mode=True))
        except (ValueError, binascii.Error):
            raise Broken from None
        return numbers

    def _ready(self, words_of) -> bool:
        if self.state == "new":
            self.state = "unusable"
            cache, tag = self.cache, _fingerprint()
            if cache.token is not None and tag:
                covered = self._load(tag)
                if covered is None:
                    covered, self.vocabulary, self.postings = 0, [], []
                new = sorted((n, h) for h, n in cache.doc.items() if n >= covered)
                if new or covered != cache.next:
                    try:
                        self._extend(new, words_of)
                    except Broken:  # the file's lists do not decode: every memory's words afresh
                        self.vocabulary, self.postings = [], []
                        self._extend(sorted((n, h) for h, n in cache.doc.items()), words_of)
                    self._save(b"%s %s %s %d" % (FORMAT, tag, cache.lineage, cache.next))
                self.state = "ready"
        return self.state == "ready"

    def _load(self, tag: bytes) -> int | None:
        """The file's lists and the count of numbers they cover (None: no file of this lineage)."""
        try:
            data = safefs.read_bytes(self.cache.root, CACHE_FILE, MAX_BYTES)
        except OSError:
            return None
        lines = data.split(b"\n")
        first = lines[0].split(b" ")
        if (len(lines) < 2 or len(first) != 5 or b" ".join(first[:2]) != FORMAT or first[2] != tag
                or first[3] != self.cache.lineage or not first[4].isdigit() or len(first[4]) > 12
                or int(first[4]) > self.cache.next):
            return None
        vocabulary = lines[1].split(b" ") if lines[1] else []
        if len(lines) != len(vocabulary) + 2 or any(a >= b for a, b in zip(vocabulary, vocabulary[1:], strict=False)):
            return None
        self.vocabulary, self.postings = vocabulary, lines[2:]
        return int(first[4])

    def _extend(self, new: list[tuple[int, Header]], words_of) -> None:
        """The lists with the words of `new` (number, header), numbers ascending, added."""
        holders: dict[bytes, array] = {}
        for word, encoded in zip(self.vocabulary, self.postings, strict=True):
            holders[word] = self._decoded(encoded)
        for number, header in new:
            for word in set(words_of(header).split()):
                listed = holders.get(word)
                if listed is None:
                    holders[word] = listed = array("I")
                listed.append(number)
        self.vocabulary = sorted(holders)
        self.postings = [b"I" + binascii.b2a_base64(array("I", holders[w]).tobytes(), newline=False)
                         for w in self.vocabulary]

    def _save(self, first: bytes) -> None:
        data = b"\n".join([first, b" ".join(self.vocabulary), *self.postings])
        if len(data) <= MAX_BYTES:
            try:
                safefs.write_bytes(self.cache.root, CACHE_FILE, data, durable=False)
            except OSError:
                pass  # a read-only folder: this process still uses what it built
