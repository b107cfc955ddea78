"""The offline selector: lexical ranking fused with meaning (when the model is loaded), then a bar.

Selectivity: a memory is returned only when it clears an absolute relevance bar, so a prompt that
no memory helps gets none (an empty list is a fine answer), plus a floor relative to the best match.
In a folder big enough to have a typical cosine, it must also stand out from it. A memory written on
a day the prompt names ranks higher (memdir.dates).
The bars were picked on LoCoMo conversations 0-4 and on the recall eval cases that expect nothing
(benchmarks/recall_locomo.py --calibrate prints precision and hit@5 across bar values).
"""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta

from memdir.dates import days_mentioned
from memdir.scan import Header
from memdir.stages.recall.manifest import ranker

RELATIVE_FLOOR = 0.2  # drop matches scoring under this share of the best one: "only what clearly helps"
# Fusion and bars, picked on LoCoMo conversations 0-4 and the recall eval cases (5-9 held out):
LEXICAL_WEIGHT, DENSE_WEIGHT = 1.0, 1.0
DENSE_FLOOR_QUANTILE = 0.75  # cosines at or under this quantile of the folder add nothing
COVERAGE_BAR = 0.10  # share of the prompt's idf mass (Ranker.coverage) a memory must hold,
MIN_WORDS_MATCHED = 2  # in at least this many of the prompt's words (one shared "capital" or "tomorrow" is chance),
# unless the one shared word is in the memory's name (a memory named for npm is about npm)
SIMILARITY_FLOOR = 0.80  # and, with the model, at least this e5 cosine (a lone shared word is not meaning);
SIMILARITY_BAR = 0.83  # or a cosine this high alone (no recall eval case expecting nothing reaches 0.822)
# How high a cosine is depends on the folder's writing (long session notes all sit near 0.82 to any
# prompt), so in a folder big enough to say what "typical" is, a memory must also stand out from the
# folder's median cosine for this prompt: by MARGIN_ALONE to pass on meaning alone, by MARGIN_WORDED
# with shared words. On the real 55-file folder no off-topic prompt's best memory stands out by
# 0.028; relevant ones mostly do by 0.03-0.08.
MARGIN_MIN_MEMORIES = 20
MARGIN_ALONE, MARGIN_WORDED = 0.03, 0.01
# A prompt that names a day or month ("on 1 May, 2022", "in August 2025", "yesterday") is about what was
# written then: a memory last written within DATE_SLACK_DAYS of it ranks DATE_WEIGHT higher (1.0 = as
# much as the best lexical match) and clears the bar, if its words or meaning already put it within
# RELATIVE_FLOOR of the best match.
DATE_WEIGHT = 1.0
DATE_SLACK_DAYS = 1
_USAGE_DOC = re.compile(r"\b(?:usage|how to use|guide|manual|docs?|reference for|instructions for)\b", re.I)
_GOTCHA = re.compile(
    r"\b(?:gotcha|warning|careful|pitfall|bug|breaks?|broken|hangs?|fails?|never|don'?t|avoid|beware|caveat)\b", re.I
)


def is_tool_usage_doc(header: Header, tools: list[str]) -> bool:
    """A how-to for a tool the agent is already using (it knows how); its gotchas are still wanted."""
    text = f"{header.name or ''} {header.description or ''}"
    mentions = any(re.search(rf"\b{re.escape(tool)}\b", text, re.I) for tool in tools)
    return mentions and bool(_USAGE_DOC.search(text)) and not _GOTCHA.search(text)


def _dense_boost(similarities: list[float | None]) -> list[float]:
    """Cosine similarities rescaled per query: the folder's upper quartile 0, the closest memory 1.

    e5's cosines crowd into a narrow band (0.75-0.9) whose position moves with the query, so only
    their spread within this folder says which memories stand out.
    """
    known = sorted(s for s in similarities if s is not None)
    if not known:
        return [0.0] * len(similarities)
    floor, top = known[int((len(known) - 1) * DENSE_FLOOR_QUANTILE)], known[-1]
    span = top - floor
    if span <= 0:
        return [0.0] * len(similarities)
    return [0.0 if s is None else max(0.0, (s - floor) / span) for s in similarities]


def written_on_named_day(headers: list[Header], query: str, now: float | None = None) -> list[bool]:
    """Per memory, whether it was last written on (or within DATE_SLACK_DAYS of) a day the query names."""
    spans = days_mentioned(query, date.fromtimestamp(now if now is not None else time.time()))
    if not spans:
        return [False] * len(headers)
    slack = timedelta(days=DATE_SLACK_DAYS)
    spans = [(first - slack, last + slack) for first, last in spans]
    days = [datetime.fromtimestamp(h.mtime).date() if h.mtime else None for h in headers]
    return [day is not None and any(first <= day <= last for first, last in spans) for day in days]


def relevant(coverage: float, similarity: float | None, dated: bool = False, words_matched: int = MIN_WORDS_MATCHED,
             query_words: int = MIN_WORDS_MATCHED, margin: float | None = None, named: bool = False) -> bool:
    """The absolute bar: enough of the prompt's rare words (and, with the model, not far in
    meaning), or very close in meaning, or written on the day the prompt asks about (the ranking
    already required some match). A memory without a vector yet is judged by its words.
    `margin`: the cosine minus the folder's median cosine (None in a folder too small to say)."""
    if dated:
        return True
    worded = coverage >= COVERAGE_BAR and (named or words_matched >= min(MIN_WORDS_MATCHED, query_words))
    if similarity is None:
        return worded
    if margin is None:
        return (worded and similarity >= SIMILARITY_FLOOR) or similarity >= SIMILARITY_BAR
    return ((worded and similarity >= SIMILARITY_FLOOR and margin >= MARGIN_WORDED)
            or (similarity >= SIMILARITY_BAR and margin >= MARGIN_ALONE))


def _margins(similarities: list[float | None]) -> list[float | None]:
    """Each cosine minus the folder's median cosine, or None when too few memories have one."""
    known = sorted(s for s in similarities if s is not None)
    if len(known) < MARGIN_MIN_MEMORIES:
        return [None] * len(similarities)
    middle = len(known) // 2
    median = known[middle] if len(known) % 2 else (known[middle - 1] + known[middle]) / 2
    return [None if s is None else s - median for s in similarities]


def select_offline(query: str, headers: list[Header], limit: int = 5, tools: list[str] | None = None,
                   similarities: list[float | None] | None = None, now: float | None = None) -> list[Header]:
    """The memories that clear the relevance bar, best first, at most `limit`.

    `similarities`: the dense model's cosine per header (None where no vector is cached yet);
    without them the ranking is lexical only.
    """
    lexical = ranker(headers)
    ranked = lexical.rank(query)
    best_lexical = ranked[0][1] if ranked else 0.0
    scores = [0.0] * len(headers)
    for i, score in ranked:
        scores[i] = LEXICAL_WEIGHT * score / best_lexical
    if similarities is not None and any(s is not None for s in similarities):
        for i, boost in enumerate(_dense_boost(similarities)):
            scores[i] += DENSE_WEIGHT * boost
    else:
        similarities = [None] * len(headers)
    # The date adds to a match; alone it is not one (nor is the faint score feedback terms give everything).
    least = RELATIVE_FLOOR * max(scores, default=0.0)
    dated = [on_day and score > 0 and score >= least
             for on_day, score in zip(written_on_named_day(headers, query, now), scores, strict=True)]
    for i in (i for i, on_day in enumerate(dated) if on_day):
        scores[i] += DATE_WEIGHT
    coverage, words_matched, query_words = lexical.coverage(query)
    named = lexical.named(query)
    margins = _margins(similarities)
    order = sorted((i for i in range(len(headers)) if scores[i] > 0), key=lambda i: -scores[i])
    if tools:
        order = [i for i in order if not is_tool_usage_doc(headers[i], tools)]
    if not order:
        return []
    best = scores[order[0]]
    return [headers[i] for i in order[:limit] if scores[i] >= best * RELATIVE_FLOOR
            and relevant(coverage[i], similarities[i], dated[i], words_matched[i], query_words, margins[i], named[i])]
