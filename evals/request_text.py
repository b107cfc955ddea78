"""A Messages API request as the model reads it: system, tools and messages in plain text.

The relay writes this next to each request so that a person (or another agent) acting as the model can
read what memdir sent, and cassette replay diffs two of these renderings so that a change to a prompt,
an excerpt or a tool shows as a change to the text the model is given. Every part that changes what the
model sees is rendered (cache breakpoints too, as one short marker); nothing is summarised away.
"""

from __future__ import annotations

import hashlib
import json
import os

from memdir.evals.structured_answer import example, output_schema

ANSWER_HELP = """\
Answer as the model: write `{name}` in this folder, a Messages API response body. The short form is enough:

    {{"content": [{{"type": "text", "text": "..."}},
                 {{"type": "tool_use", "name": "Write", "input": {{"file_path": "...", "content": "..."}}}}],
     "stop_reason": "tool_use"}}

`id`, `model`, `usage` and the tool_use ids are filled in; `stop_reason` defaults to `tool_use` when a
tool is called, else `end_turn`. Only the tools listed below exist. Write the file in one go (or write it
elsewhere and rename it in): a file that is not yet valid JSON is read again when it changes."""

STRUCTURED_HELP = """\
Answer as the model: write `{name}` in this folder, a Messages API response body. This request asks for a
structured output: the reply is one text block whose text is JSON matching the output schema at the end (the
real API allows nothing else), and `stop_reason` is `end_turn`. The short form is enough:

    {example}

`id`, `model` and `usage` are filled in. An answer whose text does not fit the schema is explained in one
line in `{problem}`, and read again when the file changes. Write the file in one go (or
write it elsewhere and rename it in)."""


def _json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)


def _cache_mark(block: dict) -> list[str]:
    mark = block.get("cache_control")
    return [f"[cache_control: {mark.get('type')} {mark.get('ttl', '5m')}]"] if isinstance(mark, dict) else []


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        parts.append(block.get("text", "") if block.get("type") == "text" else f"[{block.get('type')} block]")
    return "\n".join(parts)


def block_text(block: dict) -> list[str]:
    """One content block as lines of text."""
    kind = block.get("type")
    if kind == "text":
        lines = [str(block.get("text", ""))]
    elif kind == "tool_use":
        lines = [f"[tool_use {block.get('id', '')}: {block.get('name')}]", _json(block.get("input"))]
    elif kind == "tool_result":
        error = " (is_error)" if block.get("is_error") else ""
        lines = [f"[tool_result for {block.get('tool_use_id')}{error}]", _result_text(block.get("content"))]
    elif kind in ("thinking", "redacted_thinking"):
        lines = [f"[{kind}]", str(block.get("thinking", ""))]
    else:
        lines = [f"[{kind} block]"]
    return lines + _cache_mark(block)


def _content_blocks(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _settings_line(body: dict) -> str:
    shown = {key: body[key] for key in sorted(body) if key not in ("system", "tools", "messages")}
    if output_schema(body) is not None:  # the schema has a section of its own, at the end
        shown["output_config"] = {k: v for k, v in body["output_config"].items() if k != "format"}
    return ", ".join(f"{key}: {json.dumps(value, sort_keys=True)}" for key, value in shown.items())


def _rule(title: str, char: str = "=") -> str:
    """A section line that cannot be mistaken for the prompt's own markdown headings."""
    return f"{char * 8} {title} {char * 8}"


def render_request(body: dict) -> str:
    """The whole request as plain text, stable for diffs (sorted keys, one block per paragraph)."""
    out = [_rule("request"), _settings_line(body), "", _rule("system")]
    for block in _content_blocks(body.get("system")):
        out += [*block_text(block), ""]
    out.append(_rule("tools"))
    for tool in body.get("tools") or []:
        out += [_rule(f"tool {tool.get('name')}", "-"), str(tool.get("description", "")),
                "input_schema: " + _json(tool.get("input_schema")), *_cache_mark(tool), ""]
    out.append(_rule("messages"))
    for n, message in enumerate(body.get("messages") or [], start=1):
        out.append(_rule(f"message {n}: {message.get('role')}", "-"))
        for block in _content_blocks(message.get("content")):
            out += [*block_text(block), ""]
    schema = output_schema(body)
    if schema is not None:
        out += [_rule("output schema (output_config.format: the reply's text is JSON of this form)"), _json(schema)]
    return "\n".join(out).rstrip() + "\n"


# Drawn once per run: a tag is the same for all of a session's requests in a run and says nothing outside it.
_TAG_SALT = os.urandom(16)


def session_tag(session: str) -> str:
    """What whoever answers is shown of a session: an opaque tag that still groups its requests. The session's
    key names its file, and a name such as `ko-push-nothing` gives the annotation away (found on fresh held-out
    runs, first in the request and then in the relay's own log line). Salted per run: a bare hash of the key was
    the sha256 of a name anyone can list (the realdata folder, evals/cases), so the tag named the session after all."""
    return hashlib.sha256(_TAG_SALT + session.encode()).hexdigest()[:8] if session else ""


def render_for_relay(body: dict, *, number: str, session: str) -> str:
    """The relay's NNNN.request.md: how to answer, then the request. Nothing of a recorded answer: whoever answers
    is the model, and a model is never shown what was answered before (relayfix read a pointer to the nearest
    recorded answer in a blind measurement; where the misses are is said once the run is over)."""
    tag = session_tag(session)
    head = f"# Relay request {number}" + (f" (session {tag})" if tag else "")
    return f"{head}\n\n{_how_to_answer(body, number)}\n\n{render_request(body)}"


def _how_to_answer(body: dict, number: str) -> str:
    schema = output_schema(body)
    if schema is None:
        return ANSWER_HELP.format(name=f"{number}.response.json")
    short = {"content": [{"type": "text", "text": json.dumps(example(schema), ensure_ascii=False)}],
             "stop_reason": "end_turn"}
    return STRUCTURED_HELP.format(name=f"{number}.response.json", problem=f"{number}.response.problem.txt",
                                  example=json.dumps(short, ensure_ascii=False))
