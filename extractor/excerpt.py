"""Turning transcript messages into the excerpt the extraction agent reads.

Only the user's words are shown as role="user": typed prompts, prompts queued while the agent
worked, and rejection reasons Claude Code recorded (memdir/said.py). Tool output (files read, web
pages, command output, Claude Code's own notes inside results) is shown as role="tool", inside
<tool_output> elements: never the user's words, whatever it says. Every piece of outside text has its
tag-like `<` escaped (memdir.prompts.escape_tags), so nothing in a message can close it or open
another one; the tags around it are the excerpt's own.
"""

from __future__ import annotations

import html
import json
import re
from datetime import date, datetime

from memdir import inert
from memdir.prompts import escape_tags
from memdir.stages.extractor.platform_paths import home_of, local_home, tilde
from memdir.stages.extractor.prose import pasted_spans
from memdir.transcript import Message

TOOL_RESULT_CHARS = 400
TOOL_INPUT_CHARS = 300
MESSAGE_CHARS = 6000
IMAGE = "[image]"  # an image is shown as being there, never described or dropped silently
# Claude Code's stand-in for a pasted image in the prompt's text (the image itself beside it, or, in prompt
# history, nowhere): shown as IMAGE, the marker the system prompt names.
_IMAGE_PLACEHOLDER = re.compile(r"\[Image #\d+\]")


def message_date(message: Message) -> date | None:
    if not message.timestamp:
        return None
    try:
        return datetime.fromisoformat(message.timestamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _short(text: str, limit: int) -> str:
    """`text` whole when it fits; else its head and tail around a marker saying how much was cut
    (never dropped: the end of a long prompt is often where the request is)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    marker = f"\n[... {len(text) - head - tail} characters cut ...]\n"
    if len(marker) >= len(text) - head - tail:
        return text  # the marker would take more room than the text it stands for ("[... 7 characters cut ...]")
    return f"{text[:head].rstrip()}{marker}{text[-tail:].lstrip()}"


def _attr(value: object) -> str:
    """A value placed inside an attribute of the excerpt's own tags: quotes and brackets escaped."""
    return html.escape(str(value), quote=True)


def _result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(c["text"] if isinstance(c.get("text"), str) else IMAGE
                           for c in content if isinstance(c, dict) and (isinstance(c.get("text"), str) or c.get("type") == "image"))
    return str(content or "")


def block_text(block: dict, tool_names: dict[str, str] | None = None) -> str | None:
    """One content block as the excerpt shows it (outside text escaped), or None when it is not shown."""
    kind = block.get("type")
    if kind == "text":
        return escape_tags(_short(block.get("text", ""), MESSAGE_CHARS))
    if kind == "tool_use":
        tool_input = json.dumps(block.get("input", {}), ensure_ascii=False)
        return f'<tool_call name="{_attr(block.get("name"))}">{escape_tags(_short(tool_input, TOOL_INPUT_CHARS))}</tool_call>'
    if kind == "tool_result":
        name = (tool_names or {}).get(str(block.get("tool_use_id")), "unknown")
        error = ' error="true"' if block.get("is_error") else ""
        text = escape_tags(_short(_result_text(block), TOOL_RESULT_CHARS))
        return f'<tool_output tool="{_attr(name)}"{error}>\n{text}\n</tool_output>'
    if kind == "image":
        return IMAGE
    return None  # thinking, ...: not what memory is made of


def _fit(parts: list[str]) -> str:
    """Parts joined, whole, up to MESSAGE_CHARS (the excerpt's own tags are never cut in half)."""
    kept: list[str] = []
    used = 0
    for i, part in enumerate(parts):
        if kept and used + len(part) > MESSAGE_CHARS:
            kept.append(f"[{len(parts) - i} more not shown]")
            break
        kept.append(part)
        used += len(part)
    return "\n".join(kept)


def _marked(said: str) -> str:
    """The user's text escaped, with each block that looks pasted (prose.pasted_spans: a log, a stack trace, code)
    inside <pasted> tags, wherever it sits: the system prompt says it is material the user shows, not their words."""
    out, at = [], 0
    for start, end in pasted_spans(said):
        out += [escape_tags(said[at:start]), "<pasted>\n", escape_tags(said[start:end]), "\n</pasted>"]
        at = end
    return "".join(out) + escape_tags(said[at:])


def _entries(m: Message, tool_names: dict[str, str]) -> list[tuple[str, str, str]]:
    """(role, kind, text) for one message: a user line can hold the user's words and tool output apart."""
    if m.role != "user":
        parts = [t for t in (block_text(b, tool_names) for b in m.content) if t and t.strip()]
        return [(m.role, "", _fit(parts))] if parts else []
    out = []
    said = m.user_text()
    images = sum(1 for b in m.content if b.get("type") == "image") if m.kind in ("prompt", "queued") else 0
    said, placed = _IMAGE_PLACEHOLDER.subn(IMAGE, said)
    if said or images:  # an image the text already places is not marked twice
        said = _short(said, MESSAGE_CHARS)  # (an answer's "Q: ... A: ..." lines are the user's, never a paste)
        shown = (escape_tags(said) if m.kind == "answer" else _marked(said)) + "".join(f"\n{IMAGE}" for _ in range(images - placed))
        out.append(("user", m.kind if m.kind in ("rejection", "queued", "answer") else "", shown.strip()))
    if m.kind not in ("rejection", "answer"):  # their result is Claude Code's notice; the words are shown above
        outputs = [t for t in (block_text(b, tool_names) for b in m.content if b.get("type") == "tool_result") if t]
        if outputs:
            out.append(("tool", "", _fit(outputs)))
    return out


def excerpt_messages(messages: list[Message]) -> list[dict]:
    """[{role, kind, when, text, sent}] for the transcript template; empty messages dropped.

    role: "user" (the user's words only), "assistant", or "tool" (tool output); kind: "rejection"
    (the reason typed when refusing the tool call just before), "queued" or "". sent: how many times the user sent
    these words in a row (the same kind and date, nothing between): a prompt typed three times is read once, and the
    model still sees that it was typed three times."""
    tool_names: dict[str, str] = {}
    out: list[dict] = []
    # The agent's calls and their output name the user's home folder (the session's cwd, the files it read): shown
    # as `~`. The user's own words are left as typed: a path they gave may be what a memory keeps.
    homes = {local_home(), *(home_of(m.cwd) for m in messages)}
    for m in messages:
        for block in m.tool_uses():
            tool_names.setdefault(str(block.get("id")), str(block.get("name")))
        day = message_date(m)
        when = f"{day.isoformat()} ({day:%A})" if day else ""
        for role, kind, said in _entries(m, tool_names):
            text = inert.untagged(said)  # Unicode tags spell words the user never saw in the session: shown escaped
            entry: dict = {"role": role, "kind": kind, "when": when, "text": text if role == "user" else tilde(text, homes)}
            if role == "user" and out and all(out[-1][key] == entry[key] for key in entry):
                out[-1]["sent"] += 1  # the same words sent again straight after: shown once, with the count
            else:
                out.append({**entry, "sent": 1})
    return out
