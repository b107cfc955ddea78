"""The prompt hook's rank index: the lexical ranking's postings for a whole pool of memories, read from
one file, instead of every memory's tokens turned back into objects in every hook process (issue 26).

With the recall server down, a prompt hook at 200 memories spent about 30 ms building the Ranker: the
token cache (recall.token_cache) holds each memory's words, and making some 140,000 dict entries out of
them is the floor of that format. A prompt asks about a few dozen terms. This file holds the pool
inverted (per stem and per word as written: the memories holding it, with their counts) next to each
memory's own stems, as flat arrays; loading it makes a few lists, and recall.indexed_corpus decodes only
what a prompt asks about, with the same numbers as recall.lexical.DocCorpus (the same ranking to the float).

The pool changes from prompt to prompt: memories surfaced earlier in the session leave it, older matches
(recall.manifest.older_matches) come and go, a memory is written. The index serves any pool: its memories
the pool no longer holds are masked, and the pool's memories it does not hold come from the token cache
beside it. Past MAX_EXTRA or MAX_MASKED the hook builds the Ranker as before and writes a new index of its pool.
A memory is found in the index by the stamp the header cache served it under (the same stamp, the same
header), else by the digest of its fields (recall.token_cache.digest).

Layout: a line with the format, the tokeniser's and the header reader's fingerprints, the memory count and
the byte order; a line with each section's length; then the sections, raw: the keys, the stamps
(NUL-separated), the stems and the words as written (sorted, tab-joined), and the uint32 arrays of SECTIONS.
Read as untrusted like the token cache: through safefs, bounded by RANK_INDEX_MAX_BYTES (and the pairs read as asked by
RANK_INDEX_PAIRS_MAX_BYTES), ints and strs only
(no pickle, no marshal); offsets must rise from 0 to their section's end, and every other position is
checked where it is used, so a planted or damaged file can at most reorder memories the folder holds, never
add text to what is injected, and costs a prompt at most its size.
"""

from __future__ import annotations

import os
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from itertools import accumulate

from memdir import constants as C, safefs, safefs_write
from memdir.stages.recall import token_cache
from memdir.stages.recall.indexed_corpus import IndexedCorpus
from memdir.stages.recall.lexical import DocTokens, cut_grams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from memdir.scan import Header

FORMAT = "memdir-rank-index 2"
INDEX_FILE = f"{C.STATE_DIRNAME}/cache/{C.RANK_INDEX_NAME}"
MAX_EXTRA = 64  # the pool's memories the index lacks (a prompt's older matches are 50)
MAX_MASKED = 64  # the index's memories the pool lacks (surfaced this session, older matches gone)
MAX_UNSTAMPED = 16  # memories found by their text that the header cache now serves by stamp: index them so
# (postings by stem: offsets, documents, counts), (by word), (by character 4-gram), (each memory's stems),
# (its name's stems), (its related words), each word's stem, each memory's word count and n-gram count
SECTIONS = ("stem_at", "stem_docs", "stem_counts", "word_at", "word_docs", "word_counts", "gram_at", "doc_stems_at",
            "doc_stems", "names_at", "names", "related_at", "related", "word_stem", "lengths", "gram_lengths")
_NONE = memoryview(b"").cast("I")  # an entry refused where it is used
TEXTS = 5  # the raw sections before the arrays: keys, stamps, stems, words, n-grams
# Last, the n-grams' postings as (memory, count) pairs, cut by gram_at: most of the file (an n-gram per four
# letters of every word), of which a prompt asks for a few dozen entries. They are read from the open file
# when asked (os.pread), not with the rest: reading them all cost a hook more than the n-gram scores saved.
PAIR_BYTES = 8
HEAD_BYTES = 4096  # the first two lines (format, fingerprints, count, byte order; the sections' sizes) fit


class RankIndex:
    """A loaded index file: its memories' keys, vocabularies and arrays (`SECTIONS`)."""

    stem_at: memoryview
    stem_docs: memoryview
    stem_counts: memoryview
    word_at: memoryview
    word_docs: memoryview
    word_counts: memoryview
    gram_at: memoryview
    doc_stems_at: memoryview
    doc_stems: memoryview
    names_at: memoryview
    names: memoryview
    related_at: memoryview
    related: memoryview
    word_stem: memoryview
    lengths: memoryview
    gram_lengths: memoryview

    def __init__(self, keys: list[bytes], stamps: list[bytes], stems: list[str], words: list[str],
                 grams: list[str], arrays: dict[str, memoryview], fd: int = -1, pairs_at: int = 0, pairs: int = 0) -> None:
        self.keys, self.stamps, self.stems, self.words, self.grams = keys, stamps, stems, words, grams
        self.n = len(keys)
        for name in SECTIONS:
            setattr(self, name, arrays[name])
        self.fd, self.pairs_at, self.pairs = fd, pairs_at, pairs  # the open file and where its n-gram pairs lie

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def stem_id(self, term: str) -> int:
        i = bisect_left(self.stems, term)
        return i if i < len(self.stems) and self.stems[i] == term else -1

    def gram_id(self, gram: str) -> int:
        i = bisect_left(self.grams, gram)
        return i if i < len(self.grams) and self.grams[i] == gram else -1

    def part(self, at: memoryview, values: memoryview, i: int, limit: int) -> memoryview:
        """Entry `i` of a section (`values` from `at[i]` to `at[i + 1]`), empty when a value in it is not
        below `limit`: the only check a position gets, made where it is used."""
        found = values[at[i]: at[i + 1]]
        return found if not found or max(found) < limit else _NONE

    def postings(self, at: memoryview, docs: memoryview, counts: memoryview, t: int) -> Iterable[tuple[int, int]]:
        """(memory, count) for term number `t` of a postings section."""
        start, end = at[t], at[t + 1]
        found = docs[start:end]
        return zip(found, counts[start:end], strict=True) if not found or max(found) < self.n else ()

    def gram_postings(self, g: int) -> Iterable[tuple[int, int]]:
        """(memory, count) for n-gram number `g`, read from the file; nothing if it cannot be (a file cut short
        since it was opened reads short)."""
        start, end = self.gram_at[g], self.gram_at[g + 1]
        if end <= start or self.fd < 0:
            return ()
        pairs = array("I")
        try:
            pairs.frombytes(os.pread(self.fd, PAIR_BYTES * (end - start), self.pairs_at + PAIR_BYTES * start))
        except (OSError, ValueError):
            return ()
        if len(pairs) != 2 * (end - start):  # cut short, maybe within a pair (one count fewer than memories)
            return ()
        found = pairs[0::2]
        return zip(found, pairs[1::2], strict=True) if max(found) < self.n else ()


def build(keys: Sequence[bytes], stamps: Sequence[bytes], documents: Sequence[DocTokens]) -> bytes | None:
    """The index file's bytes for these memories, or None when a term cannot be stored (a tab or newline)."""
    stems = sorted(set().union(*(d.words for d in documents)))
    words = sorted(set().union(*(d.written for d in documents)))
    if any("\t" in t or "\n" in t or not t for t in (*stems, *words)):
        return None
    stem_pos = {t: i for i, t in enumerate(stems)}
    word_pos = {t: i for i, t in enumerate(words)}
    by_stem: list[list[int]] = [[] for _ in stems]
    by_word: list[list[int]] = [[] for _ in words]
    a: dict[str, list[int]] = {name: [] for name in SECTIONS}
    for name in ("doc_stems_at", "names_at", "related_at"):
        a[name].append(0)
    for doc, d in enumerate(documents):
        for term, count in d.words.items():
            by_stem[stem_pos[term]] += (doc, count)
        for word, count in d.written.items():
            by_word[word_pos[word]] += (doc, count)
        for name, terms in (("doc_stems", d.words), ("names", sorted(d.names)), ("related", sorted(d.related))):
            a[name].extend(stem_pos[t] for t in terms)
            a[name + "_at"].append(len(a[name]))
        a["lengths"].append(sum(d.words.values()))
        a["gram_lengths"].append(d.gram_length)
    for prefix, postings in (("stem", by_stem), ("word", by_word)):
        a[prefix + "_at"] = [0, *accumulate(len(p) // 2 for p in postings)]
        a[prefix + "_docs"] = [doc for p in postings for doc in p[0::2]]
        a[prefix + "_counts"] = [count for p in postings for count in p[1::2]]
    grams, by_gram = _gram_postings(documents)
    a["gram_at"] = [0, *accumulate(len(p) // 2 for p in by_gram)]
    from memdir.words import stem

    a["word_stem"] = [stem_pos.get(stem(w), 0) for w in words]
    try:
        arrays = [array("I", a[name]).tobytes() for name in SECTIONS]
        arrays.append(array("I", [x for p in by_gram for x in p]).tobytes())
    except OverflowError:
        return None  # a count past 2**32
    sections = [b"".join(keys), b"\x00".join(stamps), *("\t".join(x).encode("utf-8", "surrogatepass")
                                                        for x in (stems, words, grams)), *arrays]
    header = f"{FORMAT} {_tag()} {len(keys)} {sys.byteorder}\n".encode()
    return b"".join([header, " ".join(str(len(x)) for x in sections).encode(), b"\n", *sections])


def save(memory_dir: str | os.PathLike, keys: Sequence[bytes], stamps: Sequence[bytes], documents: Sequence[DocTokens]) -> None:
    """Write the index of this pool (atomically; a read-only folder only costs the next prompt the build). A
    memory the pool holds twice (copied into another file: the same key) is indexed once, as load() accepts
    no key twice; corpus_for ranks the other copy beside the index."""
    if not _tag():
        return
    first: dict[bytes, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    if len(first) < len(keys):
        kept = list(first.values())  # ascending
        keys, stamps, documents = [keys[i] for i in kept], [stamps[i] for i in kept], [documents[i] for i in kept]
    if _postings_bytes(documents) > C.RANK_INDEX_MAX_BYTES:
        return  # past what a hook reads, whatever the rest holds: not built (hostile21: 250 memories of 64 KB, 20 s)
    data = build(keys, stamps, documents)
    if data is None or not _within_limits(data):
        return
    try:
        safefs_write.write_bytes(memory_dir, INDEX_FILE, data, durable=False)
    except OSError:
        pass


def load(memory_dir: str | os.PathLike) -> RankIndex | None:
    """The folder's index, or None: no file, another tokeniser's or byte order's, or one whose parts do
    not add up. Positions within the parts are checked where they are used (IndexedCorpus). The file stays
    open, for the n-gram pairs (RankIndex.gram_postings); it is closed with the index."""
    tag = _tag()
    if not tag:
        return None
    try:
        fd = safefs.open_file(memory_dir, INDEX_FILE)
    except OSError:
        return None
    try:
        index = _read(fd, tag)
    except (OSError, ValueError, TypeError, UnicodeError):
        index = None
    if index is None:
        os.close(fd)
    return index


def _postings_bytes(documents: Sequence[DocTokens]) -> int:
    """The least the index's sections besides the n-gram pairs take for these memories: per memory and stem, its
    posting (memory, count) and its place in the memory's stems; per memory and word as written, its posting."""
    return sum(12 * len(d.words) + 8 * len(d.written) for d in documents)


def _within_limits(data: bytes) -> bool:
    """Whether a hook would read this index: its pairs (the last section) and the rest each within their limit."""
    first = data.index(b"\n")
    pairs = int(data[first + 1: data.index(b"\n", first + 1)].rsplit(b" ", 1)[-1])
    return len(data) - pairs <= C.RANK_INDEX_MAX_BYTES and pairs <= C.RANK_INDEX_PAIRS_MAX_BYTES


def _read(fd: int, tag: str) -> RankIndex | None:
    size = os.fstat(fd).st_size
    if size > C.RANK_INDEX_MAX_BYTES + C.RANK_INDEX_PAIRS_MAX_BYTES:
        return None
    lines = os.pread(fd, HEAD_BYTES, 0)
    first = lines.index(b"\n")
    second = lines.index(b"\n", first + 1)
    head = lines[:first].split(b" ")
    sizes = [int(x) for x in lines[first + 1: second].split(b" ")]
    if (b" ".join(head[:-2]) != f"{FORMAT} {tag}".encode() or head[-1] != sys.byteorder.encode()
            or len(sizes) != TEXTS + len(SECTIONS) + 1 or second + 1 + sum(sizes) != size or min(sizes) < 0
            or sizes[-1] % PAIR_BYTES or sizes[-1] > C.RANK_INDEX_PAIRS_MAX_BYTES or size - sizes[-1] > C.RANK_INDEX_MAX_BYTES):
        return None
    n = int(head[-2])
    pairs_at = size - sizes[-1]
    data = os.pread(fd, pairs_at, 0)
    if len(data) != pairs_at:
        return None  # cut short since
    view, parts, start = memoryview(data), [], second + 1
    for part_size in sizes[:-1]:
        parts.append(view[start: start + part_size])  # views of the one read: nothing is copied
        start += part_size
    keys = [bytes(parts[0][i: i + token_cache.KEY_CHARS]) for i in range(0, len(parts[0]), token_cache.KEY_CHARS)]
    stamps = bytes(parts[1]).split(b"\x00") if keys else []
    stems, words, grams = (_split(str(part, "utf-8", "surrogatepass")) for part in parts[2:TEXTS])
    # Each array a view of the read, as native uint32 (the header named the byte order); a length that is not a
    # whole number of them: TypeError. (memoryview reads an item at any alignment.)
    arrays = {name: part.cast("I") for name, part in zip(SECTIONS, parts[TEXTS:], strict=True)}
    index = RankIndex(keys, stamps, stems, words, grams, arrays, fd, pairs_at, sizes[-1] // PAIR_BYTES)
    if len(keys) == n == len(set(keys)) == len(stamps) and _consistent(index):
        return index
    index.fd = -1  # the caller closes it
    return None


def _gram_postings(documents: Sequence[DocTokens]) -> tuple[list[str], list[list[int]]]:
    """Every character 4-gram of the memories' words as written (recall.lexical cuts them), sorted, and per
    n-gram the flat (memory, count) pairs of the memories holding it, ascending: the counts GramBM25 finds
    for a query from the words (each word's count times the n-gram's in the word)."""
    per_gram: dict[str, list[int]] = {}
    grams_of: dict[str, tuple[str, ...]] = {}  # this build's own: lexical's cache is for queries, and a pool's
    # every word in it would stay for the life of a long-running process (the MCP server)
    for doc, d in enumerate(documents):
        cut: list[str] = []
        for word, times in d.written.items():
            its = grams_of.get(word)
            if its is None:
                its = grams_of[word] = cut_grams(word, 4)
            cut.extend(its * times)  # a memory's n-grams, each as often as it counts (C loops)
        for gram, count in Counter(cut).items():
            held = per_gram.get(gram)
            if held is None:
                per_gram[gram] = [doc, count]
            else:
                held += (doc, count)
    grams = sorted(per_gram)
    return grams, [per_gram[g] for g in grams]


def _split(text: str) -> list[str]:
    return text.split("\t") if text else []


def _consistent(index: RankIndex) -> bool:
    """Every array as long as the file says. (What the positions in them point at is checked per slice
    where IndexedCorpus uses one: a wrong but in-range value only reorders memories.)"""
    a, n, stems, words = index.__dict__, index.n, len(index.stems), len(index.words)
    lengths = {"stem_at": stems + 1, "word_at": words + 1, "gram_at": len(index.grams) + 1, "word_stem": words,
               "lengths": n, "gram_lengths": n,
               **{name: n + 1 for name in ("doc_stems_at", "names_at", "related_at")}}
    return (all(len(a[name]) == size for name, size in lengths.items())
            and len(a["stem_docs"]) == len(a["stem_counts"]) and len(a["word_docs"]) == len(a["word_counts"])
            and _offsets(index.gram_at, index.pairs)
            and all(_offsets(a[name + "_at"], len(a[values])) for name, values in OFFSETS))


# Each offsets section and the section it cuts: its entries must go up from 0 to that section's end, or a
# planted file makes every memory's slice the whole array (names() is asked of each memory: 250 memories
# times 4 MB of stem ids was 20 s of CPU per prompt). In order, all the slices together are the array once.
OFFSETS = (("stem", "stem_docs"), ("word", "word_docs"), ("doc_stems", "doc_stems"), ("names", "names"),
           ("related", "related"))


def _offsets(at: memoryview, end: int) -> bool:
    values = at.tolist()  # sorted() of the list: half the time of sorted() of the array
    return values[0] == 0 and values[-1] == end and values == sorted(values)


def corpus_for(memory_dir: str | os.PathLike, headers: Sequence[Header],
               fields_of: Callable[[Header], token_cache.Fields]) -> tuple[IndexedCorpus | list[DocTokens], list]:
    """What the Ranker of this pool of headers is built on, and the pool's fields where they were needed: the
    folder's index with the pool's few other memories beside it, or, when the index is missing or too far from
    this pool, every memory's tokens (from the token cache), of which a new index is then written.

    A memory is found in the index by the stamp under which the header cache served it (recall.header_cache:
    the same stamp, the same header, so the same fields), else by the digest of its fields: a prompt hook
    then neither decodes nor hashes the text of the memories the index holds (~5 ms at 200)."""
    index = load(memory_dir)
    fields: list = [None] * len(headers)
    if index is not None:
        by_stamp = {stamp: s for s, stamp in enumerate(index.stamps) if stamp}
        by_key: dict[bytes, int] | None = None
        pool_of = [-1] * index.n
        extra_at: list[int] = []
        unstamped = 0  # stamped now, found by text: an index written before the header cache held them
        for p, header in enumerate(headers):
            stamp = getattr(header, "stamp", b"")
            s = by_stamp.get(stamp) if stamp else None
            by_text = s is None
            if by_text:
                fields[p] = fields_of(header)
                if by_key is None:
                    by_key = {k: i for i, k in enumerate(index.keys)}
                s = by_key.get(token_cache.digest(fields[p]))
            if s is not None and pool_of[s] < 0:
                pool_of[s] = p
                unstamped += bool(stamp) and by_text  # a copy of a memory found by its text is not one
            else:  # not indexed, or the same text twice in the pool (one memory copied into another file)
                extra_at.append(p)
        masked = index.n - (len(headers) - len(extra_at))
        if len(extra_at) <= MAX_EXTRA and masked <= MAX_MASKED and unstamped <= MAX_UNSTAMPED:
            for p in extra_at:
                fields[p] = fields[p] or fields_of(headers[p])
            made = token_cache.tokenised(memory_dir, [fields[p] for p in extra_at], fill=True) if extra_at else []
            return IndexedCorpus(index, pool_of, dict(zip(extra_at, made, strict=True)), len(headers)), fields
    fields = [f or fields_of(h) for f, h in zip(fields, headers, strict=True)]
    documents = token_cache.tokenised(memory_dir, fields, fill=True)
    save(memory_dir, [token_cache.digest(f) for f in fields], [getattr(h, "stamp", b"") for h in headers], documents)
    return documents, fields


def _tag() -> str:
    """The tokeniser's fingerprint and the header reader's: a stamp stands for the fields that reader made.
    None ("", no index read or written) where the n-gram pairs cannot be read from the open file: Windows'
    os has no pread."""
    if not hasattr(os, "pread"):
        return ""
    from memdir.header_cache import fingerprint

    words, reader = token_cache.fingerprint(), fingerprint().decode()
    return f"{words}-{reader}" if words and reader else ""
