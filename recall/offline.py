"""The offline selector: lexical ranking with a relevance floor, no network, no key."""

from __future__ import annotations

from memdir.scan import Header
from recall.manifest import ranker

RELATIVE_FLOOR = 0.2  # drop matches scoring under this share of the best one: "only what clearly helps"


def select_offline(query: str, headers: list[Header], limit: int = 5) -> list[Header]:
    ranked = ranker(headers).rank(query)
    if not ranked:
        return []
    best = ranked[0][1]
    return [headers[i] for i, score in ranked[:limit] if score >= best * RELATIVE_FLOOR]
