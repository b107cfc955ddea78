"""The LLM extraction agent: a Messages API tool-use loop of at most N turns (SPEC §5).

The system prompt and the first user message (manifest + transcript excerpt) carry
`cache_control`, so every turn after the first reads them from the prompt cache.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from memdir.config import Settings
from memdir.llm import call_with_retries, make_client
from memdir.record import Record
from memdir.scan import scan
from extractor import decision_tool
from extractor.excerpt import excerpt_messages
from extractor.tools import TOOL_SCHEMAS, WRITE_TOOLS, Toolbox
from memdir.transcript import Message
from recall.manifest import manifest

MAX_TOKENS = 4096
EPHEMERAL = {"type": "ephemeral"}
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class AgentRun(Record):
    __slots__ = ("turns", "usage", "stop_reason", "hit_turn_cap", "final_text")
    _defaults = {"turns": 0, "usage": dict, "stop_reason": None, "hit_turn_cap": False, "final_text": ""}


def build_request(
    messages: list[Message], memory_dir: Path, settings: Settings, today: date, *, mode: str = "topics",
    daily_log: Path | None = None, first_message: str | None = None,
) -> dict:
    """Everything but the running conversation: model, system, tools, first user message.

    mode: "topics" (save memory files), "daily-log" (append to today's log) or "dream" (distill
    log entries, given as `first_message`, into memory files).
    """
    from prompts import render

    system = render(
        "extract_system.j2", last_n=settings.extract_last_n, memory_dir=str(memory_dir), today=today.isoformat(),
        mode=mode, daily_log=str(daily_log or ""),
    )
    existing = scan(memory_dir).headers if memory_dir.exists() else []
    if first_message is not None:
        intro, transcript = first_message, ""
    else:
        excerpt = excerpt_messages(messages)
        intro = render("extract_user.j2", manifest=manifest(existing), count=len(excerpt))
        transcript = render("extract_transcript.j2", messages=excerpt)
    return {
        "model": settings.extract_model,
        "max_tokens": MAX_TOKENS,
        "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
        "tools": TOOL_SCHEMAS if mode != "topics" else [*TOOL_SCHEMAS, decision_tool.SCHEMA],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": intro}, {"type": "text", "text": transcript, "cache_control": EPHEMERAL}]
                if transcript
                else [{"type": "text", "text": intro, "cache_control": EPHEMERAL}],
            }
        ],
    }


def add_usage(total: dict, usage) -> None:
    data = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage or {})
    for key in USAGE_KEYS:
        total[key] = total.get(key, 0) + int(data.get(key) or 0)


def _take_turn(run: AgentRun, conversation: list[dict], response, toolbox: Toolbox) -> bool:
    """Record one model response and run its tool calls; True when another turn is needed."""
    run.turns += 1
    add_usage(run.usage, response.usage)
    run.stop_reason = response.stop_reason
    blocks = [b.model_dump(exclude_none=True) for b in response.content]
    conversation.append({"role": "assistant", "content": blocks})
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    run.final_text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    if not calls:
        return False
    results = []
    for call in calls:  # the model issued them together; they are independent by construction
        if call["name"] == decision_tool.NAME:  # decision tiers (issue 14)
            outcome = decision_tool.run(toolbox, call.get("input") or {})
        else:
            outcome = toolbox.run(call["name"], call.get("input") or {})
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": outcome.content}
        if outcome.is_error:
            result["is_error"] = True
        results.append(result)
    conversation.append({"role": "user", "content": results})
    if all(c["name"] in (*WRITE_TOOLS, decision_tool.NAME) for c in calls) and not any(r.get("is_error") for r in results):
        # Every write landed: another turn would only be the model saying so. This is what keeps
        # the common case at two model calls (reads, then writes).
        run.stop_reason = "writes_done"
        return False
    return True


def run_agent(
    messages: list[Message],
    toolbox: Toolbox,
    settings: Settings,
    *,
    today: date,
    client=None,
    mode: str = "topics",
    first_message: str | None = None,
) -> AgentRun:
    """Run the loop; API failures (after tenacity's retries) propagate to the caller."""
    client = client or make_client()
    request = build_request(messages, toolbox.memory_dir, settings, today, mode=mode, daily_log=toolbox.daily_log,
                            first_message=first_message)
    conversation = request.pop("messages")
    run = AgentRun()
    while run.turns < settings.extract_max_turns:
        response = call_with_retries(
            lambda: client.messages.create(messages=conversation, **request), max_attempts=settings.max_attempts
        )
        if not _take_turn(run, conversation, response, toolbox):
            return run
    run.hit_turn_cap = True
    return run


async def arun_agent(
    messages: list[Message],
    toolbox: Toolbox,
    settings: Settings,
    *,
    today: date,
    client,
    mode: str = "topics",
) -> AgentRun:
    """`run_agent` on an `AsyncAnthropic` client, for batch processing many transcripts at once."""
    from memdir.llm import acall_with_retries

    request = build_request(messages, toolbox.memory_dir, settings, today, mode=mode, daily_log=toolbox.daily_log)
    conversation = request.pop("messages")
    run = AgentRun()
    while run.turns < settings.extract_max_turns:
        async def send():
            return await client.messages.create(messages=conversation, **request)

        response = await acall_with_retries(send, max_attempts=settings.max_attempts)
        if not _take_turn(run, conversation, response, toolbox):
            return run
    run.hit_turn_cap = True
    return run
