"""What a memory's own text says of the prompt, quoted under its line in the llm selector's list.

The list shows each memory's one-line description, and a description does not say every fact a file holds: a
session summary's line names a few of the dozens of things that session did. Two models reading the requests
blind (relay6, relayv) could not pick the memory for "did I ever apply to Twilio?" or "m13v", although its text
names them. So for the best lexical matches, where the memory's text holds a word of the prompt that few memories
hold and that its name and description do not say, the list quotes the words around it.
"""

from __future__ import annotations

import os
import re

from memdir import constants as C, inert
from memdir.scan import Header
from memdir.words import tokens

_AROUND_WORDS = 10  # words kept on each side of the first word found, before the length bound


def mentions(query: str, candidates: list[Header], token_cache: str | os.PathLike | None = None) -> dict[str, str]:
    """rel_path -> a short quote of the memory's text holding a rare word of `query` its line does not say."""
    from memdir.stages.recall.offline import signals

    if not candidates or not query.strip():
        return {}
    found = signals(query, candidates, None, None, token_cache)
    quotes: dict[str, str] = {}
    for i in found.order:
        if len(quotes) == C.RECALL_MENTIONS_MAX:
            break
        header = candidates[i]
        said = set(tokens(f"{header.name or ''} {header.description or ''} {header.rel_path}"))
        rare = {term: named for term, _, named in found.found.rare.get(i, []) if term not in said}
        if rare and (quote := _quote(header.excerpt, rare)):
            quotes[header.rel_path] = quote
    return quotes


def _best_line(text: str, rare: dict[str, bool]) -> tuple[str, set[str]] | None:
    """The line of `text` holding the most of the prompt's proper names among the `rare` terms, then the most terms
    (the first of equals), with the terms it holds; None when no line qualifies. A line must hold a proper name the
    prompt names ("Twilio") or two of the terms ("behavioral blockchain"): one ordinary word few memories happen to
    hold ("right now", "getting") says nothing of what the prompt asks. The first line that qualified was often not
    the one that mattered: for "the Sovereign Tech Fellowship is due April 6" a session note was quoted on its expired
    fellowships, not on the line "Sovereign Tech phantom" (relayv4a and relayv4b, blind, the same request)."""
    best: tuple[int, int] = (0, 0)
    chosen = None
    for line in text.splitlines():
        held = set(tokens(line)) & rare.keys()
        named = sum(1 for term in held if rare[term] and _capitalised(line, term))
        if (len(held) >= 2 or named) and (named, len(held)) > best:
            best, chosen = (named, len(held)), (line, held)
    return chosen


def _capitalised(line: str, term: str) -> bool:
    """The memory writes `term` as a name on this line too (its first letter a capital): a word the prompt
    capitalises is not always a name ("Project Manager; Manager" in a list of roles), and the blind answerers of
    this stop read quotes such as "hiring managers" or a `vercel.app` link on such words as noise. On the
    development sets this kept every quote under a gold memory and dropped one of 13 under others."""
    return any(next((c.isupper() for c in word if c.isalpha()), False) for word in line.split()
               if term in tokens(word))


def _quote(text: str, rare: dict[str, bool]) -> str | None:
    """The words around the first of the `rare` terms in the best line of `text` (`_best_line`; one line, at most
    RECALL_MENTION_CHARS), or None."""
    if (found := _best_line(text, rare)) is not None:
        line, held = found
        words = line.split()
        at = next(k for k, word in enumerate(words) if held & set(tokens(word)))
        start, end = max(0, at - _AROUND_WORDS), at + _AROUND_WORDS + 1
        # escaped before it is bounded: a control character shown as `\x07` or `\u202e` counts as what the line shows
        quote = inert.one_line(" ".join(words[start:end]).strip(" -*#>|"))
        if len(quote) > C.RECALL_MENTION_CHARS:
            keep = C.RECALL_MENTION_CHARS // 2
            centre = quote.find(inert.one_line(words[at]))
            quote = _whole_words(quote, max(0, centre - keep), centre + keep)
            quote = re.sub(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3}|U[0-9a-f]{0,7})?$", "", quote)  # an escape the cut split, not `\"`
            start, end = 1, len(words) + 1  # cut on both sides
        quote = re.sub(r"\s+", " ", quote)
        return f"{'…' if start > 0 else ''}{quote}{'…' if end < len(words) else ''}"
    return None


def _whole_words(text: str, start: int, end: int) -> str:
    """text[start:end] without the part-words the cut left at either end ("18 years of c" -> "18 years of"): a
    model reads a cut word as a word. A part-word longer than half the window (a run without spaces, such as
    escaped control characters) is kept as cut: dropping it would drop what the quote is there to show."""
    piece = text[start:end]
    if start > 0 and not text[start - 1].isspace() and 0 <= piece.find(" ") < len(piece) // 2:
        piece = piece[piece.index(" ") + 1:]
    if end < len(text) and not text[end].isspace() and piece.rfind(" ") > len(piece) // 2:
        piece = piece[:piece.rindex(" ")]
    return piece
