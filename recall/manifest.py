"""Which memories the selector gets to see, and how each is listed (SPEC §4).

Claude Code shows the selector only the newest 200 files, so an old but relevant memory can never
be recalled. memdir lists the newest 200 plus the best lexical matches among the older ones.
"""

from __future__ import annotations

import heapq
import math
import os

from memdir import constants as C
from memdir.scan import Header
from memdir.stages.recall.lexical import DocTokens, Ranker, document_tokens, tokens

TYPE_CHECKING = False  # typing and pathlib cost the prompt hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from memdir.stages.recall.lexical import Corpus
    from memdir.stages.recall.older_index import OlderIndex
    from memdir.stages.recall.older_words import WordIndex
    from memdir.stages.recall.token_pack import Packer, TokenPack

NEWEST = 200
OLDER_MATCHES = 50
# Fewer older memories than this are searched directly: loading the words kept on disk (recall.older_words)
# costs a prompt hook some 5 ms whatever the count, and searching 200 texts about 2 (the same answer).
WORD_INDEX_MIN_OLDER = 200


RANKERS_KEPT = 4
_rankers: dict[tuple, Ranker] = {}


def ranker(headers: list[Header], token_cache: str | os.PathLike | None = None) -> Ranker:
    """Lexical ranking over each memory's name, description, type and the body lines scanned.

    `token_cache`: the memory folder whose `.memdir/cache` keeps the pool's rank index and each memory's
    tokens between processes (recall.rank_index, recall.token_cache): a process that recalls from disk
    builds its Ranker there, fields made only where needed. The warm server (keep_tokens) keeps each
    memory's tokens in memory instead, and its Rankers per exact set of texts: it asks a new set for every
    new prompt (its older matches differ), and building one is most of an offline recall's time.
    """
    if _tokens is None and token_cache is not None:
        return _from_disk(headers, token_cache)  # its own cache is on disk: fields only where it needs them
    fields = tuple(map(fields_of, headers))
    built = _rankers.get(fields)
    if built is None:
        tokenised = _tokens.tokenised(fields, token_cache) if _tokens is not None else None
        built = (Ranker(list(fields), corpus=_corpus(tokenised)) if _corpus is not None and tokenised is not None
                 else Ranker(list(fields), tokenised))
        if len(_rankers) >= RANKERS_KEPT:
            _rankers.pop(next(iter(_rankers)), None)
        _rankers[fields] = built
    return built


def fields_of(header: Header) -> tuple[str, str, str, str]:
    """What is ranked of a memory: its name, description, type and the body lines scanned."""
    return (header.name or "", header.description or "", header.type or "", header.excerpt)


def _from_disk(headers: list[Header], token_cache: str | os.PathLike) -> Ranker:
    """A hook's Ranker: on the folder's rank index where it serves this pool (recall.rank_index), else
    on every memory's tokens from the token cache."""
    from memdir.stages.recall.rank_index import corpus_for

    built, fields = corpus_for(token_cache, headers, fields_of)
    return Ranker(fields, built) if isinstance(built, list) else Ranker(fields, corpus=built)


def _cached_tokens(fields: Sequence[tuple[str, str, str, str]], token_cache: str | os.PathLike | None) -> list[DocTokens] | None:
    if token_cache is None:
        return None
    from memdir.stages.recall.token_cache import tokenised

    return tokenised(token_cache, fields)


class KeptTokens:
    """Each memory's tokens by its exact fields, the most recently ranked TOKENS_KEPT of them (the warm
    server's). Without it every new prompt read and parsed the folder's 3.5 MB token file again for the
    memories its pool had not held before, and wrote it again (about 40 ms at 20,000 memories, issue 26).
    The file is read once per folder; what this server tokenises is written to it by `save`, which the
    server calls after replying, so hooks answering without a server still find it."""

    def __init__(self, limit: int = C.TOKENS_KEPT) -> None:
        self.limit = limit
        self.kept: dict[tuple, DocTokens] = {}
        self.read: set[str] = set()  # the folders whose token file was read
        self.unsaved: dict[str, dict[tuple, DocTokens]] = {}  # per folder: tokenised here, not in its file yet
        import threading  # the warm server's only: a hook process never keeps tokens

        self.lock = threading.Lock()  # the server answers prompts on several threads

    def tokenised(self, fields: tuple, token_cache: str | os.PathLike | None) -> list[DocTokens]:
        folder = str(token_cache) if token_cache is not None else None
        with self.lock:
            found = [self.kept.pop(f, None) for f in fields]  # popped, then put back last: most recent
            missing = list(dict.fromkeys(f for f, tokens in zip(fields, found, strict=True) if tokens is None))
            first = folder is not None and folder not in self.read
            if folder is not None:
                self.read.add(folder)
        fresh = _cached_tokens(missing, token_cache) if missing and first else None
        made = dict(zip(missing, fresh if fresh is not None else [_tokenise(f) for f in missing], strict=True))
        out = [tokens if tokens is not None else made[f] for f, tokens in zip(fields, found, strict=True)]
        with self.lock:
            if folder is not None and not first and made:
                self.unsaved.setdefault(folder, {}).update(made)
            self.kept.update(zip(fields, out, strict=True))
            while len(self.kept) > self.limit:
                self.kept.pop(next(iter(self.kept)))
        return out

    def save(self) -> None:
        """Write what was tokenised since the last save to each folder's token file."""
        from pathlib import Path

        from memdir.stages.recall.token_cache import store

        with self.lock:
            unsaved, self.unsaved = self.unsaved, {}
        for folder, made in unsaved.items():
            store(Path(folder), made)


def _tokenise(fields: tuple[str, str, str, str]) -> DocTokens:
    """From the server's pack when it holds them (recall.token_pack), else tokenised now (and packed)."""
    if _pack is None:
        return document_tokens(*fields)
    tokens = _pack.get(fields)
    if tokens is None:
        tokens = document_tokens(*fields)
        _pack.put(fields, tokens)
    return tokens


_tokens: KeptTokens | None = None
_pack: TokenPack | None = None  # the warm server's every memory's tokens, packed (keep_token_pack)
_packer: Packer | None = None


_corpus: Callable[[list[DocTokens]], Corpus] | None = None  # the warm server's corpus maker (keep_corpus)


def keep_corpus(make: Callable[[list[DocTokens]], Corpus]) -> None:
    """Build each Ranker on `make(tokens)`: the warm server's corpus (recall.server_rank), the same numbers."""
    global _corpus
    _corpus = make


def keep_tokens() -> None:
    """Keep each ranked memory's tokens between calls (the warm recall server: KeptTokens)."""
    global _tokens
    if _tokens is None:
        _tokens = KeptTokens()


def keep_token_pack(busy: Callable[[], bool]) -> None:
    """Pack every memory of the folders asked about in the background (the warm recall server: recall.token_pack),
    giving way while `busy()` says a prompt is being answered."""
    global _pack, _packer
    if _pack is None:
        from memdir.stages.recall.token_pack import Packer, TokenPack

        _pack = TokenPack()
        _packer = Packer(_pack, busy)


def save_kept_tokens() -> None:
    """The tokens kept since the last call written to their folders' token files (after a reply)."""
    if _tokens is not None:
        _tokens.save()


_offered: tuple = (None, (), [])  # the last headers list seen (by identity), its ends, its memories worth offering


def offered(headers: list[Header]) -> list[Header]:
    """The memories worth offering at all, in order: kept for the very same list (the warm server's
    watched view hands back the same list while nothing changes; 30 ms at 20,000 memories). A scan's
    list is never changed in place; its length and ends are checked all the same."""
    global _offered
    ends = (len(headers), headers[0], headers[-1]) if headers else (0,)
    last = _offered  # one read: the server's threads replace the tuple whole, never its parts
    if last[0] is headers and last[1] == ends:  # Header equality is identity
        return last[2]
    # memdir.scan.worth_offering, kept by the header cache in each entry: a prompt hook decodes no header for it.
    kept = [h for h in headers if h.offer]
    _offered = (headers, ends, kept)
    return kept


def candidates(headers: list[Header], query: str, surfaced: frozenset[str] | set[str] = frozenset(),
               words: WordIndex | None = None) -> list[Header]:
    """Unsurfaced memories: the newest NEWEST (headers come newest first) plus older lexical matches.
    `words`: the folder's words kept on disk (recall.older_words; the prompt hook's), same answer."""
    fresh = offered(headers)
    if _packer is not None and len(fresh) > NEWEST:  # the older memories a prompt may pick are packed ahead
        _packer.want(fresh)
    if surfaced:
        fresh = [h for h in fresh if h.rel_path not in surfaced]
    newest, older = fresh[:NEWEST], fresh[NEWEST:]
    if not older:
        return newest
    return newest + older_matches(query, older, OLDER_MATCHES, words)


_NOT_WORD = bytes(c for c in range(128) if not chr(c).isalnum())
_WORDS_ONLY = bytes.maketrans(_NOT_WORD, b" " * len(_NOT_WORD))


def words_only(text: str) -> bytes:
    """`text` lowercased, as UTF-8, with every ASCII character that is not a letter or digit made a
    space (non-ASCII bytes kept). On bytes, not `str.translate`: a str holding any non-ASCII
    character (an em dash, a curly quote) takes str.translate's slow path, 100x slower (issue 26), and
    str.lower is slow on it too. bytes.lower lowers ASCII only; İ and the Kelvin sign are the only
    other characters str.lower turns into ASCII, so they are lowered first: the ASCII bytes, the
    only ones a query stem can match, are exactly those of `text.lower()`."""
    if "\u0130" in text or "\u212a" in text:
        text = text.replace("\u0130", "i\u0307").replace("\u212a", "k")  # str.lower's way
    return text.encode("utf-8", "surrogatepass").lower().translate(_WORDS_ONLY)


def older_matches(query: str, older: list[Header], limit: int, words: WordIndex | None = None) -> list[Header]:
    """The older memories sharing the query's rarest words, best first.

    Deliberately cheaper than the offline selector (which ranks the final pool): word-start
    substring tests of the query's stems (C-speed `in` on text normalised by `words_only`),
    weighted by inverse document frequency, so 20,000 files cost about as much as reading their headers.
    """
    # A Chinese or Korean bigram is two characters, in text with no spaces before it (memdir.words).
    stems = {s for s in tokens(query) if len(s) >= 3 or not s.isascii()}
    if not stems:
        return []
    if _index is not None and all(s.isascii() for s in stems):
        ranked = _index.best([s.encode() for s in stems], older, _text_of, limit)
        if ranked is not None:
            return ranked
    docs_of = _docs_by_stem(stems, older, words)
    total = len(older)
    scores: dict[int, float] = {}
    for stem in stems:
        docs = docs_of[stem]
        if not docs:
            continue
        idf = math.log(1 + (total - len(docs) + 0.5) / (len(docs) + 0.5))
        for i in docs:
            scores[i] = scores.get(i, 0.0) + idf
    best = heapq.nlargest(limit, scores.items(), key=lambda pair: (pair[1], older[pair[0]].mtime))
    return [older[i] for i, _ in best]


def _text_of(header: Header) -> bytes:
    return words_only(f"{header.name or ''} {header.description or ''} {header.excerpt}")


_index: OlderIndex | None = None


def keep_word_index() -> None:
    """Keep the older memories' words between calls (the warm recall server: recall.older_index)."""
    global _index
    if _index is None:
        from memdir.stages.recall.older_index import OlderIndex  # the warm server's: threading, and more

        _index = OlderIndex()


def _docs_by_stem(stems: set[str], older: list[Header], words: WordIndex | None = None) -> dict[str, list[int]]:
    """Per stem, the positions in `older` of the memories with a word starting with it, ascending."""
    # A non-ASCII stem (a Chinese or Korean bigram, memdir.words) is matched anywhere: no space precedes it.
    wide = {s for s in stems if not s.isascii()}
    if _index is not None and not wide:
        found = _index.matches([s.encode() for s in stems], older, _text_of)
        return {s: found[s.encode()] for s in stems}
    if words is not None and not wide and len(older) > WORD_INDEX_MIN_OLDER:
        on_disk = words.matches([s.encode() for s in stems], older, _text_of)
        if on_disk is not None:
            return {s: on_disk[s.encode()] for s in stems}
    texts = [b" " + _text_of(h) for h in older]
    # An ASCII stem ([a-z0-9]+) matches at a word start in any UTF-8 text.
    return {s: [i for i, text in enumerate(texts) if (s.encode() if s in wide else b" " + s.encode()) in text]
            for s in stems}


from memdir.manifest import manifest, manifest_line  # noqa: E402,F401  (core: both stages list memories)
