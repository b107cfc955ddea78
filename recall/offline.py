"""The offline selector: lexical ranking with a relevance floor, no network, no key."""

from __future__ import annotations

import re

from memdir.scan import Header
from recall.manifest import ranker

RELATIVE_FLOOR = 0.2  # drop matches scoring under this share of the best one: "only what clearly helps"
_USAGE_DOC = re.compile(r"\b(?:usage|how to use|guide|manual|docs?|reference for|instructions for)\b", re.I)
_GOTCHA = re.compile(
    r"\b(?:gotcha|warning|careful|pitfall|bug|breaks?|broken|hangs?|fails?|never|don'?t|avoid|beware|caveat)\b", re.I
)


def is_tool_usage_doc(header: Header, tools: list[str]) -> bool:
    """A how-to for a tool the agent is already using (it knows how); its gotchas are still wanted."""
    text = f"{header.name or ''} {header.description or ''}"
    mentions = any(re.search(rf"\b{re.escape(tool)}\b", text, re.I) for tool in tools)
    return mentions and bool(_USAGE_DOC.search(text)) and not _GOTCHA.search(text)


def select_offline(query: str, headers: list[Header], limit: int = 5, tools: list[str] | None = None) -> list[Header]:
    ranked = ranker(headers).rank(query)
    if tools:
        ranked = [(i, score) for i, score in ranked if not is_tool_usage_doc(headers[i], tools)]
    if not ranked:
        return []
    best = ranked[0][1]
    return [headers[i] for i, score in ranked[:limit] if score >= best * RELATIVE_FLOOR]
