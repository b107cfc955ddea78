"""Offline ranking's typo step: what a prompt's word no memory holds misspells, within a budget of comparisons.

A misspelt query word no memory contains ("databse migraton") counts as the folder's word it is one or two edits from
(database, migrations). Its candidates are the folder's words of at least TYPO_MIN_LEN - 1 letters, and their stems,
that share its first two letters (typos rarely hit the start of a word): `table` holds them all, keyed by those two
letters; `PrefixSpellings` builds one prefix's entries when a word asks (recall.lexical.DocCorpus.spelled).
`corrections` compares at most C.RECALL_TYPO_COMPARISONS_MAX of them per prompt: 250 memories of 64 KB of distinct
words and a 10,000-character prompt of words none holds made 4.6 M comparisons (~35 s), after stemming the pool's 2 M
words for the whole table (~7 s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memdir import constants as C
from memdir.words import FILLER, STOPWORDS, split_words, stem, within_edits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.stages.recall.lexical import Corpus

TYPO_MIN_LEN = 5  # shorter words are too often another real word one edit away (cat/car)


def _takes(word: str) -> bool:
    """Whether the table takes a word of the folder (a shorter one is a stem of the query's minimum)."""
    return len(word) >= TYPO_MIN_LEN - 1 and not word.isdigit()


def table(written_stems: Iterable[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """First two letters -> {spelling: stem}, from each word of the folder as written with its stem."""
    out: dict[str, dict[str, str]] = {}
    for w, stemmed in written_stems:
        if _takes(w):
            # Both the word as written and its stem: "deplyo" is one edit from "deploy(s)". A word as
            # written keeps its own stem over another's stem spelled alike ("pass": its own "pas", not
            # "passing"'s "pass"): in any order the pool's words come, the same corrections.
            out.setdefault(w[:2], {})[w] = stemmed
            out.setdefault(stemmed[:2], {}).setdefault(stemmed, stemmed)
    return out


class PrefixSpellings:
    """`table`'s entries one prefix at a time, stemming only that prefix's words: the whole table stemmed every word
    of the pool at the first unknown word. A stem starts with its word's first two letters (memdir.words.stem only
    cuts or swaps an ending, and keeps two letters at least), so a prefix's entries are its words and their stems."""

    def __init__(self, written: Iterable[dict[str, int]]) -> None:
        self._written = written
        self._by_prefix: dict[str, list[str]] | None = None  # first two letters -> the words the table takes
        self._spelled: dict[str, dict[str, str]] = {}  # first two letters -> its entries, once asked

    def spelled(self, prefix: str) -> dict[str, str]:
        entries = self._spelled.get(prefix)
        if entries is None:  # published whole (the warm server's corpus may be asked from two threads)
            words = self._words().get(prefix, [])
            entries = {s: s for s in map(stem, words)}
            entries.update((w, stem(w)) for w in words)  # a word keeps its own stem over another's spelled alike
            self._spelled[prefix] = entries
        return entries

    def at_least(self, prefix: str) -> int:
        """How many entries spelled(prefix) has at least (its words), known without stemming them."""
        return len(self._words().get(prefix, ()))

    def _words(self) -> dict[str, list[str]]:
        by_prefix = self._by_prefix
        if by_prefix is None:
            by_prefix = {}
            for w in set().union(*self._written):
                if _takes(w):
                    by_prefix.setdefault(w[:2], []).append(w)
            self._by_prefix = by_prefix
        return by_prefix


def corrections(query: str, corpus: Corpus, whole: Callable[[], dict[str, dict[str, str]]]) -> dict[str, str]:
    """The query's words no memory contains, each mapped to the stem of the folder word it most likely misspells
    (one edit for words up to 7 letters, two beyond). `whole`: the whole table, for a corpus that cannot give one
    prefix's spellings. In the prompt's order, while C.RECALL_TYPO_COMPARISONS_MAX lasts: a word with more spellings
    than are left is skipped (not even stemmed), and once a word's go past it no later word is looked up."""
    out: dict[str, str] = {}
    budget = C.RECALL_TYPO_COMPARISONS_MAX
    for word in dict.fromkeys(split_words(query)):
        if (len(word) < TYPO_MIN_LEN or word in STOPWORDS or word in FILLER or word.isdigit()
                or corpus.df(stem(word)) or corpus.spelled_at_least(word[:2]) > budget):
            continue
        found = corpus.spelled(word[:2])
        candidates = found if found is not None else whole().get(word[:2], {})
        for limit in range(1, (1 if len(word) <= 7 else 2) + 1):
            budget -= len(candidates)  # charged even when past it: building the word's entries counts
            if budget < 0:
                break
            close = sorted({s for w, s in candidates.items() if within_edits(word, w, limit)},
                           key=lambda s: (-corpus.df(s), s))  # the commoner word
            if close:
                out[word] = close[0]
                break
    return out
