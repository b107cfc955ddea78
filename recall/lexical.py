"""Offline lexical ranking: field-weighted BM25 fused with character n-grams, plus feedback.

Tuned on LoCoMo conversations 0-4 (benchmarks/recall_locomo.py), each part measured on its own:
- words: BM25 with stemming and stopwords; the memory's name counts 3x, its description 2x;
- character 4-grams of words, fused at equal weight, catch what stemming misses
  (destress/stress, persue/pursue, paint/painting);
- pseudo-relevance feedback: the top 5 documents' most specific terms are added at half weight;
- a proper name in the query (Alice, Kafka) boosts memories whose name carries it;
- a misspelt query word no memory contains ("databse migraton") counts as the folder's word it is one
  or two edits from (database, migrations), in both the ranking and the coverage bar.
Only words that can carry meaning count (issue 21): filler (memdir.words.FILLER: "use", "repo",
"please") and the body's **Why:** / **How to apply:** labels are never indexed nor matched, and
`Ranker.evidence` tells a match on words common to the folder from one on its own words.

The BM25 scoring itself is recall/bm25.py; the typo step, recall/spellings.py.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from memdir.stages.recall.bm25 import BM25, GramBM25
from memdir.stages.recall.related import RELATED_WEIGHT, jobs_of
from memdir.stages.recall.spellings import PrefixSpellings, corrections, table
from memdir.words import (  # noqa: F401  (shared with the extractor)
    _TOKEN,
    FILLER,
    STOPWORDS,
    _stem,
    _stem_cache,
    chance_words,
    meaning_tokens,
    nfkc,
    split_words,
    stem,
    tokens,
    within_edits,
)

_gram_cache: dict[tuple[str, int], tuple[str, ...]] = {}


def cut_grams(word: str, n: int) -> tuple[str, ...]:
    """The word's character n-grams, marked at both ends (#word#): a word shorter than n is one n-gram."""
    marked = f"#{word}#"
    return (marked,) if len(marked) <= n else tuple(marked[i : i + n] for i in range(len(marked) - n + 1))


def _word_grams(word: str, n: int) -> tuple[str, ...]:
    cached = _gram_cache.get((word, n))
    if cached is None:
        cached = _gram_cache[(word, n)] = cut_grams(word, n)
    return cached


def char_grams(text: str, n: int = 4) -> list[str]:
    out: list[str] = []
    for word in split_words(text):
        if word not in STOPWORDS and word not in FILLER:
            out.extend(_word_grams(word, n))
    return out


_PROPER = re.compile(r"\b([A-Z][A-Za-z0-9]+)\b")
_WORD = re.compile(r"[^\W_]{2,}")  # letters and digits of any script


_SENTENCE_END = ".!?:"  # a capital after these starts a sentence ("... connector. Look for ..."), not a name
_OPENING = "\"'(`*"


def proper_names(query: str, acronyms: bool = True) -> set[str]:
    """Capitalised words that start no sentence and are not stopwords, stemmed. Any script's capitals count
    (Zoë, Émile, Łukasz), read NFKC-normalised as memdir.words splits memories. `acronyms=False`: without
    the words all in capitals (JSON, URLs, PDF), which name a kind of thing many notes mention, not one thing."""
    if query.isascii():
        found = [(m.group(1), m.start()) for m in _PROPER.finditer(query)]
    else:
        query = nfkc(query)
        found = [(m.group(0), m.start()) for m in _WORD.finditer(query) if m.group(0)[0].isupper()]
    names = set()
    for word, at in found:
        j = at - 1  # back over spaces and opening marks to what precedes the word (linear: no slice per word)
        while j >= 0 and (query[j].isspace() or query[j] in _OPENING):
            j -= 1
        if j < 0 or query[j] in _SENTENCE_END or (not acronyms and word.removesuffix("s").isupper()):
            continue
        if word.lower() not in STOPWORDS and word.lower() not in FILLER:
            names.add(stem(word.lower()))
    return names


NAME_WEIGHT, DESCRIPTION_WEIGHT = 3, 2
GRAM_WEIGHT = 1.0
FEEDBACK_DOCS, FEEDBACK_TERMS, FEEDBACK_WEIGHT = 5, 10, 0.5
NAME_BOOST = 0.6
TYPO_WEIGHT = 0.75  # a corrected word is probably, not surely, the word meant


def _normalised(scores: list[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [s / top for s in scores] if top > 0 else scores


COVERAGE_PSEUDO_DOCS = 50
# A word in at least COMMON_SHARE of a folder's memories (once it has COMMON_MIN_MEMORIES) is common to
# the folder: it still ranks, but never makes a match on its own (every note of a job-search folder
# says "apply", "pipeline" and "2026").
COMMON_SHARE, COMMON_MIN_MEMORIES = 0.25, 20  # as big as a folder must be to say what is typical
RARE_SHARE = 0.1  # a proper name in the prompt ("Gemini") found in at most this share of memories is what they are about
# The labels every memory's body carries (SPEC §2) are the format, not the memory's words. As text: compiled
# (and cached by re) when a memory is tokenised, which a prompt hook with the rank index rarely does.
_LABELS = r"\*\*(?:Why|How to apply):\*\*"
_UNCOUNTED = STOPWORDS | FILLER  # one set test per word instead of two


class Evidence:
    """Per memory, what the prompt's meaning-bearing words found in it (Ranker.evidence)."""

    __slots__ = ("share", "matched", "distinct", "titled", "named", "identified", "query_words", "chance", "solid",
                 "rare", "common")

    def __init__(self, n: int, query_words: int) -> None:
        self.share = [0.0] * n  # the share of the prompt's information (idf mass) it holds, in [0, 1]
        self.matched = [0] * n  # how many of the prompt's words it has
        self.distinct = [0] * n  # how many of those are not common to the folder
        self.titled = [False] * n  # one of those is in its name, is the job of a tool its title names, or is
        # a proper name in the prompt ("Gemini"): the memory is about what the prompt names
        self.named = [False] * n  # it holds a proper name of the prompt that few memories hold ("Twilio")
        self.identified = [False] * n  # it holds a file name or identifier of the prompt that few hold (offline)
        self.query_words = query_words  # the prompt's words, filler included: "thanks ... today" is not about today
        # What words alone can show, without the model (recall.offline.stands_on_words): the share held in
        # chance words (a single letter, bare number, file extension: memdir.words.chance_words); the share held
        # in the prompt's own words (neither those nor a misspelling's stand-in); and, per memory, those of them
        # that few memories hold (RARE_SHARE), each with its share (only memories that hold one are keys).
        self.chance = [0.0] * n
        self.solid = [0.0] * n
        self.rare: dict[int, list[tuple[str, float, bool]]] = {}  # (term, share, a proper name the prompt names)
        self.common: set[str] = set()  # the prompt's words (stems) common to the pool: none makes a match alone


class DocTokens:
    """One memory's words as the Ranker counts them: what recall.token_cache keeps on disk per memory."""

    __slots__ = ("words", "written", "gram_length", "names", "related")

    def __init__(self, words: dict[str, int], written: dict[str, int], gram_length: int, names: set[str],
                 related: set[str]) -> None:
        self.words = words  # stem -> count, the name's counted NAME_WEIGHT times, the description's DESCRIPTION_WEIGHT
        self.written = written  # each word as written -> count, weighted the same way (for n-grams and typos)
        self.gram_length = gram_length  # how many character 4-grams those words hold, counted the same way
        self.names = names  # the name's stems
        self.related = related  # what people call the job of the tools it names (recall.related)


def document_tokens(name: str, desc: str, kind: str, body: str) -> DocTokens:
    """A memory's (name, description, type, body) fields tokenised for ranking.

    Each distinct word is filtered and stemmed once, its count weighted at once: the same counts, in the
    same order (first appearance), as counting the stemmed word list, in half the time (issue 26: the
    warm server tokenises each new prompt's older matches)."""
    counted: dict[str, int] = {}  # stem -> count, weighted
    title: set[str] = set()
    names: set[str] = set()
    written: dict[str, int] = {}
    gram_length = 0
    stem_of = _stem_cache.get
    for text, weight in ((name, NAME_WEIGHT), (desc, DESCRIPTION_WEIGHT), (re.sub(_LABELS, " ", body), 1)):
        stems: list[str] = []
        for word, times in Counter(split_words(text)).items():
            if word in _UNCOUNTED:
                continue
            times *= weight
            written[word] = written.get(word, 0) + times
            # len(_word_grams(word, 4)) without cutting them: "#word#" holds len(word) - 1 4-grams, at least
            # one. Cutting every word of every memory was a third of tokenising one (and grew _gram_cache).
            gram_length += times * (len(word) - 1 or 1)
            stemmed = stem_of(word) or stem(word)
            counted[stemmed] = counted.get(stemmed, 0) + times
            stems.append(stemmed)
        if weight == NAME_WEIGHT:
            names = set(stems)
        if weight != 1:
            title.update(written.keys())  # the words as written: a tool's name (recall.related)
    related = jobs_of(title) - counted.keys()  # tools the memory is about, not every one a long note mentions
    for word in sorted(related):
        counted[word] = counted.get(word, 0) + 1
    if kind:
        counted[kind] = counted.get(kind, 0) + 1
    return DocTokens(counted, written, gram_length, names, related)


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Corpus(Protocol):
        """What Ranker asks of a pool's documents (DocCorpus here, recall.indexed_corpus.IndexedCorpus from disk)."""

        n: int

        def df(self, term: str) -> int: ...
        def idf(self, term: str) -> float | None: ...
        def postings(self, term: str) -> list[int]: ...
        def scores(self, terms: list[str]) -> list[float]: ...
        def gram_scores(self, grams: list[str]) -> list[float]: ...
        def term_idfs(self, i: int) -> Iterable[tuple[str, float]]: ...
        def names(self, i: int) -> set[str]: ...
        def related(self, i: int) -> set[str]: ...
        def written_stems(self) -> Iterable[tuple[str, str]]: ...
        def spelled(self, prefix: str) -> dict[str, str] | None: ...
        def spelled_at_least(self, prefix: str) -> int: ...


class DocCorpus:
    """A pool's documents as objects (DocTokens), with what Ranker asks of them: the warm server's, and a
    hook's when the rank index (recall.rank_index, which answers the same questions from disk) cannot."""

    def __init__(self, documents: Sequence[DocTokens]) -> None:
        self.documents = documents
        self.n = len(documents)
        docs = [d.words for d in documents]  # stem -> count
        self.words = BM25(counted=(docs, [sum(d.values()) for d in docs]))
        self.grams = GramBM25([d.written for d in documents], [d.gram_length for d in documents])
        self._typos = PrefixSpellings([d.written for d in documents])

    def df(self, term: str) -> int:
        return self.words.df.get(term, 0)

    def idf(self, term: str) -> float | None:
        return self.words.idf(term)

    def postings(self, term: str) -> list[int]:
        return self.words.postings(term)

    def scores(self, terms: list[str]) -> list[float]:
        return self.words.scores(terms)

    def gram_scores(self, grams: list[str]) -> list[float]:
        return self.grams.scores(grams)

    def term_idfs(self, i: int) -> Iterable[tuple[str, float]]:
        """Each of memory i's stems, once, with its idf (pseudo-relevance feedback weighs them)."""
        idf = self.words.idf
        return ((term, idf(term) or 0.0) for term in self.documents[i].words)

    def names(self, i: int) -> set[str]:
        return self.documents[i].names

    def related(self, i: int) -> set[str]:
        return self.documents[i].related

    def written_stems(self) -> Iterable[tuple[str, str]]:
        """Each word as written in the pool, with its stem (for typo correction)."""
        return ((w, stem(w)) for w in set().union(*(d.written for d in self.documents)))

    def spelled(self, prefix: str) -> dict[str, str] | None:
        return self._typos.spelled(prefix)  # Ranker.spellings()[prefix], that prefix's words alone stemmed

    def spelled_at_least(self, prefix: str) -> int:
        return self._typos.at_least(prefix)


class Ranker:
    """Ranks memories given as (name, description, type, body) fields, on their meaning-bearing words.
    `tokenised`: the fields' `document_tokens`, when already known (recall.token_cache); `corpus`: what
    Ranker asks of the documents, answered another way (recall.rank_index)."""

    def __init__(self, fields: Sequence[tuple[str, str, str, str]], tokenised: Sequence[DocTokens] | None = None,
                 corpus: Corpus | None = None) -> None:
        if corpus is None:
            corpus = DocCorpus(tokenised if tokenised is not None else [document_tokens(*f) for f in fields])
        self.corpus = corpus
        self.n = n = corpus.n
        self._spellings: dict[str, dict[str, str]] | None = None
        self._corrected: tuple[str, dict[str, str]] = ("", {})  # rank() and evidence() ask for the same query
        self._least = max(2.0, COMMON_SHARE * n) if n >= COMMON_MIN_MEMORIES else math.inf

    def is_common(self, term: str) -> bool:
        """Whether the term is in so many of the folder's memories that it never makes a match on its own."""
        return self.corpus.df(term) >= self._least

    def spellings(self) -> dict[str, dict[str, str]]:
        """First two letters -> {spelling: stem} (recall.spellings.table), built when the corpus cannot give one
        prefix's (most prompts have no unknown word)."""
        if self._spellings is None:
            self._spellings = table(self.corpus.written_stems())
        return self._spellings

    def corrections(self, query: str) -> dict[str, str]:
        """Query words no memory contains, each mapped to the stem of the folder word it most likely
        misspells (recall.spellings.corrections)."""
        if self._corrected[0] != query:
            self._corrected = (query, corrections(query, self.corpus, self.spellings))
        return self._corrected[1]

    def evidence(self, query: str) -> Evidence:
        """What each memory holds of the prompt's meaning-bearing words (filler never counts).

        `share` is the prompt's information (idf mass) the memory holds: absolute, unlike BM25
        scores. A prompt word no memory has counts at the highest idf, so an unknown topic ("the
        capital of Portugal") lowers every memory's share. A misspelt word stands for the folder's
        word it misspells, and a job word for the tool a memory names ("install the dependencies"
        for pnpm), each at part of its weight.
        """
        n, corpus = self.n, self.corpus
        stand_in = {stem(word): (right, TYPO_WEIGHT) for word, right in (self.corrections(query) if n else {}).items()}
        terms = set(meaning_tokens(query))
        out = Evidence(n, len(set(tokens(query))))
        rare = max(1.0, RARE_SHARE * n)
        proper = {t for t in proper_names(query) if corpus.df(t) <= rare}
        named = (proper & proper_names(query, acronyms=False)) if proper else proper
        if not terms or not n:
            return out
        # idf against the folder plus COVERAGE_PSEUDO_DOCS imagined memories without the word: in a small
        # folder every word a memory has is "common" (a one-memory folder gives it idf 0.29 against an
        # unseen word's 1.39), so the one memory that says "don't use npm" covered 4% of "install the
        # dependencies with npm" and was never recalled. Large folders barely change.
        looked_up = {t: stand_in.get(t, (t, 1.0)) for t in terms}
        size = n + COVERAGE_PSEUDO_DOCS
        df = {t: d for t, _ in looked_up.values() if (d := corpus.df(t))}
        idf_of = {t: math.log(1 + (size - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
        unseen = math.log(1 + (size + 0.5) / 0.5)
        total = sum(idf_of.get(t, unseen) for t, _ in looked_up.values())
        chance = {stem(w) for w in chance_words(query)}
        for typed, (term, weight) in looked_up.items():
            idf = idf_of.get(term)
            if idf is None:
                continue
            common = self.is_common(term)
            if common:
                out.common.add(term)
            by_chance = typed in chance
            solid = weight == 1.0 and not by_chance
            few = solid and df[term] <= rare
            for i in corpus.postings(term):
                related = term in corpus.related(i)
                part = (RELATED_WEIGHT if related else weight) * idf / total
                out.share[i] += part
                if by_chance:
                    out.chance[i] += part
                elif solid:
                    out.solid[i] += part
                    if few and not related:
                        out.rare.setdefault(i, []).append((term, part, term in named))
                out.matched[i] += 1
                if not common:
                    out.distinct[i] += 1
                    out.titled[i] = out.titled[i] or term in corpus.names(i) or related or term in proper
                    out.named[i] = out.named[i] or term in named
        return out

    def rank(self, query: str) -> list[tuple[int, float]]:
        """(index, score) for every memory with a positive score, best first."""
        fixed = {stem(word): right for word, right in self.corrections(query).items()}
        query_terms = [fixed.get(t, t) for t in meaning_tokens(query)]
        corpus = self.corpus
        scores = corpus.scores(query_terms)
        top = sorted(range(len(scores)), key=lambda i: -scores[i])[:FEEDBACK_DOCS]
        weights: dict[str, float] = {}
        for i in top:
            if scores[i] > 0:
                for term, idf in corpus.term_idfs(i):
                    weights[term] = weights.get(term, 0.0) + idf
        for term in query_terms:
            weights.pop(term, None)
        if weights:
            # Ties broken by the term itself: set order varies with string hashing between runs.
            best_terms = sorted(weights.items(), key=lambda pair: (-pair[1], pair[0]))[:FEEDBACK_TERMS]
            extra = corpus.scores([t for t, _ in best_terms])
            scores = [s + FEEDBACK_WEIGHT * e for s, e in zip(scores, extra, strict=True)]
        gram_scores = corpus.gram_scores(char_grams(query))
        fused = [w + GRAM_WEIGHT * g for w, g in zip(_normalised(scores), _normalised(gram_scores), strict=True)]
        names = proper_names(query)
        if names:
            # Only a memory that scored can gain (a boosted 0 is 0): its name's stems are read for those alone.
            fused = [s * (1 + NAME_BOOST) if s and names & corpus.names(i) else s for i, s in enumerate(fused)]
        ranked = [(i, s) for i, s in enumerate(fused) if s > 0]
        return sorted(ranked, key=lambda pair: -pair[1])
