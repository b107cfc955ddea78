"""A multilingual meaning signal for the offline engine: the sentences the user wrote that the rules left, scored by
the dense model (multilingual-e5-small, memdir/embeddings.py) against labelled example sentences
(offline_dense_examples.yaml: positives per memory type, and negatives said for the moment).

A sentence is kept when its nearest examples are a memory type's, by a margin over the negatives; it is saved in the
user's own words (the sentence), with that type, and goes through the same write gate as every offline draft. It
reads what the rules read (extractor/offline.py hands it each message's own prose, never assistant text, tool output,
pasted material or harness text), and also sentences in languages the rules do not cover.

Runs only in the background extraction (never on the hook path), only when the model is installed and
MEMDIR_OFFLINE_DENSE is on (C.OFFLINE_DENSE_DEFAULT says whether unset means on), at most
C.OFFLINE_DENSE_MAX_SENTENCES sentences per window. Measured figures: docs/evals-and-benchmarks.md.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memdir import constants as C
from memdir.stages.extractor import offline_lang as lang
from memdir.stages.extractor.drafts import Draft
from memdir.stages.extractor.offline_multilingual import one_off, task_at_hand

EXAMPLES = Path(__file__).with_name("offline_dense_examples.yaml")
TYPES = ("user", "feedback", "project", "reference")
NEGATIVE = "negative"
TOP_K = 3  # a label's score: the mean cosine of the sentence's K nearest examples of that label
MIN_SCORE = 0.86  # the nearest type's score must reach this (e5 cosines sit between ~0.7 and 1)
MIN_MARGIN = 0.02  # ... and beat the negatives' score by this much
MIN_CHARS, MAX_CHARS = 15, 300  # shorter says too little to file; longer is a paragraph, not one statement

Embed = Callable[[list[str]], Any]  # texts -> an (n, dim) array of unit vectors


def wanted() -> bool:
    """Whether the signal runs: the model is installed and not switched off (MEMDIR_DENSE), and MEMDIR_OFFLINE_DENSE
    is on (unset: C.OFFLINE_DENSE_DEFAULT)."""
    from memdir.embeddings import installed

    value = os.environ.get(C.OFFLINE_DENSE_ENV)
    on = C.OFFLINE_DENSE_DEFAULT if value is None else value.strip().lower() not in C.SWITCHED_OFF
    return on and installed()


def load_examples(path: Path = EXAMPLES) -> dict[str, list[str]]:
    """The labelled examples, label -> sentences (the four memory types and "negative")."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != {*TYPES, NEGATIVE}:
        raise ValueError(f"{path}: expected the labels {', '.join((*TYPES, NEGATIVE))}, each with a list of sentences")
    return {label: [str(s) for s in sentences] for label, sentences in data.items()}


class Verdict:
    """How one sentence scored: the nearest memory type, its score, the negatives' score."""

    __slots__ = ("label", "score", "negative")

    def __init__(self, label: str, score: float, negative: float) -> None:
        self.label, self.score, self.negative = label, score, negative

    @property
    def kept(self) -> bool:
        return self.score >= MIN_SCORE and self.score - self.negative >= MIN_MARGIN

    def __repr__(self) -> str:
        return f"Verdict({self.label}, {self.score:.3f}, neg {self.negative:.3f})"


class Scorer:
    """Scores sentences against the examples; the examples' vectors are computed once per Scorer."""

    def __init__(self, embed: Embed, examples: dict[str, list[str]] | None = None) -> None:
        import numpy as np

        self.embed = embed
        examples = examples if examples is not None else load_examples()
        self.labels = [label for label, sentences in examples.items() for _ in sentences]
        self.matrix = np.asarray(embed([s for sentences in examples.values() for s in sentences]))

    def score(self, sentences: Sequence[str]) -> list[Verdict]:
        import numpy as np

        if not sentences:
            return []
        sims = np.asarray(self.embed(list(sentences))) @ self.matrix.T
        labels = np.asarray(self.labels)
        verdicts = []
        for row in sims:
            per_label = {}
            for label in (*TYPES, NEGATIVE):
                values = np.sort(row[labels == label])[::-1][:TOP_K]
                per_label[label] = float(values.mean()) if len(values) else -1.0
            best = max(TYPES, key=lambda t: per_label[t])
            verdicts.append(Verdict(best, per_label[best], per_label[NEGATIVE]))
        return verdicts


_scorers: dict[int, Scorer] = {}


def shared_scorer() -> Scorer | None:
    """The process's scorer over the shared dense model, or None when the model does not load."""
    from memdir.embeddings import shared_model

    model = shared_model(threads=1)
    if model is None:
        return None
    key = id(model)
    if key not in _scorers:
        engine = model.engine
        _scorers[key] = Scorer(lambda texts: engine.query([t[: C.DENSE_QUERY_CHARS] for t in texts]))
    return _scorers[key]


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def candidate(sentence: str) -> bool:
    """Whether a sentence the user wrote may be scored: a statement of some length, not a question, and not a request
    the rules already know to be for the moment."""
    text = sentence.strip()
    if not MIN_CHARS <= len(text) <= MAX_CHARS or lang.is_question(text):
        return False
    return not (one_off(text) or task_at_hand(text))


def covered(sentence: str, drafts: Sequence[Draft]) -> bool:
    """Whether a rule draft already holds most of this sentence's words (the rules found it: nothing to add)."""
    words = _words(sentence)
    return bool(words) and any(len(words & _words(d.rule)) >= 0.6 * len(words) for d in drafts)


class Window:
    """The sentences of one extraction window the rules left, collected message by message, scored at the end in one
    batch: `add` each message, then `drafts()`."""

    def __init__(self, scorer: Scorer | None, limit: int = C.OFFLINE_DENSE_MAX_SENTENCES) -> None:
        self.scorer = scorer
        self.limit = limit
        self.pending: list[tuple[str, Any]] = []  # (sentence, the message's provenance)
        self.skipped = 0  # candidates past the limit
        self.seconds = 0.0

    def add(self, sentences: Sequence[str], found: Sequence[Draft], provenance: Any) -> None:
        for sentence in sentences:
            text = " ".join(sentence.split())
            if not candidate(text) or covered(text, found):
                continue
            if len(self.pending) >= self.limit:
                self.skipped += 1
                continue
            self.pending.append((text, provenance))

    def drafts(self) -> list[tuple[Draft, Any]]:
        """The drafts kept, each with the provenance `add` was given for its message."""
        if self.scorer is None or not self.pending:
            return []
        started = time.monotonic()
        verdicts = self.scorer.score([text for text, _ in self.pending])
        self.seconds = time.monotonic() - started
        out = []
        for (text, provenance), verdict in zip(self.pending, verdicts, strict=True):
            if verdict.kept:
                out.append((Draft(verdict.label, text.rstrip(" .!。！"), kind="dense"), provenance))
        return out
