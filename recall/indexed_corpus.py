"""Ranker's questions about a pool of memories, answered from the prompt hook's rank index (recall.rank_index).

recall.lexical.DocCorpus answers them from every memory's tokens as objects; IndexedCorpus answers them with
the same numbers from the index's flat arrays, decoding only what a prompt asks about: the query's stems, the
feedback memories' stems and the query's n-grams. The index's memories the pool lacks are
masked; the pool's memories the index lacks (`extra`) are ranked from their tokens beside it.
"""

from __future__ import annotations

from bisect import bisect_left

from memdir.stages.recall.bm25 import BM25, add_term, gram_counts, grams_in_words, marked_words, term_idf
from memdir.stages.recall.spellings import TYPO_MIN_LEN

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
        self._spelled_stems: set[int] | None = None
        self._words_of_stem: dict[int, list[int]] | None = None

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
        """recall.bm25.GramBM25.scores over the pool: each n-gram's memories from the index's postings, and the
        extra memories' from the words they hold."""
        index, pool_of = self.index, self.pool_of
        terms = set(grams)
        extra = self._extra_grams(terms) if self.extra else {}
        out = [0.0] * self.n
        for gram in terms:  # GramBM25.scores's order: the same floats, summed in the same order
            g = index.gram_id(gram)
            holding = [(pool_of[s], c) for s, c in index.gram_postings(g) if pool_of[s] >= 0] if g >= 0 else []
            holding += extra.get(gram, ())
            if holding:  # a memory once per n-gram: its score gets one sum, whatever the order
                add_term(out, term_idf(self.n, len(holding)), holding, self.gram_lengths, self.avg_gram, K1, B)
        return out

    def _extra_grams(self, terms: set[str]) -> dict[str, list[tuple[int, int]]]:
        """Per n-gram, (pool position, count) of the extra memories holding it, from their words as written
        (as GramBM25 counts them)."""
        words = list({w for d in self.extra.values() for w in d.written})  # any order: each word is found once
        in_word = grams_in_words(marked_words(words), terms)
        found: dict[str, list[tuple[int, int]]] = {}
        for p in self.extra_at:
            for gram, count in gram_counts(self.extra[p].written, in_word).items():
                found.setdefault(gram, []).append((p, count))
        return found

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

    def spelled(self, prefix: str) -> dict[str, str] | None:
        """Ranker.spellings()[prefix], from the index's sorted words and stems alone, without the whole table
        (a prompt with an unknown word built it from every word: ~2 ms at 200 memories); None when the pool holds
        memories the index lacks (`extra`: Ranker builds the table from written_stems). Memories the index holds
        and the pool lacks (`masked`: those surfaced earlier in the session) take their words out of it: only the
        prefix's few words are looked up, not every word of the index (~20 M instructions at 200 memories)."""
        if self.extra:
            return None
        index, least = self.index, TYPO_MIN_LEN - 1
        words, stems, word_stem = index.words, index.stems, index.word_stem
        count = len(stems)
        if self._spelled_stems is None:  # the stems of the words the table takes: asked once, at the first typo
            self._spelled_stems = {t for w, t in zip(words, word_stem, strict=True)
                                   if t < count and len(w) >= least and not w.isdigit()}
        end = prefix + "\U0010ffff"  # past every word starting with prefix, in sorted order
        out = {stems[t]: stems[t] for t in range(bisect_left(stems, prefix), bisect_left(stems, end))
               if t in self._spelled_stems and self._stem_written_in_pool(t)}
        for i in range(bisect_left(words, prefix), bisect_left(words, end)):  # a word keeps its own stem
            w, t = words[i], word_stem[i]
            if t < count and len(w) >= least and not w.isdigit() and self._word_in_pool(i):
                out[w] = stems[t]
        # The table is keyed by each entry's first two letters: a shorter prefix stands for short entries only.
        return out if len(prefix) == 2 else {k: v for k, v in out.items() if k[:2] == prefix}

    def spelled_at_least(self, prefix: str) -> int:
        """A floor on spelled(prefix)'s entries: none known (its words may be masked), and reading them costs no stem."""
        return 0

    def _word_in_pool(self, w: int) -> bool:
        """Whether a pool memory holds word number `w` (always, when the pool lacks none of the index's)."""
        if not self.masked:
            return True
        index, pool_of = self.index, self.pool_of
        return any(pool_of[s] >= 0 for s, _ in index.postings(index.word_at, index.word_docs, index.word_counts, w))

    def _stem_written_in_pool(self, t: int) -> bool:
        """Whether a word the typo table takes (long enough, not a number) with stem number `t` is in the pool."""
        if not self.masked:
            return True
        if self._words_of_stem is None:  # stem -> its words, built once per pool at the first typo
            self._words_of_stem = {}
            least = TYPO_MIN_LEN - 1
            for w, (word, s) in enumerate(zip(self.index.words, self.index.word_stem, strict=True)):
                if len(word) >= least and not word.isdigit():
                    self._words_of_stem.setdefault(s, []).append(w)
        return any(self._word_in_pool(w) for w in self._words_of_stem.get(t, ()))

    def written_stems(self) -> Iterable[tuple[str, str]]:
        """Each word as written in the pool with its stem: the index's words some pool memory holds."""
        index = self.index
        seen: set[str] = set()
        stems = index.stems
        if not self.masked:  # every word of the index is in the pool
            yield from ((word, stems[t]) for word, t in zip(index.words, index.word_stem, strict=True) if t < len(stems))
            seen = set(index.words)
        for w, word in enumerate(index.words if self.masked else ()):
            t = index.word_stem[w]
            if t < len(stems) and self._word_in_pool(w):
                seen.add(word)
                yield word, stems[t]
        from memdir.words import stem

        for d in self.extra.values():
            for word in d.written:
                if word not in seen:
                    seen.add(word)
                    yield word, stem(word)
