"""Every memory's ranking tokens, packed small and made in the background: the warm recall server's (issue 26).

At 20,000 memories each prompt's pool holds 50 older matches the server has mostly never ranked, and
tokenising them (recall.lexical.document_tokens, about 0.6 ms for a real-sized memory) was the largest
part of its answer. As objects a memory's tokens take about 46 KB (two dicts of some 350 words), so
the server cannot keep a big folder's; packed, they take about 2.2 KB: the ids of its words as
written (in order, against one vocabulary per server) and their weighted counts, its n-gram count,
its name's stems and its related words. Everything else `DocTokens` holds follows from those and
the type, which is part of the entry's key: a stem's count is the sum of its words' counts, in the
order of their first appearance, as `document_tokens` counts them. Unpacking one costs about a tenth of tokenising it.

After each answer a background thread packs the memories of the folder not packed yet, at background
priority, and gives way while a prompt is being answered. The pack is keyed by the exact text ranked
(the same fields as recall.manifest.ranker), so an edited memory is tokenised afresh, never ranked
from stale tokens; entries of texts the folder no longer holds are dropped when they pile up.
It lives in the server's memory only: nothing is read from or written to disk.
"""

from __future__ import annotations

import threading
import time
from array import array
from sys import getsizeof

from memdir import constants as C
from memdir.stages.recall.lexical import DocTokens, _stem_cache, document_tokens, stem
from memdir.stages.recall.manifest import fields_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

Fields = tuple[str, str, str, str]  # name, description, type, body as scanned (recall.manifest.ranker)
HEAD = 5  # written, names, related, n-gram count, bytes per count


class TokenPack:
    """Packed tokens by the exact fields ranked, with the vocabulary their ids point into."""

    def __init__(self, max_bytes: int = C.TOKEN_PACK_MAX_BYTES, max_words: int = C.TOKEN_CACHE_MAX_WORDS) -> None:
        self.max_bytes, self.max_words = max_bytes, max_words
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        self.packed: dict[Fields, bytes] = {}
        self.size = 0
        self.full = False  # a memory did not fit: no more are packed (nor their words added) until some are dropped
        self.lock = threading.Lock()

    def get(self, fields: Fields) -> DocTokens | None:
        with self.lock:
            data = self.packed.get(fields)
            words = self.words
        return unpack(data, words, fields[2]) if data is not None else None

    def put(self, fields: Fields, tokens: DocTokens) -> None:
        with self.lock:
            if fields in self.packed or self.full:
                return
            if len(self.words) > self.max_words:  # the vocabulary only grows: start over
                self._clear()
            data = pack(tokens, self.ids, self.words)
            if self.size + _cost(fields, data) > self.max_bytes:
                # full: the rest is tokenised when a prompt asks, as before. Packing them anyway grew the vocabulary
                # with words never kept, until it started over and dropped the whole pack.
                self.full = True
                return
            self.packed[fields] = data
            self.size += _cost(fields, data)

    def keep_only(self, live: set[Fields]) -> None:
        """Drop the entries of texts no longer in the folder (edited or deleted memories)."""
        with self.lock:
            for fields in [f for f in self.packed if f not in live]:
                self.size -= _cost(fields, self.packed.pop(fields))
                self.full = False

    def missing(self, wanted: Sequence[Fields]) -> list[Fields]:
        with self.lock:
            return [f for f in wanted if f not in self.packed]

    def _clear(self) -> None:
        self.ids, self.words, self.packed, self.size, self.full = {}, [], {}, 0, False


def _cost(fields: Fields, data: bytes) -> int:
    """What an entry holds: its packed tokens and the texts it is keyed by. Those are the folder view's own strings
    while the memory is live, but an edited memory's old texts stay until its entry is dropped (about 2.2 KB a
    real-sized memory, more than its packed tokens): counted, so max_bytes bounds them too. Counted as the bytes
    CPython keeps them in (`len` counted characters: a Korean text takes 2 bytes each, an emoji's text 4)."""
    return len(data) + sum(map(getsizeof, fields))


def pack(tokens: DocTokens, ids: dict[str, int], words: list[str]) -> bytes:
    """One memory's tokens as bytes; new words are added to `ids` and `words`."""
    def id_of(word: str) -> int:
        found = ids.get(word)
        if found is None:
            found = ids[word] = len(words)
            words.append(word)
        return found

    counts = list(tokens.written.values())
    wide = max(counts, default=0) >= 1 << 16
    head = [len(tokens.written), len(tokens.names), len(tokens.related), tokens.gram_length, 4 if wide else 2]
    code = "Q" if tokens.gram_length >= 1 << 32 else "I"  # ids never pass 2**32; a huge count might
    refs = array(code, head)
    refs.extend(map(id_of, tokens.written))
    refs.extend(map(id_of, sorted(tokens.names)))
    refs.extend(map(id_of, sorted(tokens.related)))
    return code.encode() + refs.tobytes() + array("I" if wide else "H", counts).tobytes()


def unpack(data: bytes, words: list[str], kind: str) -> DocTokens:
    """The DocTokens `pack` was given for a memory of type `kind`: the same words, counts and order."""
    code = chr(data[0])
    size = array(code).itemsize
    head = array(code, data[1 : 1 + HEAD * size])
    n_written, n_names, n_related, gram_length, count_size = head
    ends = 1 + (HEAD + n_written + n_names + n_related) * size
    refs = array(code, data[1 + HEAD * size : ends])
    counts = array("I" if count_size == 4 else "H", data[ends:])
    written = dict(zip([words[i] for i in refs[:n_written]], counts, strict=True))
    counted: dict[str, int] = {}
    stem_of = _stem_cache.get  # as document_tokens: most words are stemmed already (a third of an unpack)
    for word, times in written.items():
        s = stem_of(word) or stem(word)
        counted[s] = counted.get(s, 0) + times
    names = {words[i] for i in refs[n_written : n_written + n_names]}
    related = {words[i] for i in refs[n_written + n_names :]}
    for word in sorted(related):
        counted[word] = counted.get(word, 0) + 1
    if kind:  # as document_tokens counts the type
        counted[kind] = counted.get(kind, 0) + 1
    return DocTokens(counted, written, gram_length, names, related)


class Packer:
    """The background thread that packs every memory of the folder last asked about, giving way while
    `busy()` says a prompt is being answered."""

    def __init__(self, store: TokenPack, busy: Callable[[], bool]) -> None:
        self.store, self.busy = store, busy
        self.wanted: list | None = None  # headers (memdir.scan.Header), newest first
        self.done: list | None = None  # the last list packed whole: the watched view hands back the same list
        self.folders: dict[str, set[Fields]] = {}  # the texts of the folders asked about lately, oldest first
        self.wake = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self._work, daemon=True, name="memdir-token-pack").start()

    def want(self, headers: list) -> None:
        """Pack these memories (a folder's, as offered) when the server is idle."""
        with self.lock:
            if headers is self.done or headers is self.wanted:
                return
            self.wanted = headers
        self.wake.set()

    def _work(self) -> None:
        from memdir.stages.recall.server_dense import background_priority

        background_priority()
        while True:
            self.wake.wait()
            with self.lock:
                self.wake.clear()
                headers, self.wanted = self.wanted, None
            if headers is None:
                continue
            try:
                if self._fill(headers):
                    self.done = headers
            except Exception:  # noqa: BLE001 - a bad memory must not stop the thread; prompts tokenise it themselves
                pass

    def _fill(self, headers: list) -> bool:
        """True when every memory is packed (or the pack is full), False when a newer list came first."""
        wanted = [fields_of(h) for h in headers]
        live = self._live(headers, wanted)
        if len(self.store.packed) > 2 * len(live):
            self.store.keep_only(live)
        for fields in self.store.missing(wanted):
            if self.store.full:
                break  # tokenising the rest would keep nothing
            if self.wake.is_set():
                return False  # a newer list (the folder changed, or another folder): that one first
            while self.busy():
                time.sleep(C.TOKEN_PACK_GIVE_WAY_S)
            self.store.put(fields, document_tokens(*fields))
        return True

    def _live(self, headers: list, wanted: list[Fields]) -> set[Fields]:
        """The texts of the last TOKEN_PACK_FOLDERS folders asked about, this one's as it is now. One server
        answers every project of a user: keeping only this folder's dropped the other project's pack, packed
        again at each switch between them (about 12 s of CPU at 20,000 memories)."""
        folder = headers[0].abs_path[: len(headers[0].abs_path) - len(headers[0].rel_path)] if headers else ""
        self.folders.pop(folder, None)
        self.folders[folder] = set(wanted)
        while len(self.folders) > C.TOKEN_PACK_FOLDERS:
            del self.folders[next(iter(self.folders))]
        return set().union(*self.folders.values())
