"""The warm recall server's lexical corpus: recall.lexical.DocCorpus's very numbers, computed with numpy (issue 26).

With the recall server up, a prompt's lexical ranking ran on the request thread while the query's embedding ran
on the other core, and most of it was scoring the query's character n-grams in Python: per n-gram, per word
holding it, per memory holding that word, a dict update (about 4 ms alone at 200 memories, 12 ms beside the
embedding). Here each memory's words are kept as arrays of word numbers (once per memory's tokens, which
recall.manifest.KeptTokens keeps), so a query's n-gram counts per memory are one gather, one bincount and one
small matrix product, and each term's BM25 contribution one vector expression.

The same floats, not merely the same order: the counts are integers (exact in float64), each term's contribution
is the expression recall.bm25.add_term evaluates, in the same order of operations, and the terms are added in the
order recall.bm25 adds them (the iteration order of the same set, built the same way). A memory that does not
hold a term gets 0.0 added, which changes no float. tests/test_server_rank.py checks it to the bit.

Only the server imports this module (numpy is loaded there anyway, for the dense model).
"""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np

from memdir.stages.recall.bm25 import BM25, GramBM25, grams_in_words, marked_words, term_idf
from memdir.stages.recall.lexical import DocCorpus, DocTokens, cut_grams
from memdir.stages.recall.manifest import NEWEST
from memdir.stages.recall.spellings import PrefixSpellings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

WORDS_KEPT = 300_000  # distinct words numbered before the numbering starts afresh (a bound on memory, some 30 MB:
# the real 55-file folder has 3,300 words as written)


class WordNumbers:
    """Every word as written that the server ranked, numbered, and each memory's words as arrays of those
    numbers with their counts, kept per DocTokens object (KeptTokens hands back the same object for the same
    fields; a memory's tokens are never changed once made) for the documents of the last two pools only: a
    DocTokens is some 46 KB (recall.token_pack), and those are held by the server's kept Rankers anyway."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.number: dict[str, int] = {}
        self.words: list[str] = []  # by number
        self.docs: dict[int, tuple[DocTokens, np.ndarray, np.ndarray]] = {}  # id(doc) -> (doc, numbers, counts)
        self.before: dict[int, tuple[DocTokens, np.ndarray, np.ndarray]] = {}  # the same, of the pool before

    def of(self, documents: Sequence[DocTokens]) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, int], list[str]]:
        """Per document its words' numbers and counts, and the numbering they are in (word -> number, and the
        words by number), only ever added to: past WORDS_KEPT a new numbering replaces it, and a corpus
        holding the old one keeps using that one."""
        with self.lock:
            if len(self.number) > WORDS_KEPT:
                self.number, self.words, self.docs, self.before = {}, [], {}, {}
            number, words = self.number, self.words
            known, self.before, self.docs = {**self.before, **self.docs}, self.docs, {}
            numbers, counts = [], []
            for doc in documents:
                kept = known.get(id(doc))
                if kept is None or kept[0] is not doc:  # the id of a document since freed: made again
                    written = doc.written
                    if not number.keys() >= written.keys():
                        for word in written.keys() - number.keys():
                            number[word] = len(words)
                            words.append(word)
                    kept = (doc, np.array(list(map(number.__getitem__, written)), np.int32),
                            np.array(list(written.values()), np.int32))
                self.docs[id(doc)] = kept
                numbers.append(kept[1])
                counts.append(kept[2])
            return numbers, counts, number, words


_numbers = WordNumbers()


class ServerCorpus(DocCorpus):
    """DocCorpus with its word and n-gram scores computed with numpy, and each memory's (stem, idf) pairs kept
    for the pseudo-relevance feedback (the idfs are the pool's, fixed for this corpus)."""

    def __init__(self, documents: Sequence[DocTokens]) -> None:  # DocCorpus.__init__, on _PoolBM25
        self.documents = documents
        self.n = len(documents)
        docs = [d.words for d in documents]  # stem -> count
        self.words = _PoolBM25(counted=(docs, [sum(d.values()) for d in docs]))
        self.grams = GramBM25([d.written for d in documents], [d.gram_length for d in documents])
        self._typos = PrefixSpellings([d.written for d in documents])
        self._pairs: dict[int, tuple[tuple[str, float], ...]] = {}
        self._stems: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._word_norm = _norms(self.words.lengths, self.words.avg_len, self.words.k1, self.words.b)
        self._grams: tuple | None = None  # built on the first n-gram question: see _gram_table
        self._asked = 0
        self._gram_words: dict[str, list[tuple[str, int]]] | None = None  # see _words_holding

    def term_idfs(self, i: int) -> Iterable[tuple[str, float]]:
        pairs = self._pairs.get(i)
        if pairs is None:
            pairs = self._pairs[i] = tuple(super().term_idfs(i))
        return pairs

    def scores(self, terms: list[str]) -> list[float]:
        """recall.bm25.BM25.scores, as numpy."""
        words = self.words
        out = np.zeros(self.n)
        for term in set(terms):
            idf = words.idf(term)
            if idf is None:
                continue
            docs, freqs = self._stem_postings(term)
            out[docs] += idf * freqs * (words.k1 + 1) / (freqs + self._word_norm[docs])
        return out.tolist()

    def _stem_postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        found = self._stems.get(term)
        if found is None:
            docs = self.words.postings(term)
            tf = self.words.tf
            found = self._stems[term] = (np.array(docs, np.int64),
                                         np.array([tf[i][term] for i in docs], np.float64))
        return found

    def gram_scores(self, grams: list[str]) -> list[float]:
        """recall.bm25.GramBM25.scores, as numpy: each memory's count of each n-gram is the sum, over the words
        holding the n-gram, of the word's count in the memory times the n-gram's count in the word."""
        n, bm = self.n, self.grams
        if not n:
            return []
        marked, doc_of, numbers, counts, norm, number, numbered = self._gram_table()
        terms = set(grams)  # GramBM25.scores's own set: its order is the order the terms are added in
        order = list(terms)
        in_word = self._words_holding(marked, terms)
        out = np.zeros(n)
        if not in_word:
            return out.tolist()
        column = {g: j for j, g in enumerate(order)}
        # Per matched word (a row), the n-grams it holds and how many times, flat (a row's run of entries).
        local = np.full(numbered, -1, np.int32)  # word number -> row (the pool's words are below `numbered`)
        starts: list[int] = [0]
        columns: list[int] = []
        inside: list[int] = []
        for row, (word, held) in enumerate(in_word.items()):
            local[number[word]] = row
            columns += [column[g] for g in held]
            inside += held.values()
            starts.append(len(columns))
        rows = local[numbers]
        kept = rows >= 0
        rows, docs, times = rows[kept], doc_of[kept], counts[kept]
        first = np.array(starts, np.int64)
        runs = (first[1:] - first[:-1])[rows]  # per (memory, word) entry: how many n-grams its word holds
        at = np.repeat(first[rows] - (np.cumsum(runs) - runs), runs) + np.arange(int(runs.sum()))
        width = len(order)
        freq = np.bincount(np.repeat(docs, runs).astype(np.int64) * width + np.array(columns, np.int64)[at],
                           weights=np.repeat(times, runs) * np.array(inside, np.float64)[at],
                           minlength=n * width).reshape(n, width)  # integers, exact in float64
        holding = np.count_nonzero(freq, axis=0).tolist()
        used = [j for j in range(width) if holding[j]]
        if not used:
            return out.tolist()
        f = freq[:, used]
        idf = np.array([term_idf(n, holding[j]) for j in used])
        # Each term's contribution as add_term computes it, then added term after term (cumsum is sequential).
        part = idf * f * (bm.k1 + 1) / (f + norm[:, None])
        out = part.cumsum(axis=1)[:, -1]
        return out.tolist()

    def _words_holding(self, marked: tuple, grams: set[str]) -> dict[str, dict[str, int]]:
        """recall.bm25.grams_in_words: per pool word holding one of the n-grams, how many times it holds each.
        A corpus asked again (the warm server's, prompt after prompt at 200 memories) looks them up in a table of
        every pool word's n-grams, made once (recall.lexical.cut_grams, as the words' n-gram lists are cut); a
        corpus asked once searches the marked words (a pool at 5,000 memories changes with each prompt)."""
        table = self._gram_words
        if table is None:
            self._asked += 1
            if self._asked < 2:
                return grams_in_words(marked, grams)
            table = {}
            for word in marked[0]:
                for gram, times in Counter(cut_grams(word, 4)).items():
                    table.setdefault(gram, []).append((word, times))
            self._gram_words = table  # published whole, as _gram_table
        in_word: dict[str, dict[str, int]] = {}
        for gram in grams:
            for word, times in table.get(gram, ()):
                in_word.setdefault(word, {})[gram] = times
        return in_word

    def _gram_table(self) -> tuple:
        """The pool's words marked for the n-gram search, and every (memory, word number, count) as arrays."""
        table = self._grams
        if table is None:
            bm = self.grams
            numbers, counts, number, words = _numbers.of(self.documents)
            every = np.concatenate(numbers) if numbers else np.zeros(0, np.int32)
            held = np.zeros(len(words), bool)
            held[every] = True  # the pool's words, without a set of its 100,000 (memory, word) entries
            table = (marked_words([words[i] for i in np.flatnonzero(held).tolist()]),
                     np.repeat(np.arange(self.n, dtype=np.int32), [len(x) for x in numbers]), every,
                     np.concatenate(counts) if counts else np.zeros(0, np.int32),
                     _norms(bm.lengths, bm.avg_len, bm.k1, bm.b), number, len(words))
            self._grams = table  # published whole: another thread may rank with this corpus meanwhile
        return table


class _PoolBM25(BM25):
    """BM25 whose document counts per stem start from those of the pool's first NEWEST memories, kept while the
    next pool begins with the very same ones: at 5,000 memories a prompt's pool is the newest 200 and 50 older
    matches, and only those change (counting every stem of 250 memories was ~4 ms of each prompt). The same
    counts; BM25 only ever looks them up (get, in)."""

    def _index(self) -> None:
        self.df = _prefix.counts(self.tf)
        self._idf_of: dict[str, float] = {}
        self._docs_of: dict[str, list[int]] = {}


class PrefixCounts:
    """The document counts of the last pool's first NEWEST memories (their stem -> count dicts, by identity)."""

    def __init__(self) -> None:
        self.kept: tuple[list, Counter] = ([], Counter())

    def counts(self, tf: Sequence[Mapping[str, int]]) -> Counter:
        first, counted = self.kept  # one read: another thread replaces the tuple whole
        size = min(len(tf), NEWEST)
        if not (size == len(first) and all(a is b for a, b in zip(first, tf[:size], strict=True))):
            counted = Counter()
            for counts in tf[:size]:
                counted.update(counts.keys())
            self.kept = (list(tf[:size]), counted)  # the dicts kept alive with it: identity stays meaningful
        df = counted.copy()
        for counts in tf[size:]:
            df.update(counts.keys())
        return df


_prefix = PrefixCounts()


def _norms(lengths: Sequence[int], avg_len: float, k1: float, b: float) -> np.ndarray:
    """recall.bm25.add_term's `norm` per document, the same operations in the same order."""
    return k1 * ((1 - b) + b * np.array(lengths, np.float64) / (avg_len or 1))
