"""Okapi BM25 over counted documents, and its character n-gram variant (recall.lexical ranks with both).

Split out of recall/lexical.py so each module keeps one job: this one scores, lexical.py tokenises and ranks.
Hand-written rather than `bm25s`/`rank_bm25`: both pull in NumPy (and SciPy), whose import alone
is more than the prompt hook's whole time budget, and the collections here are small (hundreds to
a few thousand short documents).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate

from memdir import constants as C


def add_term(out: list[float], idf: float, postings: Sequence[tuple[int, int]], lengths: Sequence[int],
             avg_len: float, k1: float, b: float) -> None:
    """One query term's BM25 contribution added to `out`, for each (document, frequency) of its postings.
    Written once: recall.rank_index scores its documents with the very same floats."""
    for i, freq in postings:
        norm = k1 * (1 - b + b * lengths[i] / (avg_len or 1))
        out[i] += idf * freq * (k1 + 1) / (freq + norm)


def term_idf(count: int, holding: int) -> float:
    """A term's idf, from how many of `count` documents hold it."""
    return math.log(1 + (count - holding + 0.5) / (holding + 0.5))


class BM25:
    """Okapi BM25 over pre-tokenized documents; `scores(query)` returns one float per document.
    `counted`: the documents as term counts and lengths instead (recall.token_cache keeps them)."""

    def __init__(self, documents: Sequence[list[str]] = (), k1: float = 1.2, b: float = 0.75,
                 counted: tuple[Sequence[Mapping[str, int]], Sequence[int]] | None = None) -> None:
        self.k1, self.b = k1, b
        self.tf: Sequence[Mapping[str, int]]
        self.lengths: Sequence[int]
        self.tf, self.lengths = counted or ([Counter(doc) for doc in documents], [len(doc) for doc in documents])
        self.avg_len = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        self._index()

    def _index(self) -> None:
        """Only each term's document count: a term's idf and postings are made when first asked for. A
        ranking asks for a few dozen terms, and indexing all of a pool's (some 40,000 postings for 250
        memories) was most of building a ranker, paid again for every new prompt's pool (issue 26)."""
        self.df: Counter[str] = Counter()
        for counts in self.tf:
            self.df.update(counts.keys())
        self._idf_of: dict[str, float] = {}
        self._docs_of: dict[str, list[int]] = {}

    def idf(self, term: str) -> float | None:
        """The term's idf, None when no document holds it."""
        idf = self._idf_of.get(term)
        if idf is None:
            d = self.df.get(term)
            if d is None:
                return None
            idf = self._idf_of[term] = term_idf(len(self.tf), d)
        return idf

    def postings(self, term: str) -> list[int]:
        """The documents holding the term, ascending (empty when none does)."""
        docs = self._docs_of.get(term)
        if docs is None:
            held = term in self.df
            docs = self._docs_of[term] = [i for i, counts in enumerate(self.tf) if term in counts] if held else []
        return docs

    def scores(self, query: list[str]) -> list[float]:
        out = [0.0] * len(self.tf)
        if not self.tf:
            return out
        for term in set(query):
            idf = self.idf(term)
            if idf is None:
                continue
            add_term(out, idf, [(i, self.tf[i][term]) for i in self.postings(term)], self.lengths, self.avg_len,
                     self.k1, self.b)
        return out


def marked_words(words: list[str]) -> tuple[list[str], str, list[int]]:
    """The words, marked as recall.lexical cuts n-grams (#word#) and joined by newlines (no n-gram holds one, so
    a match found in the text lies within one word), and where each starts in it: for grams_in_words."""
    return words, "#" + "#\n#".join(words) + "#", list(accumulate((len(w) + 3 for w in words), initial=0))


def grams_in_words(marked: tuple[list[str], str, list[int]], grams: Iterable[str]) -> dict[str, dict[str, int]]:
    """Per word of `marked` (marked_words) holding one of the n-grams, how many times each is in it: the words
    are searched as one string, and overlapping matches each counted, as the word's n-gram list repeats them.

    A search reads all the words once per n-gram: past RECALL_GRAM_SEARCHES_MAX n-grams each word is cut into
    n-grams once instead and those looked up, which finds the very same counts. (A 10,000-character prompt of
    some 9,000 n-grams against 250 memories of 64 KB of distinct words read 16 MB 9,000 times: 100 s.)"""
    vocabulary, text, starts = marked
    grams = set(grams)
    in_word: dict[str, dict[str, int]] = {}
    if len(grams) > C.RECALL_GRAM_SEARCHES_MAX:
        searched = {gram for gram in grams if "\n" in gram}  # only a search finds one across two words
        in_word = _cut_in_words(vocabulary, grams - searched)
        grams = searched
    for gram in grams:
        at = text.find(gram)
        while at != -1:
            per = in_word.setdefault(vocabulary[bisect_right(starts, at) - 1], {})
            per[gram] = per.get(gram, 0) + 1
            at = text.find(gram, at + 1)
    return in_word


def _cut_in_words(vocabulary: list[str], grams: set[str]) -> dict[str, dict[str, int]]:
    """grams_in_words without a search: each marked word's n-grams of each length the n-grams have, looked up.
    A match of an n-gram without a newline lies within one marked word, so these are the counts a search finds."""
    in_word: dict[str, dict[str, int]] = {}
    lengths = sorted({len(gram) for gram in grams})
    for word in vocabulary:
        marked = f"#{word}#"
        for n in lengths:
            for i in range(len(marked) - n + 1):
                gram = marked[i:i + n]
                if gram in grams:
                    per = in_word.setdefault(word, {})
                    per[gram] = per.get(gram, 0) + 1
    return in_word


def gram_counts(written: Mapping[str, int], in_word: dict[str, dict[str, int]]) -> dict[str, int]:
    """A document's count of each n-gram, from its words as written (word -> count) and grams_in_words."""
    freq: dict[str, int] = {}
    for word in written.keys() & in_word.keys():
        for gram, inside in in_word[word].items():
            freq[gram] = freq.get(gram, 0) + written[word] * inside
    return freq


class GramBM25(BM25):
    """BM25 over the character n-grams of each document's words, with the scores BM25 gives the
    n-gram lists, counted from the words a query's n-grams are in when it asks: a folder holds
    hundreds of thousands of n-gram postings and a query a few dozen n-grams (cutting and indexing
    them all was a third of the prompt hook's ranking time, issue 26).

    `written`: per document, each word as written -> how many times it counts (field weights included);
    `lengths`: per document, its n-gram count (`gram_length`)."""

    def __init__(self, written: Sequence[Mapping[str, int]], lengths: Sequence[int], k1: float = 1.2,
                 b: float = 0.75) -> None:
        self._marked: tuple[list[str], str, list[int]] | None = None  # the words, marked and joined: see _postings
        self._holding: dict[str, list[tuple[int, int]]] | None = None  # word -> (document, count): see _postings
        self._asked = 0
        super().__init__(k1=k1, b=b, counted=(written, lengths))

    def _index(self) -> None:
        pass  # nothing until a query asks (scores)

    def scores(self, query: list[str]) -> list[float]:
        out = [0.0] * len(self.tf)
        terms = set(query)  # BM25.scores's order: the same floats, summed in the same order
        found = self._postings(terms)
        count = len(self.tf)
        for term in terms:
            docs = found.get(term)
            if not docs:
                continue
            add_term(out, term_idf(count, len(docs)), docs, self.lengths, self.avg_len, self.k1, self.b)
        return out

    def _postings(self, grams: set[str]) -> dict[str, list[tuple[int, int]]]:
        """Per n-gram, (document, count) for every document holding it, ascending."""
        if self._marked is None:  # built once: the warm server asks one ranker prompt after prompt
            self._marked = marked_words(list(set().union(*self.tf)))
        in_word = grams_in_words(self._marked, grams)
        self._asked += 1
        holding = self._holding
        if holding is None and self._asked >= 2:  # a ranker asked again (the warm server's): index the words' documents
            holding = {}
            for i, counts in enumerate(self.tf):
                for word, times in counts.items():
                    holding.setdefault(word, []).append((i, times))
            # Published whole: the server's other threads rank with this same ranker meanwhile, and one that saw
            # the index half built would score only the documents indexed so far. (`>= 2`, not `== 2`: two
            # threads counting past 2 together still build it.)
            self._holding = holding
        per_doc: dict[int, dict[str, int]] = {}
        if holding is not None:  # only the documents holding a matched word
            for word, held in in_word.items():
                for i, times in holding.get(word, ()):
                    freq = per_doc.setdefault(i, {})
                    for gram, inside in held.items():
                        freq[gram] = freq.get(gram, 0) + times * inside
        else:  # one question (a prompt hook's process): a pass over the documents costs less than indexing them
            for i, counts in enumerate(self.tf):
                if freq := gram_counts(counts, in_word):
                    per_doc[i] = freq
        found: dict[str, list[tuple[int, int]]] = {}
        for i in sorted(per_doc):  # ascending, as a pass over the documents finds them
            for gram, f in per_doc[i].items():
                found.setdefault(gram, []).append((i, f))
        return found
