"""The offline selector: lexical ranking fused with meaning (when the model is loaded), then a bar.

Selectivity: a memory is returned only when it clears an absolute relevance bar, so a prompt that
no memory helps gets none (an empty list is a fine answer), plus a floor relative to the best match.
In a folder big enough to have a typical cosine, it must also stand out from it. A memory written on
a day the prompt names ranks higher (memdir.dates).
The bars were picked on LoCoMo conversations 0-4 and on the recall eval cases that expect nothing
(benchmarks/recall_locomo.py --calibrate prints precision and hit@5 across bar values).
"""

from __future__ import annotations

import os
import re
import time

from memdir.dates import date, datetime, days_mentioned, timedelta
from memdir.scan import Header
from memdir.stages.recall.lexical import COMMON_MIN_MEMORIES, RARE_SHARE, Evidence, Ranker
from memdir.stages.recall.manifest import ranker
from memdir.words import holds_identifier, identifiers, meaning_tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

RELATIVE_FLOOR = 0.2  # drop matches scoring under this share of the best one: "only what clearly helps"
# Fusion and bars, picked on LoCoMo conversations 0-4 and the recall eval cases (5-9 held out):
LEXICAL_WEIGHT, DENSE_WEIGHT = 1.0, 1.0
DENSE_FLOOR_QUANTILE = 0.75  # cosines at or under this quantile of the folder add nothing
COVERAGE_BAR = 0.10  # share of the prompt's idf mass (Ranker.evidence) a memory must hold,
MIN_WORDS_MATCHED = 2  # in at least this many of the prompt's words (one shared "capital" or "tomorrow" is chance),
# unless the one shared word is in the memory's name (a memory named for npm is about npm); filler never
# counts, and at least one shared word must not be common to the folder (recall.lexical: issue 21).
# Without any cosine for the prompt (no model, the recall server down, no vectors for the folder yet), words
# must also show what a cosine would: a single letter, a bare number or a file extension ("x", "20", "py" of
# utils.py: memdir.words.chance_words) and a misspelling's stand-in never count, and a memory passes only if
# the words it holds carry WORDS_ALONE_SHARE of the prompt's information, or if those of them few memories hold
# (at most RARE_SHARE of a folder of COMMON_MIN_MEMORIES or more) and its name or description says (or that are
# a proper name of the prompt, "did I ever apply to Twilio?": Evidence.named) carry
# TITLED_RARE_SHARE (issue 21: "rename the variable x to count in utils.py" passed five session notes on x,
# count and py; "what is the capital of Portugal?" three that mention venture capital). Chosen on the
# development sets 1, 2 and 5 (benchmarks/recall_realdata.py --dev-only), offline lexical: precision
# 0.27 -> 0.58, recall 0.67 -> 0.35, off-topic prompts silent 4 -> 11 of 11 (the dense path's 0.57 / 0.52 /
# 11); LoCoMo 0-4 hit@5 0.758 -> 0.712. 3 or more rare words as a third way in (replayed) kept more recall but
# left 2 off-topic prompts loud. Held out: set 3 0.38 / 1.00 -> 0.58 / 0.44 (silent 1 -> 3 of 4), set 4 0.22 /
# 0.83 -> 1.00 / 0.50 (0 -> 4 of 4), LoCoMo 5-9 0.710 -> 0.668 (docs/evals-and-benchmarks.md). In a smaller
# folder rarity says nothing: there only the chance words are left out.
WORDS_ALONE_SHARE = 0.7
TITLED_RARE_SHARE = 0.2
SIMILARITY_FLOOR = 0.80  # and, with the model, at least this e5 cosine (a lone shared word is not meaning),
# in a folder too small to say what is typical: in a bigger one, standing out from its median (MARGIN_WORDED)
# replaces it, as a cosine's level moves with the prompt (LoCoMo 0-4: "What did the posters at the poetry
# reading say?" shares two rare words with the one memory about it, 0.07 above the median, at 0.798)
SIMILARITY_BAR = 0.83  # or a cosine this high alone (no recall eval case expecting nothing reaches 0.822)
# How high a cosine is depends on the folder's writing (long session notes all sit near 0.82 to any
# prompt), so in a folder big enough to say what "typical" is, a memory must also stand out from the
# folder's median cosine for this prompt: by MARGIN_ALONE to pass on meaning alone, by MARGIN_WORDED
# with shared words. On the real 55-file folder's development prompts (benchmarks/realdata_recall.yaml
# sets 1-2) the memories a reader wants stand out by 0.025-0.08, most of the others by under 0.024;
# LoCoMo's one-line memories stand out by 0.05 and more, so these bars leave it as it was.
MARGIN_MIN_MEMORIES = 20
MARGIN_ALONE, MARGIN_WORDED = 0.04, 0.02
# And there, the prompt must be about something the folder holds: its closest memory in meaning stands out
# from the median by PROMPT_MARGIN, or no memory is recalled on words (a dated one still is). On the
# development prompts the closest memory stood out by 0.038-0.082 where it was gold, and by at most 0.0295
# where the prompt was off-topic or no memory helped ("rename the loop variable i in this bash script"
# matched two words of two session notes, which then passed MARGIN_WORDED at 0.022-0.027); on LoCoMo 0-4
# the bar changes nothing below 0.04. Measured once on held-out set 3 (not tuned on): 2 fewer picks, one of
# them gold (precision 0.72 -> 0.75, recall 0.81 -> 0.75); LoCoMo 5-9 unchanged.
PROMPT_MARGIN = 0.03
# There too, a memory holding a proper name the prompt names that few memories hold (recall.lexical:
# Evidence.named, "did I ever apply to Twilio?") is what the prompt is about when it holds at least
# NAMED_SHARE of the prompt's information, however its cosine compares: e5 puts a long session note that
# mentions Twilio once under the folder's median for that prompt.
# Chosen on the development sets 1, 2 and 5 (benchmarks/recall_realdata.py --dev-only): 0.2, 0.3 and 0.4 each
# recall 4-5 more gold files for 1-2 more wrong picks, every off-topic prompt still silent; 0.3 is the middle.
NAMED_SHARE = 0.3
# So does a file name or code identifier the prompt names ("apply.py", "tests/test_x.py", `flush_stale_jobs`),
# held whole by at most RARE_SHARE of the folder (`mark_identified`): "apply.py filled in Yes for a question
# ..." stands out from no memory in meaning, and the one session note that says which apply.py function did it
# holds half of its information. On the development sets 6 of 25 on-topic prompts name one (no LoCoMo 0-4
# question does); any share from 0 to 0.4 gives the same picks there, so NAMED_SHARE serves both.
# In a smaller folder, meaning alone needs a shared word or to be the closest memory (its lead over
# the next one is over SMALL_LEAD): in a one-memory folder "rename the repo" reaches 0.83 to "never use
# npm in this repo", and e5 puts "No recap at the end of replies" within 0.001 of the memory a prompt
# about the user's kids wants, so only the closest one may pass on a cosine alone.
SMALL_LEAD = 0.0
# A prompt that names a day or month ("on 1 May, 2022", "in August 2025", "yesterday") is about what was
# written then: a memory last written within DATE_SLACK_DAYS of it ranks DATE_WEIGHT higher (1.0 = as
# much as the best lexical match) and clears the bar, if its words or meaning already put it within
# RELATIVE_FLOOR of the best match.
DATE_WEIGHT = 1.0
DATE_SLACK_DAYS = 1
# A day (or span) on which most of a big folder was last written tells its memories apart no better than
# chance: a folder restored from git or chezmoi has every file written "last week", and "the recruiter I
# contacted last week" then passed 5 of 5 memories on the date alone. (On LoCoMo 0-4 a named month covers
# at most 29% of a conversation's memories, so the bar leaves it as it was.)
DATE_COMMON_SHARE = 0.5
# As text, these two: compiled (and cached by re) when a prompt needs them, not by every hook's import (~0.4 ms).
_USAGE_DOC = r"(?i)\b(?:usage|how to use|guide|manual|docs?|reference for|instructions for)\b"
_GOTCHA = r"(?i)\b(?:gotcha|warning|careful|pitfall|bug|breaks?|broken|hangs?|fails?|never|don'?t|avoid|beware|caveat)\b"


def is_usage_doc(header: Header) -> bool:
    """A how-to (not its gotchas): what is_tool_usage_doc asks first, before the tools in use are known."""
    text = f"{header.name or ''} {header.description or ''}"
    return bool(re.search(_USAGE_DOC, text)) and not re.search(_GOTCHA, text)


def is_tool_usage_doc(header: Header, tools: list[str]) -> bool:
    """A how-to for a tool the agent is already using (it knows how); its gotchas are still wanted."""
    text = f"{header.name or ''} {header.description or ''}"
    return is_usage_doc(header) and any(re.search(rf"\b{re.escape(tool)}\b", text, re.I) for tool in tools)


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
    on_day = [day is not None and any(first <= day <= last for first, last in spans) for day in days]
    if len(headers) >= MARGIN_MIN_MEMORIES and sum(on_day) > DATE_COMMON_SHARE * len(headers):
        return [False] * len(headers)  # a date most of the folder was written on (a fresh clone) says nothing
    return on_day


def stands_on_words(found: Evidence, i: int, header: Header) -> bool:
    """Whether memory `i`'s words alone show it is what the prompt is about, for a prompt no cosine judges:
    its own words (not chance_words) carry WORDS_ALONE_SHARE of the prompt's information, or the rare ones among
    them that its name or description says carry TITLED_RARE_SHARE (see the constants)."""
    if len(found.share) < COMMON_MIN_MEMORIES:
        return found.share[i] - found.chance[i] >= COVERAGE_BAR  # too few memories to say what is rare
    if found.solid[i] >= WORDS_ALONE_SHARE:
        return True
    rare = found.rare.get(i)
    if not rare:
        return False
    title = set(meaning_tokens(f"{header.name or ''}\n{header.description or ''}"))
    return sum(part for term, part, named in rare if named or term in title) >= TITLED_RARE_SHARE


def relevant(found: Evidence, i: int, similarity: float | None, dated: bool = False,
             margin: float | None = None, lead: float | None = None, about: bool = True,
             words_only: Header | None = None) -> bool:
    """The absolute bar for memory `i`: enough of the prompt's meaning-bearing words (and, with the
    model, not far in meaning), or very close in meaning, or written on the day the prompt asks about
    (the ranking already required some match). A memory without a vector yet is judged by its words.
    `margin`: the cosine minus the folder's median cosine (None in a folder too small to say);
    `lead`: there, the cosine minus the best other memory's (None when it is the only one);
    `about`: whether the prompt is about anything in the folder (`about_folder`); `words_only`: the memory's
    header when no memory has a cosine for the prompt, and words alone must show a match (`stands_on_words`)."""
    if dated:
        return True
    if margin is not None and (found.named[i] or found.identified[i]) and found.share[i] >= NAMED_SHARE:
        return True
    if not about and similarity is not None:
        return False
    worded = (found.share[i] >= COVERAGE_BAR and found.distinct[i] >= 1
              and (found.titled[i] or found.matched[i] >= min(MIN_WORDS_MATCHED, found.query_words)))
    if similarity is None:
        return worded and (words_only is None or stands_on_words(found, i, words_only))
    if margin is None:
        if worded:
            return similarity >= SIMILARITY_FLOOR
        return similarity >= SIMILARITY_BAR and (found.distinct[i] >= 1 or (lead is not None and lead > SMALL_LEAD))
    return ((worded and margin >= MARGIN_WORDED)
            or (similarity >= SIMILARITY_BAR and margin >= MARGIN_ALONE))


def _margins(similarities: list[float | None]) -> list[float | None]:
    """Each cosine minus the folder's median cosine, or None when too few memories have one."""
    known = sorted(s for s in similarities if s is not None)
    if len(known) < MARGIN_MIN_MEMORIES:
        return [None] * len(similarities)
    median = _median(known)
    return [None if s is None else s - median for s in similarities]


def about_folder(margins: list[float | None]) -> bool:
    """Whether the memory closest in meaning stands out from the folder's median by PROMPT_MARGIN
    (True when no margin is known: without the model, or in a folder too small to say what is typical)."""
    known = [m for m in margins if m is not None]
    return not known or max(known) >= PROMPT_MARGIN


def _leads(similarities: list[float | None]) -> list[float | None]:
    """Each cosine minus the highest other one (None without a cosine or another memory to compare)."""
    known = sorted((s for s in similarities if s is not None), reverse=True)
    if len(known) < 2:
        return [None] * len(similarities)
    return [None if s is None else s - (known[1] if s == known[0] else known[0]) for s in similarities]


def _median(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class Signals:
    """What the selector knows of a prompt's pool before its bar (`signals`), per memory by index."""

    __slots__ = ("scores", "lexical", "boosts", "similarities", "found", "dated", "margins", "leads", "about", "order",
                 "words_only")

    def __init__(self, scores: list[float], lexical: list[float], boosts: list[float],
                 similarities: list[float | None], found: Evidence, dated: list[bool], margins: list[float | None],
                 leads: list[float | None], about: bool, order: list[int]) -> None:
        self.scores, self.lexical, self.boosts, self.similarities = scores, lexical, boosts, similarities
        self.found, self.dated, self.margins, self.leads, self.about = found, dated, margins, leads, about
        self.order = order  # the memories with a positive score, best first
        self.words_only = all(s is None for s in similarities)  # no cosine at all: words must stand on their own

    def header_if_words_only(self, headers: list[Header], i: int) -> Header | None:
        """`relevant`'s words_only: memory i's header when no memory has a cosine for the prompt."""
        return headers[i] if self.words_only else None


def mark_identified(found: Evidence, query: str, headers: list[Header], lexical: Ranker) -> None:
    """Mark (Evidence.identified) each memory that holds a file name or code identifier the prompt names
    ("apply.py", `flush_stale_jobs`) whole, when at most RARE_SHARE of the pool holds it. Only the memories the
    index says hold all of its words are read, and only for a prompt that names one."""
    rare = max(1.0, RARE_SHARE * len(headers))
    for name in identifiers(query):
        parts = meaning_tokens(name)
        if not parts:
            continue
        pool = set(lexical.corpus.postings(parts[0]))
        for part in parts[1:]:
            pool.intersection_update(lexical.corpus.postings(part))
        holders: list[int] = []
        for i in pool:
            if holds_identifier(_text(headers[i]), name):
                holders.append(i)
                if len(holders) > rare:
                    break  # common to the folder: no need to read the rest
        if len(holders) <= rare:
            for i in holders:
                found.identified[i] = True


def _text(header: Header) -> str:
    return f"{header.name or ''}\n{header.description or ''}\n{header.excerpt}".lower()


def signals(query: str, headers: list[Header],
            similarities: list[float | None] | Callable[[], list[float | None] | None] | None = None,
            now: float | None = None, token_cache: str | os.PathLike | None = None) -> Signals:
    """The lexical ranking fused with the cosines (and a named day), and what the bars read: `select_offline`'s
    steps up to its bar (see there for `similarities`)."""
    lexical = ranker(headers, token_cache)
    ranked = lexical.rank(query)
    found = lexical.evidence(query)
    mark_identified(found, query, headers, lexical)
    if callable(similarities):
        similarities = similarities()
    best_lexical = ranked[0][1] if ranked else 0.0
    scores = [0.0] * len(headers)
    for i, score in ranked:
        scores[i] = LEXICAL_WEIGHT * score / best_lexical
    lexical_scores = scores[:]
    boosts = [0.0] * len(headers)
    if similarities is not None and any(s is not None for s in similarities):
        boosts = _dense_boost(similarities)
        for i, boost in enumerate(boosts):
            scores[i] += DENSE_WEIGHT * boost
        extra = getattr(similarities, "extra", None)  # a second model's cosines, for ranking only (embed_models)
        if extra is not None:
            weight = getattr(similarities, "weight", 0.0)
            for i, boost in enumerate(_dense_boost(extra)):
                scores[i] += weight * boost
    else:
        similarities = [None] * len(headers)
    # The date adds to a match; alone it is not one (nor is the faint score feedback terms give everything).
    least = RELATIVE_FLOOR * max(scores, default=0.0)
    dated = [on_day and score > 0 and score >= least
             for on_day, score in zip(written_on_named_day(headers, query, now), scores, strict=True)]
    for i in (i for i, on_day in enumerate(dated) if on_day):
        scores[i] += DATE_WEIGHT
    margins = _margins(similarities)
    order = sorted((i for i in range(len(headers)) if scores[i] > 0), key=lambda i: -scores[i])
    return Signals(scores, lexical_scores, boosts, similarities, found, dated, margins, _leads(similarities),
                   about_folder(margins), order)


def common_words(query: str, headers: list[Header], token_cache: str | os.PathLike | None = None) -> set[str]:
    """The prompt's words (stems) common to `headers`, which make no match on their own: what `select_offline`'s
    `common` gets, for a selection made by a model (recent decisions face the same bar as memories)."""
    return set(signals(query, headers, None, None, token_cache).found.common)


def select_offline(query: str, headers: list[Header], limit: int = 5,
                   tools: list[str] | Callable[[], list[str]] | None = None,
                   similarities: list[float | None] | Callable[[], list[float | None] | None] | None = None,
                   now: float | None = None, token_cache: str | os.PathLike | None = None,
                   common: set[str] | None = None) -> list[Header]:
    """The memories that clear the relevance bar, best first, at most `limit`.

    `similarities`: the dense model's cosine per header (None where no vector is cached yet), or what
    gives them, asked once the lexical ranking is done: the warm server's query embedding (C code, which
    releases the GIL) is then computed while the lexical ranking runs, not before it. Without them the
    ranking is lexical only. `tools`: the tools in use, or what reads them (the transcript's tail), asked only
    when a how-to is among the best matches. `token_cache`: see recall.manifest.ranker. `common`: gets the
    prompt's words (stems) that are common to the pool, which make no match on their own (recall.lexical).
    """
    sig = signals(query, headers, similarities, now, token_cache)
    if common is not None:
        common.update(sig.found.common)
    order, scores = sig.order, sig.scores
    vectors = getattr(sig.similarities, "vectors", None)  # only when MEMDIR_DENSE_DIVERSITY asks (embed_models)
    if vectors is not None:
        from memdir.embed_models import diverse

        order = diverse(order, scores, vectors, getattr(similarities, "diversity", 0.0))
    if tools:  # only as far as the first `limit` kept: each test is a few regex searches (200 per prompt cost ~2 ms)
        in_use = None if callable(tools) else tools
        kept: list[int] = []
        for i in order:
            if len(kept) == limit:
                break
            if is_usage_doc(headers[i]):
                in_use = tools() if in_use is None and callable(tools) else in_use
                if is_tool_usage_doc(headers[i], in_use or []):
                    continue
            kept.append(i)
        order = kept
    if not order:
        return []
    best = scores[order[0]]
    return [headers[i] for i in order[:limit] if scores[i] >= best * RELATIVE_FLOOR
            and relevant(sig.found, i, sig.similarities[i], sig.dated[i], sig.margins[i], sig.leads[i], sig.about,
                         sig.header_if_words_only(headers, i))]
