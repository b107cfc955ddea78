"""Whole-window extraction: every new message since the cursor, cut into chunks under a token budget.

Nothing is dropped however long the turn: a long window becomes several runs, each small enough for
the model, and the cursor moves past a chunk only once that chunk was processed.
"""

from __future__ import annotations

from memdir.record import Record, field
from memdir.stages.extractor.excerpt import MESSAGE_CHARS, block_text, message_date
from memdir.transcript import Message

CHARS_PER_TOKEN = 4  # a rough, deliberately pessimistic estimate for English and code
MESSAGE_OVERHEAD = 8  # role and date labels in the excerpt


def message_tokens(message: Message) -> int:
    """About how many tokens this message costs in the extractor's excerpt (tool output is clipped there)."""
    chars = sum(len(t) for t in (block_text(b) for b in message.content) if t)
    return min(chars, MESSAGE_CHARS) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD


def chunks(messages: list[Message], budget_tokens: int) -> list[list[Message]]:
    """Consecutive chunks, each under `budget_tokens` (a single oversized message stands alone)."""
    out: list[list[Message]] = []
    current: list[Message] = []
    used = 0
    for message in messages:
        cost = message_tokens(message)
        if current and used + cost > budget_tokens:
            out.append(current)
            current, used = [], 0
        current.append(message)
        used += cost
    if current:
        out.append(current)
    return out


class Part(Record):
    """Where one chunk sits in the window, for the model: "chunk 2 of 5", and one line per earlier chunk."""

    number: int
    of: int
    earlier: list[str] = field(default_factory=list)


def _span(chunk: list[Message], first: int) -> str:
    """'messages 1-40 (2026-03-02 to 2026-03-03), 3 with the user's words'."""
    days = [d for d in (message_date(m) for m in chunk) if d]
    when = "" if not days else f" ({days[0]}" + (f" to {days[-1]})" if days[-1] != days[0] else ")")
    said = sum(1 for m in chunk if m.user_text())
    return f"messages {first}-{first + len(chunk) - 1}{when}, {said} with the user's words"


def parts(all_chunks: list[list[Message]]) -> list[Part]:
    """One Part per chunk: its number, the total, and a one-line summary of every chunk before it."""
    spans, first = [], 1
    for chunk in all_chunks:
        spans.append(_span(chunk, first))
        first += len(chunk)
    return [Part(i + 1, len(all_chunks), [f"chunk {j + 1}: {spans[j]}" for j in range(i)])
            for i in range(len(all_chunks))]
