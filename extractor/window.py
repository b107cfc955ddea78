"""Whole-window extraction: every new message since the cursor, cut into chunks under a token budget.

Nothing is dropped however long the turn: a long window becomes several runs, each small enough for
the model, and the cursor moves past a chunk only once that chunk was processed.
"""

from __future__ import annotations

from memdir.stages.extractor.excerpt import MESSAGE_CHARS, block_text
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
