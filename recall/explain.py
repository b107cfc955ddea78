"""Why each memory passed the offline selector's bar for a prompt, or did not (`memdir ui`'s recall preview).

It walks the same steps as `offline.select_offline`, with the same functions and constants, and says
at each step which memories it let through; tests/test_ui_data.py checks that the memories it passes are
exactly the ones `select_offline` returns.
"""

from __future__ import annotations

from pathlib import Path

from memdir.record import Record, field
from memdir.scan import Header
from memdir.stages.recall import offline as O


class Verdict(Record):
    header: Header
    passed: bool
    score: float  # share of the best match's score, 0..1 (0: no match at all)
    reasons: list[str] = field(default_factory=list)


def shared_words(query: str, headers: list[Header]) -> list[list[str]]:
    """Per memory, the prompt's own words (as typed) whose stem it holds: what `Ranker.evidence` counts."""
    from memdir.words import FILLER, STOPWORDS, split_words, stem

    lexical = O.ranker(headers)
    fixed = lexical.corrections(query)  # a misspelt word stands for the folder's word
    out: list[list[str]] = [[] for _ in headers]
    for word in dict.fromkeys(split_words(query)):
        if word in STOPWORDS or word in FILLER:
            continue
        for i in lexical.corpus.postings(fixed.get(word, stem(word))):
            out[i].append(word)
    return out


def _bar_reasons(found, i: int, similarity: float | None, margin: float | None, shared: list[str]) -> list[str]:
    """What the absolute bar saw for memory `i` (offline.relevant), in words."""
    words = found.matched[i]
    named = f" ({', '.join(shared)})" if shared else ""
    out = [f"matches {words} of the prompt's {found.query_words} word(s){named}, "
           f"{found.share[i]:.0%} of its information (bar {O.COVERAGE_BAR:.0%})"]
    if found.distinct[i] < 1:
        out.append("every shared word is common to this folder")
    if found.named[i]:
        out.append(f"it holds a name the prompt names that few memories hold (with {O.NAMED_SHARE:.0%} of the "
                   "prompt's information, enough however close in meaning)")
    if found.identified[i]:
        out.append(f"it holds a file name or identifier the prompt names that few memories hold (with "
                   f"{O.NAMED_SHARE:.0%} of the prompt's information, enough however close in meaning)")
    if found.titled[i]:
        out.append("a shared word is in its name")
    elif words < min(O.MIN_WORDS_MATCHED, found.query_words):
        out.append(f"fewer than {O.MIN_WORDS_MATCHED} shared words and none in its name")
    if similarity is not None:
        if margin is None:
            out.append(f"cosine {similarity:.3f} (floor {O.SIMILARITY_FLOOR}, alone {O.SIMILARITY_BAR})")
        else:  # a big folder: standing out from its median replaces the floor (offline.relevant)
            out.append(f"cosine {similarity:.3f} (alone {O.SIMILARITY_BAR}), {margin:+.3f} from the folder's median "
                       f"(bar {O.MARGIN_WORDED} with words, {O.MARGIN_ALONE} alone)")
    return out


def _words_only_reason(found, i: int, header: Header) -> str:
    """What offline.stands_on_words saw, when no memory has a cosine for the prompt."""
    if len(found.share) < O.COMMON_MIN_MEMORIES:
        return (f"without the model: {found.share[i] - found.chance[i]:.0%} of the prompt's information without its "
                f"single letters, numbers and file extensions (bar {O.COVERAGE_BAR:.0%})")
    title = set(O.meaning_tokens(f"{header.name or ''}\n{header.description or ''}"))
    titled = sum(part for term, part, named in found.rare.get(i, []) if named or term in title)
    return (f"without the model: its own words carry {found.solid[i]:.0%} of the prompt's information (bar "
            f"{O.WORDS_ALONE_SHARE:.0%}), the rare ones in its name or description (or named) {titled:.0%} "
            f"(bar {O.TITLED_RARE_SHARE:.0%})")


def explain(query: str, headers: list[Header], limit: int = 5, tools: list[str] | None = None,
            similarities: list[float | None] | None = None, now: float | None = None) -> list[Verdict]:
    """One verdict per header, the passed ones first in rank order, then the rest by score."""
    sig = O.signals(query, headers, similarities, now)
    scores, similarities, found, dated = sig.scores, sig.similarities, sig.found, sig.dated
    margins, leads, about, order = sig.margins, sig.leads, sig.about, sig.order
    shared = shared_words(query, headers)
    verdicts: dict[int, Verdict] = {}
    for i in order:
        if tools and O.is_tool_usage_doc(headers[i], tools):
            verdicts[i] = Verdict(headers[i], False, 0.0, ["a how-to for a tool the agent is already using"])
    order = [i for i in order if i not in verdicts]
    best = scores[order[0]] if order else 1.0  # as select_offline: the best of what may be selected
    kept = 0
    for i in order:
        v = verdicts[i] = Verdict(headers[i], False, scores[i] / best)
        if v.score < O.RELATIVE_FLOOR:
            v.reasons.append(f"scores {v.score:.0%} of the best match, under the {O.RELATIVE_FLOOR:.0%} floor")
            continue
        if kept >= limit:
            v.reasons.append(f"past the first {limit} ranked memories (recall injects at most {limit})")
            kept += 1
            continue
        kept += 1
        v.passed = O.relevant(found, i, similarities[i], dated[i], margins[i], leads[i], about,
                              sig.header_if_words_only(headers, i))
        v.reasons.append("cleared the bar" if v.passed else "under the relevance bar")
        if not about and not v.passed and similarities[i] is not None:
            best_margin = max(m for m in margins if m is not None)
            v.reasons.append(f"no memory stands out in meaning (the closest by {best_margin:+.3f} from the median, "
                             f"bar {O.PROMPT_MARGIN}): the prompt is not about this folder")
        if dated[i]:
            v.reasons.append("written on a day the prompt names")
        v.reasons.extend(_bar_reasons(found, i, similarities[i], margins[i], shared[i]))
        if sig.words_only and not v.passed and not dated[i]:
            v.reasons.append(_words_only_reason(found, i, headers[i]))
    rest = [Verdict(h, False, 0.0, ["shares no meaningful word with the prompt"
                                    + ("" if similarities[i] is None else " and is not close in meaning")])
            for i, h in enumerate(headers) if i not in verdicts]
    listed = [verdicts[i] for i in sorted(verdicts, key=lambda i: -scores[i])]
    return [v for v in listed if v.passed] + [v for v in listed if not v.passed] + rest


class Preview(Record):
    """What the prompt hook would inject for `query`, and why each memory was chosen or not."""

    context: str
    engine: str
    selected: list[str]
    verdicts: list[Verdict]
    left_out: list[Header]  # not shown to the selector at all (older than the newest it sees, no strong match)
    debug: list[str] = field(default_factory=list)


def preview(memory_dir: Path, query: str, *, project_root: str | None = None, dense=None,
            tools: list[str] | None = None) -> Preview:
    """Recall as the prompt hook runs it (nothing recorded: the session's already-shown list is not
    consulted or changed), plus the offline bar's verdict on every memory it could see."""
    from memdir.config import Settings
    from memdir.scan import scan
    from memdir.stages.recall.api import recall
    from memdir.stages.recall.manifest import candidates

    settings = Settings.from_env()
    result = recall(memory_dir, query, settings=settings, record=False, dense=dense, project_root=project_root,
                    tools=tools)
    headers = scan(memory_dir).headers
    pool = candidates(headers, query, set())
    similarities = None
    if dense is not None and pool:
        try:
            similarities = dense.similarities(memory_dir, query, pool)
        except Exception:  # noqa: BLE001 - recall itself said so in its debug lines
            similarities = None
    seen = {id(h) for h in pool}
    return Preview(result.context, result.engine, [h.rel_path for h in result.selected],
                   explain(query, pool, settings.recall_max, tools, similarities),
                   [h for h in headers if id(h) not in seen], list(result.debug))
