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

import threading

from memdir.scan import Header

PREFIX = 3  # manifest.older_matches only looks up stems of at least this many letters


class OlderIndex:
    def __init__(self) -> None:
        self.postings: dict[bytes, list[Header]] = {}
        self.by_prefix: dict[bytes, set[bytes]] = {}
        self.indexed: set[Header] = set()
        self.lock = threading.Lock()  # the server answers prompts on several threads

    def matches(self, stems: list[bytes], older: list[Header], words_of) -> dict[bytes, list[int]]:
        """Per stem, the positions in `older` of the memories with a word starting with it, ascending.
        `words_of(header)`: the header's text as `words_only` bytes (for memories not indexed yet)."""
        with self.lock:
            self._add_missing(older, words_of)
            position = {h: i for i, h in enumerate(older)}
            out: dict[bytes, list[int]] = {}
            for stem in stems:
                found: set[int] = set()
                for word in self.by_prefix.get(stem[:PREFIX], ()):
                    if word.startswith(stem):
                        found.update(position[h] for h in self.postings[word] if h in position)
                out[stem] = sorted(found)
            return out

    def _add_missing(self, headers: list[Header], words_of) -> None:
        missing = [h for h in headers if h not in self.indexed]
        if not missing:
            return
        if len(self.indexed) > 2 * len(headers) + 1000:  # mostly edited or deleted memories: start over
            self.postings.clear()
            self.by_prefix.clear()
            self.indexed.clear()
            missing = headers
        for header in missing:
            for word in set(words_of(header).split()):
                listed = self.postings.get(word)
                if listed is None:
                    self.postings[word] = listed = []
                    self.by_prefix.setdefault(word[:PREFIX], set()).add(word)
                listed.append(header)
            self.indexed.add(header)
