"""Turning transcript messages into the excerpt the extraction agent reads."""

from __future__ import annotations

import json
from datetime import date, datetime

from memdir.transcript import Message

TOOL_RESULT_CHARS = 400
TOOL_INPUT_CHARS = 300
MESSAGE_CHARS = 6000


def message_date(message: Message) -> date | None:
    if not message.timestamp:
        return None
    try:
        return datetime.fromisoformat(message.timestamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _short(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " […]"


def block_text(block: dict) -> str | None:
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_use":
        tool_input = json.dumps(block.get("input", {}), ensure_ascii=False)
        return f"[tool call {block.get('name')}: {_short(tool_input, TOOL_INPUT_CHARS)}]"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = " ".join(c.get("text", "") for c in content if isinstance(c, dict))
        label = "tool error" if block.get("is_error") else "tool result"
        return f"[{label}: {_short(str(content or ''), TOOL_RESULT_CHARS)}]"
    return None  # thinking, images, ...: not what memory is made of


def excerpt_messages(messages: list[Message]) -> list[dict]:
    """[{role, when, text}] for the transcript template; empty messages dropped."""
    out = []
    for m in messages:
        parts = [t for t in (block_text(b) for b in m.content) if t]
        if m.role == "user":  # only the user's own words, never harness text posing as them
            results = [t for t in (block_text(b) for b in m.content if b.get("type") == "tool_result") if t]
            said = m.user_text()
            parts = ([f"[rejected the tool call above; the user's reason: {said}]"] if m.kind == "rejection"
                     else [said] if said else []) + ([] if m.kind == "rejection" else results)
        text = _short("\n".join(parts), MESSAGE_CHARS)
        if not text:
            continue
        day = message_date(m)
        out.append({"role": m.role, "when": f"{day.isoformat()} ({day:%A})" if day else "", "text": text})
    return out
