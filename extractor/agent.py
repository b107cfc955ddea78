"""The LLM extraction agent: a Messages API tool-use loop of at most N turns (SPEC §5).

The system prompt and the first user message (manifest + transcript excerpt) carry
`cache_control`, so every turn after the first reads them from the prompt cache.
"""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

from memdir import constants as C
from memdir.config import Settings
from memdir.llm import call_with_retries, make_client
from memdir.manifest import manifest, own_times
from memdir.record import Record, field
from memdir.scan import scan
from memdir.stages.extractor import decision_tool
from memdir.stages.extractor.excerpt import excerpt_messages
from memdir.stages.extractor.platform_paths import session_at_home, session_folder, session_system_folder
from memdir.stages.extractor.tools import TOOL_SCHEMAS, WRITE_TOOLS, Toolbox
from memdir.transcript import Message

log = logging.getLogger("memdir")

EFFORT = "medium"  # the model's judgement matters more than speed here; the default on Sonnet 5.5 is high
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
# stop_reason -> what the loop does. Anything not listed (e.g. model_context_window_exceeded, or
# a reason a newer API adds) is a failure: the caller keeps its cursor.
FINISHED = ("end_turn", "stop_sequence")


def ephemeral(ttl: str = "5m") -> dict:
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


class StopReasonError(RuntimeError):
    """The run ended in a way that must not count as done (truncated twice, an unknown reason)."""

    def __init__(self, message: str, run: AgentRun) -> None:
        super().__init__(message)
        self.run = run  # its tokens were spent: the caller still records them


class AgentRun(Record):
    turns: int = 0
    usage: dict = field(default_factory=dict)
    stop_reason: str | None = None
    hit_turn_cap: bool = False
    final_text: str = ""
    refusals: int = 0
    max_tokens_retries: int = 0
    cost_usd: float = 0.0
    model: str | None = None
    write_refused: bool = False  # the last turn had a refused Write/Edit: the model gets a turn to fix it


def may_continue(run: AgentRun, settings: Settings) -> bool:
    """Another model call is allowed: under the turn cap, or one turn past it to fix a refused write
    (the model must see why its write was refused, or a valid memory is lost to a typo)."""
    cap = settings.extract_max_turns
    return run.turns < cap or (run.turns == cap and run.write_refused)


def build_request(
    messages: list[Message], memory_dir: Path, settings: Settings, today: date, *, mode: str = "topics",
    daily_log: Path | None = None, first_message: str | None = None, cache_ttl: str = "5m", part=None,
) -> dict:
    """Everything but the running conversation: model, system, tools, first user message.

    mode: "topics" (save memory files), "daily-log" (append to today's log) or "dream" (distill
    log entries, given as `first_message`, into memory files). cache_ttl: "5m" for live runs,
    "1h" for the Batches API, whose rounds are minutes apart. part: where these messages sit in the
    window (extractor/window.py `Part`), None when they are the whole of it.
    """
    from memdir.llm import thinking_options
    from memdir.prompts import render
    from memdir.stages.extractor.platform_paths import shown_path

    system = render(  # the home folder shown as `~` (the tools expand it back, confined to the memory folder)
        "extract_system.j2", memory_dir=shown_path(memory_dir), today=today.isoformat(),
        mode=mode, daily_log=shown_path(daily_log) if daily_log else "",
    )
    existing = scan(memory_dir).headers if memory_dir.exists() else []
    if first_message is not None:
        intro, transcript = first_message, ""
    else:
        excerpt = excerpt_messages(messages)
        intro = render("extract_user.j2", manifest=manifest(existing, times=own_times(existing)), count=len(excerpt),
                       part=part, folder=session_folder(messages), at_home=session_at_home(messages),
                       system_folder=session_system_folder(messages))
        transcript = render("extract_transcript.j2", messages=excerpt)
    cache = ephemeral(cache_ttl)
    first: list[dict[str, object]] = [{"type": "text", "text": intro}]
    if transcript.strip():
        first.append({"type": "text", "text": transcript})
    first[-1]["cache_control"] = cache
    return {
        "model": settings.extract_model,
        "max_tokens": C.EXTRACT_MAX_TOKENS,
        **thinking_options(settings.extract_model, think=True, effort=EFFORT),
        "system": [{"type": "text", "text": system, "cache_control": cache}],
        "tools": TOOL_SCHEMAS if mode != "topics" else [*TOOL_SCHEMAS, decision_tool.SCHEMA],
        "messages": [{"role": "user", "content": first}],
    }


def add_usage(total: dict, usage) -> None:
    data = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage or {})
    for key in USAGE_KEYS:
        total[key] = total.get(key, 0) + int(data.get(key) or 0)
    created = data.get("cache_creation") or {}
    if isinstance(created, dict) and created.get("ephemeral_1h_input_tokens"):
        total["cache_creation_1h_input_tokens"] = (total.get("cache_creation_1h_input_tokens", 0)
                                                   + int(created["ephemeral_1h_input_tokens"]))


def resendable(blocks: list[dict]) -> list[dict]:
    """The assistant's blocks as they may be sent back: empty text blocks dropped (the API rejects
    them with 400 "text content blocks must be non-empty", and a reply can hold one next to a
    tool_use); thinking blocks kept byte for byte, as the thinking models require."""
    return [b for b in blocks if not (b.get("type") == "text" and not (b.get("text") or "").strip())]


def _record(run: AgentRun, response, model: str) -> list[dict]:
    from memdir.pricing import cost_usd

    run.turns += 1
    add_usage(run.usage, response.usage)
    one: dict[str, int] = {}
    add_usage(one, response.usage)
    run.cost_usd += cost_usd(model, one)  # per response: Haiku 5.5's price depends on each prompt's length
    run.stop_reason = response.stop_reason
    blocks = [b.model_dump(exclude_none=True) for b in response.content]
    run.final_text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    return blocks


def _take_turn(run: AgentRun, conversation: list[dict], response, toolbox: Toolbox, model: str = "") -> bool:
    """Record one model response and act on its stop_reason; True when another call is needed.

    Raises StopReasonError for a reason that must not count as done. The caller handles
    `max_tokens` (retry with a larger budget) before calling this.
    """
    blocks = _record(run, response, model or getattr(response, "model", ""))
    reason = response.stop_reason
    if reason == "refusal":
        run.refusals += 1
        log.warning("memdir extraction: the model declined this window (refusal); nothing saved")
        return False
    if reason == "pause_turn":  # a long server-side turn: send it back as is and let it continue
        kept = resendable(blocks)
        if kept:
            conversation.append({"role": "assistant", "content": kept})
        return True
    if reason not in (*FINISHED, "tool_use"):
        raise StopReasonError(f"the model stopped with stop_reason={reason!r}; nothing was applied", run)
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    if not calls:
        return False
    conversation.append({"role": "assistant", "content": resendable(blocks)})
    results = []
    for call in calls:  # the model issued them together; they are independent by construction
        if call["name"] == decision_tool.NAME:  # decision tiers (issue 14)
            outcome = decision_tool.run(toolbox, call.get("input") or {})
        else:
            outcome = toolbox.run(call["name"], call.get("input") or {})
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": outcome.content or "(empty)"}
        if outcome.is_error:
            result["is_error"] = True
        results.append(result)
    conversation.append({"role": "user", "content": results})
    run.write_refused = any(r.get("is_error") and c["name"] in WRITE_TOOLS for c, r in zip(calls, results, strict=True))
    if all(c["name"] in (*WRITE_TOOLS, decision_tool.NAME) for c in calls) and not any(r.get("is_error") for r in results):
        # Every write landed: another turn would only be the model saying so. This is what keeps
        # the common case at two model calls (reads, then writes).
        run.stop_reason = "writes_done"
        return False
    return True


def _truncated(run: AgentRun, request: dict, response, model: str) -> bool:
    """A `max_tokens` stop: count its usage, raise the budget once and ask again (True), or give up.

    Nothing from a truncated reply is applied: a tool call at its end may be cut short, and a
    thinking-only reply has nothing to apply at all."""
    if response.stop_reason != "max_tokens":
        return False
    _record(run, response, model)
    run.turns -= 1  # the retry stands in for this turn
    if run.max_tokens_retries >= 1 or request["max_tokens"] >= C.MAX_TOKENS_CEILING:
        raise StopReasonError(
            f"the reply hit max_tokens={request['max_tokens']} twice (thinking counts toward it); "
            "the window stays unprocessed and is retried on the next run", run)
    run.max_tokens_retries += 1
    request["max_tokens"] = min(C.MAX_TOKENS_CEILING, request["max_tokens"] * C.MAX_TOKENS_RETRY_FACTOR)
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
    part=None,
) -> AgentRun:
    """Run the loop; API failures (after tenacity's retries) and StopReasonError propagate."""
    client = client or make_client()
    request = build_request(messages, toolbox.memory_dir, settings, today, mode=mode, daily_log=toolbox.daily_log,
                            first_message=first_message, part=part)
    conversation = request.pop("messages")
    run = AgentRun(model=request["model"])
    while may_continue(run, settings):
        response = call_with_retries(
            lambda: client.messages.create(messages=conversation, **request), max_attempts=settings.max_attempts
        )
        if _truncated(run, request, response, request["model"]):
            continue
        if not _take_turn(run, conversation, response, toolbox, request["model"]):
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
    run = AgentRun(model=request["model"])
    while may_continue(run, settings):
        async def send():
            return await client.messages.create(messages=conversation, **request)

        response = await acall_with_retries(send, max_attempts=settings.max_attempts)
        if _truncated(run, request, response, request["model"]):
            continue
        if not _take_turn(run, conversation, response, toolbox, request["model"]):
            return run
    run.hit_turn_cap = True
    return run
