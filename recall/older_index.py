"""Which memories have a word starting with a stem, kept between prompts by the warm recall server.

`manifest.older_matches` tests every older memory's text for each of the query's stems: linear in the
folder, about 40 bare Python starts at 20,000 real-sized memories (issue 26). The server sees the same
memories prompt after prompt, so it keeps their words instead: word -> the memories holding it, and
the words grouped by their first three bytes (a stem is at least three letters long), so a stem's
memories are a union of a few postings lists. The answer is exactly the linear test's: a memory matches
when one of its `words_only` words starts with the stem, which is what `b" " + stem in text` tests.

Memories are Header objects, kept by identity: the scan hands back the same object for an unchanged
file (memdir.scan's cache), and a new object for an edited one. An edited or deleted memory's entries
stay in the lists until the index is rebuilt (when they outnumber the live ones); a lookup only ever
counts the memories it is asked about, so a stale entry is never a match.
"""

from __future__ import annotations

import math
import threading

from memdir.scan import Header

TYPE_CHECKING = False  # typing's import is not free, and the prompt hook imports this module
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

PREFIX = 3  # manifest.older_matches only looks up stems of at least this many letters


class OlderIndex:
    def __init__(self) -> None:
        self.ids: dict[Header, int] = {}  # each memory indexed, by identity, and its number here
        self.headers: list[Header] = []  # by number
        self.mtimes: list[float] = []  # by number
        self.mtime_array: Any = ()  # the same as a numpy array, for best()
        self.postings: dict[bytes, list[int]] = {}  # word -> the numbers of the memories holding it
        self.by_prefix: dict[bytes, set[bytes]] = {}
        self.arrays: dict = {}  # word -> its postings as a numpy array (best()), dropped when the list grows
        self.lock = threading.Lock()  # the server answers prompts on several threads

    @property
    def indexed(self) -> set[Header]:
        return set(self.ids)

    def matches(self, stems: list[bytes], older: list[Header], words_of) -> dict[bytes, list[int]]:
        """Per stem, the positions in `older` of the memories with a word starting with it, ascending.
        `words_of(header)`: the header's text as `words_only` bytes (for memories not indexed yet)."""
        with self.lock:
            self._add_missing(older, words_of)
            position = {self.ids[h]: i for i, h in enumerate(older)}
            out: dict[bytes, list[int]] = {}
            for stem in stems:
                found: set[int] = set()
                for word in self._words(stem):
                    found.update(position[d] for d in self.postings[word] if d in position)
                out[stem] = sorted(found)
            return out

    def best(self, stems: list[bytes], older: list[Header], words_of, limit: int) -> list[Header] | None:
        """`manifest.older_matches`' answer, the same memories in the same order, with numpy's arrays
        instead of a Python loop over every matching memory (about 50 ms at 20,000 real-sized memories,
        where the query's common words match most of them). `stems`: in the order the linear scoring
        adds them (its float sums, and so its ties, are the same). None when numpy is not installed."""
        try:
            import numpy as np
        except ImportError:
            return None
        with self.lock:
            self._add_missing(older, words_of)
            total = len(older)
            ids = np.fromiter(map(self.ids.__getitem__, older), dtype=np.int64, count=total)
            position = np.full(len(self.headers), -1, dtype=np.int64)
            position[ids] = np.arange(total)
            scores = np.zeros(total)
            first = np.full(total, len(stems))  # the first stem that matched: the linear scoring's insertion order
            for k, stem in enumerate(stems):
                arrays = [self._array(word, np) for word in self._words(stem)]
                if not arrays:
                    continue
                held = np.zeros(total, dtype=bool)  # a mask, not np.unique: several times faster here
                found = position[np.concatenate(arrays)]
                held[found[found >= 0]] = True
                docs = np.flatnonzero(held)
                if not docs.size:
                    continue
                scores[docs] += math.log(1 + (total - docs.size + 0.5) / (docs.size + 0.5))
                first[docs] = np.minimum(first[docs], k)
            hit = np.flatnonzero(first < len(stems))
            if len(self.mtime_array) != len(self.mtimes):
                self.mtime_array = np.asarray(self.mtimes)
            mtimes = self.mtime_array[ids[hit]]
            # nlargest by (score, mtime), ties kept in the linear scoring's insertion order (first stem, position)
            order = np.lexsort((hit, first[hit], -mtimes, -scores[hit]))[:limit]
            return [older[i] for i in hit[order].tolist()]

    def _array(self, word: bytes, np):
        """The word's postings as an array, made once per change of the list."""
        array = self.arrays.get(word)
        if array is None:
            array = self.arrays[word] = np.asarray(self.postings[word], dtype=np.int64)
        return array

    def _words(self, stem: bytes) -> list[bytes]:
        return [word for word in self.by_prefix.get(stem[:PREFIX], ()) if word.startswith(stem)]

    def _add_missing(self, headers: list[Header], words_of) -> None:
        ids = self.ids
        missing: Iterable[Header] = set(headers).difference(ids)  # in C: this runs on every prompt
        if not missing:
            return
        if len(ids) > 2 * len(headers) + 1000:  # mostly edited or deleted memories: start over
            self.postings.clear()
            self.arrays.clear()
            self.by_prefix.clear()
            ids.clear()
            self.headers.clear()
            self.mtimes.clear()
            self.mtime_array = ()
            missing = headers
        for header in missing:
            number = len(self.headers)
            for word in set(words_of(header).split()):
                listed = self.postings.get(word)
                if listed is None:
                    self.postings[word] = listed = []
                    self.by_prefix.setdefault(word[:PREFIX], set()).add(word)
                listed.append(number)
                self.arrays.pop(word, None)
            ids[header] = number
            self.headers.append(header)
            self.mtimes.append(header.mtime)
