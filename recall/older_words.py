"""Which older memories have a word starting with a stem, from an index kept on disk (issue 26).

`manifest.older_matches` tests every older memory's text for each of the prompt's stems. The warm
server keeps the words in memory (recall.older_index); a prompt hook with the server down is a new
process each time, and at 5,000 memories that test (with reading every text) was most of its time.
This keeps, in `<memory>/.memdir/cache/older-words`, every memory's `words_only` words -> the memories
holding them, the memories numbered as memdir.header_cache's file lists them and tied to that file's
token: when the header cache is rewritten (a memory changed), the index is built again from the
headers, once, by the first prompt that needs it. A lookup decodes only the postings of the words
starting with a stem (the vocabulary is sorted), so it costs about the same at any folder size.

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
            encoded = self.postings[k]
            if encoded[:1] not in (b"H", b"I"):
                raise Broken
            numbers = array(encoded[:1].decode())
            try:
                numbers.frombytes(binascii.a2b_base64(encoded[1:], strict_mode=True))
            except (ValueError, binascii.Error):
                raise Broken from None
            if max(numbers, default=0) >= len(self.cache.doc):
                raise Broken  # a number past every memory: not a file this module wrote
            yield from numbers
            k += 1

    def _ready(self, words_of) -> bool:
        if self.state == "new":
            token, tag = self.cache.token, _fingerprint()
            if token is None or not tag:
                self.state = "unusable"
            else:
                first = b"%s %s %s" % (FORMAT, tag, token)
                self.state = "ready" if self._load(first) or self._build(first, words_of) else "unusable"
        return self.state == "ready"

    def _load(self, first: bytes) -> bool:
        try:
            data = safefs.read_bytes(self.cache.root, CACHE_FILE, MAX_BYTES)
        except OSError:
            return False
        lines = data.split(b"\n")
        if len(lines) < 2 or lines[0] != first:
            return False
        vocabulary = lines[1].split(b" ") if lines[1] else []
        if len(lines) != len(vocabulary) + 2 or any(a >= b for a, b in zip(vocabulary, vocabulary[1:], strict=False)):
            return False
        self.vocabulary, self.postings = vocabulary, lines[2:]
        return True

    def _build(self, first: bytes, words_of) -> bool:
        """Every numbered memory's words, from the headers (their excerpts decoded once here)."""
        holders: dict[bytes, list[int]] = {}
        for header, number in self.cache.doc.items():
            for word in set(words_of(header).split()):
                listed = holders.get(word)
                if listed is None:
                    holders[word] = [number]
                else:
                    listed.append(number)
        code = "H" if len(self.cache.doc) < 1 << 16 else "I"
        vocabulary = sorted(holders)
        postings = [code.encode() + binascii.b2a_base64(array(code, sorted(holders[w])).tobytes(), newline=False)
                    for w in vocabulary]
        self.vocabulary, self.postings = vocabulary, postings
        data = b"\n".join([first, b" ".join(vocabulary), *postings])
        if len(data) <= MAX_BYTES:
            try:
                safefs.write_bytes(self.cache.root, CACHE_FILE, data, durable=False)
            except OSError:
                pass  # a read-only folder: this process still uses what it built
        return True
