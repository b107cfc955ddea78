"""Ranker's questions about a pool of memories, answered from the prompt hook's rank index (recall.rank_index).

recall.lexical.DocCorpus answers them from every memory's tokens as objects; IndexedCorpus answers them with
the same numbers from the index's flat arrays, decoding only what a prompt asks about: the query's stems, the
feedback memories' stems and the words holding the query's n-grams. The index's memories the pool lacks are
masked; the pool's memories the index lacks (`extra`) are ranked from their tokens beside it.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from memdir.stages.recall.bm25 import BM25, add_term, term_idf

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memdir.stages.recall.lexical import DocTokens
    from memdir.stages.recall.rank_index import RankIndex

K1, B = 1.2, 0.75  # recall.bm25's defaults, as DocCorpus uses them


class IndexedCorpus:
    """Ranker's questions (recall.lexical.DocCorpus) about a pool, answered from a RankIndex for the
    memories it holds and from `extra` (DocTokens by pool position) for the others."""

    def __init__(self, index: RankIndex, pool_of: list[int], extra: dict[int, DocTokens], n: int) -> None:
        self.index, self.pool_of, self.n = index, pool_of, n  # pool_of: per index memory, its pool position or -1
        self.extra = extra
        self.extra_at = sorted(extra)
        self.extra_words = BM25(counted=([extra[p].words for p in self.extra_at],
                                         [sum(extra[p].words.values()) for p in self.extra_at]))
        self.slot: list[int] = [-1] * n  # per pool position, its memory in the index or -1
        for s, p in enumerate(pool_of):
            if p >= 0:
                self.slot[p] = s
        self.lengths = [index.lengths[s] if s >= 0 else sum(extra[p].words.values()) for p, s in enumerate(self.slot)]
        self.gram_lengths = [index.gram_lengths[s] if s >= 0 else extra[p].gram_length for p, s in enumerate(self.slot)]
        self.avg_len = sum(self.lengths) / n if n else 0.0
        self.avg_gram = sum(self.gram_lengths) / n if n else 0.0
        self.masked = [s for s, p in enumerate(pool_of) if p < 0]
        self._masked: dict[str, int] | None = None
        self._idf_at: dict[int, float] = {}  # by stem position (term_idfs)
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._marked: tuple[str, list[int], list[str]] | None = None

    def counted(self, term: str) -> list[tuple[int, int]]:
        """(pool position, count) of every pool memory holding the stem, ascending."""
        found = self._postings.get(term)
        if found is None:
            index, pool_of = self.index, self.pool_of
            t = index.stem_id(term)
            found = []
            if t >= 0:
                found = [(pool_of[s], c) for s, c in index.postings(index.stem_at, index.stem_docs, index.stem_counts, t)
                         if pool_of[s] >= 0]
            if term in self.extra_words.df:
                found += [(self.extra_at[j], self.extra_words.tf[j][term]) for j in self.extra_words.postings(term)]
            found.sort()
            self._postings[term] = found
        return found

    def df(self, term: str) -> int:
        """len(counted(term)), without listing them: the feedback terms' idf asks for some 1,500 stems."""
        found = self._postings.get(term)
        if found is not None:
            return len(found)
        t = self.index.stem_id(term)
        return self._held(t, term) if t >= 0 else self.extra_words.df.get(term, 0)

    def _held(self, t: int, term: str) -> int:
        """How many pool memories hold stem number `t` (`term`): the index's, less those the pool lacks, and the
        extra memories' (df and term_idfs count it the same way)."""
        at = self.index.stem_at
        held = at[t + 1] - at[t]
        if held and self.masked:
            held = max(0, held - self._masked_df().get(term, 0))
        return held + self.extra_words.df.get(term, 0) if self.extra else held

    def _masked_df(self) -> dict[str, int]:
        """Per stem, how many of the index's memories that the pool lacks hold it."""
        if self._masked is None:
            index, count = self.index, len(self.index.stems)
            masked: dict[str, int] = {}
            self._masked = masked
            for s in self.masked:
                for t in index.part(index.doc_stems_at, index.doc_stems, s, count):
                    term = index.stems[t]
                    masked[term] = masked.get(term, 0) + 1
        return self._masked

    def idf(self, term: str) -> float | None:
        d = self.df(term)
        return term_idf(self.n, d) if d else None

    def postings(self, term: str) -> list[int]:
        return [p for p, _ in self.counted(term)]

    def scores(self, terms: list[str]) -> list[float]:
        out = [0.0] * self.n
        for term in set(terms):  # BM25.scores's order: the same floats, summed in the same order
            found = self.counted(term)
            if found:
                add_term(out, term_idf(self.n, len(found)), found, self.lengths, self.avg_len, K1, B)
        return out

    def gram_scores(self, grams: list[str]) -> list[float]:
        """recall.bm25.GramBM25.scores over the pool: the words holding each n-gram are found in one
        string of every word (the index's, then the extra memories' others), then their memories."""
        text, starts, vocabulary = self._words_marked()
        in_word: dict[int, dict[str, int]] = {}  # word number -> {n-gram of the query: times in it}
        terms = set(grams)
        for gram in terms:
            at = text.find(gram)
            while at != -1:
                per = in_word.setdefault(bisect_right(starts, at) - 1, {})
                per[gram] = per.get(gram, 0) + 1
                at = text.find(gram, at + 1)
        # Per n-gram, its count in each pool memory, summed over the words holding it (a list per n-gram:
        # indexing a list is about twice as fast as a dict per memory, and the memories come out ascending).
        per_gram: dict[str, list[int]] = {}
        index, pool_of, known, n = self.index, self.pool_of, len(self.index.words), self.n
        for w, held in in_word.items():
            word = vocabulary[w]
            pairs = [(pool_of[s], c) for s, c in (index.postings(index.word_at, index.word_docs, index.word_counts, w)
                                                  if w < known else ()) if pool_of[s] >= 0]
            pairs += [(p, c) for p in self.extra_at if (c := self.extra[p].written.get(word, 0))]
            for gram, inside in held.items():
                counts = per_gram.get(gram)
                if counts is None:
                    counts = per_gram[gram] = [0] * n
                for p, times in pairs:
                    counts[p] += times * inside
        found = {gram: [(p, f) for p, f in enumerate(counts) if f] for gram, counts in per_gram.items()}
        out = [0.0] * self.n
        for gram in terms:  # GramBM25.scores's order
            holding = found.get(gram)
            if holding:
                add_term(out, term_idf(self.n, len(holding)), holding, self.gram_lengths, self.avg_gram, K1, B)
        return out

    def _words_marked(self) -> tuple[str, list[int], list[str]]:
        """Every word as written, marked as recall.lexical cuts n-grams (#word#) and joined with tabs
        (an n-gram never holds one), where each starts, and the words in that order."""
        if self._marked is None:
            known = self.index.words
            vocabulary = known
            others = {w for d in self.extra.values() for w in d.written}
            if others:
                kept = set(known)
                vocabulary = known + sorted(w for w in others if w not in kept)
            text = "#" + "#\t#".join(vocabulary) + "#"
            self._marked = text, list(accumulate((len(w) + 3 for w in vocabulary), initial=0)), vocabulary
        return self._marked

    def term_idfs(self, i: int) -> Iterable[tuple[str, float]]:
        """Memory i's stems with their idf: counted from the index's offsets by position, no lookup by name."""
        s = self.slot[i]
        if s < 0:
            return ((term, self.idf(term) or 0.0) for term in self.extra[i].words)
        index, n, known, stems = self.index, self.n, self._idf_at, self.index.stems
        out = []
        for t in index.part(index.doc_stems_at, index.doc_stems, s, len(stems)):
            idf = known.get(t)
            if idf is None:  # the top memories share most of their stems: each idf once
                held = self._held(t, stems[t])
                idf = known[t] = term_idf(n, held) if held > 0 else 0.0
            out.append((stems[t], idf))
        return out

    def names(self, i: int) -> set[str]:
        return self._stem_set(i, "names")

    def related(self, i: int) -> set[str]:
        return self._stem_set(i, "related")

    def _stem_set(self, i: int, kind: str) -> set[str]:
        s = self.slot[i]
        if s < 0:
            return getattr(self.extra[i], kind)
        index = self.index
        return {index.stems[t] for t in index.part(getattr(index, kind + "_at"), getattr(index, kind), s, len(index.stems))}

    def written_stems(self) -> Iterable[tuple[str, str]]:
        """Each word as written in the pool with its stem: the index's words some pool memory holds."""
        index, pool_of = self.index, self.pool_of
        seen: set[str] = set()
        stems = index.stems
        if not self.masked:  # every word of the index is in the pool
            yield from ((word, stems[t]) for word, t in zip(index.words, index.word_stem, strict=True) if t < len(stems))
            seen = set(index.words)
        for w, word in enumerate(index.words if self.masked else ()):
            t = index.word_stem[w]
            if t < len(stems) and any(pool_of[s] >= 0 for s, _ in index.postings(index.word_at, index.word_docs,
                                                                                   index.word_counts, w)):
                seen.add(word)
                yield word, stems[t]
        from memdir.words import stem

        for d in self.extra.values():
            for word in d.written:
                if word not in seen:
                    seen.add(word)
                    yield word, stem(word)
