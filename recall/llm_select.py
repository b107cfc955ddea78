"""The LLM selector: one structured-output side query to a fast model (SPEC §4)."""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import date

from pydantic import BaseModel, Field

from memdir.config import Settings
from memdir.llm import call_with_retries, make_client
from memdir.scan import Header
from memdir.stages.recall.manifest import manifest

EFFORT = "low"  # a short pick from a list: the cheapest, fastest level is enough


class UnusableAnswer(RuntimeError):
    """The model answered, but not with a selection to use (truncated, refused, unparsable)."""


class Selection(BaseModel):
    """The model's answer: file names taken from the manifest."""

    # No maxItems: the structured-output schema cannot enforce one (the SDK moves it into the description, where
    # "{maxItems: 20}" contradicted the system prompt's "at most 5": relay21b); the system prompt says the limit and
    # the answer is cut to it.
    selected_memories: list[str] = Field(description="file names from the list, best first")


@dataclass
class LLMSelection:
    selected: list[Header]
    unknown: list[str] = field(default_factory=list)  # names the model made up; dropped
    usage: dict = field(default_factory=dict)
    cost_usd: float = 0.0


def _output_format() -> dict:
    """The JSON schema of `Selection` in the form structured outputs accept (the SDK's transform)."""
    from anthropic import transform_schema

    return {"type": "json_schema", "schema": transform_schema(Selection.model_json_schema())}


def request_messages(
    query: str, candidates: list[Header], tools: list[str], max_selected: int, today: date | None = None,
    token_cache: str | os.PathLike | None = None,
) -> tuple[str, list[dict]]:
    """`today`: the user's date (default: this machine's), so "last week" or "on Monday" in the message can be
    placed against the memories' times (a model answering through the relay could not: relay21b). `token_cache`:
    the memory folder, whose cached tokens rank the memories for the list's quotes (a hook's first ranking of 200
    memories: 180 ms without it, 20 with it)."""
    from memdir.prompts import render
    from memdir.stages.recall.llm_mentions import mentions

    system = render("recall_system.j2", max_selected=max_selected)
    user = render("recall_user.j2", query=query, manifest=manifest(candidates, mentions(query, candidates, token_cache)),
                  tools=tools, today=(today or date.today()).isoformat())
    return system, [{"role": "user", "content": user}]


def _before_deadline(fn, deadline: float):
    """Run `fn` in a daemon thread and give up at `deadline`.

    httpx timeouts bound each phase (connect, each read), not the whole call: a slow-dripping
    response could otherwise hold the user's prompt far past the budget. A daemon thread left
    behind does not keep the hook process alive.
    """
    outcome: queue.Queue = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            outcome.put((True, fn()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.put((False, exc))

    threading.Thread(target=run, daemon=True, name="memdir-recall").start()
    try:
        ok, value = outcome.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise TimeoutError("recall time budget exceeded") from None
    if ok:
        return value
    raise value


def select_llm(
    query: str,
    candidates: list[Header],
    tools: list[str],
    settings: Settings,
    client=None,
    token_cache: str | os.PathLike | None = None,
    today: date | None = None,
) -> LLMSelection:
    """Ask the model; raises on API errors, on an answer that is missing, truncated, refused or
    unparsable (UnusableAnswer), or when the time budget runs out: the caller falls back."""
    from memdir import constants as C
    from memdir.llm import thinking_options

    if not candidates:
        return LLMSelection([])
    client = client or make_client(timeout=settings.recall_timeout)
    system, messages = request_messages(query, candidates, tools, settings.recall_max, today, token_cache=token_cache)
    deadline = time.monotonic() + settings.recall_timeout

    options = thinking_options(settings.recall_model, think=False, effort=EFFORT)
    # create() rather than parse(): the stop_reason is checked before the text is parsed, so a
    # truncated or refused reply is reported as such, not as a JSON error.
    output_config = {**options.pop("output_config", {}), "format": _output_format()}

    def ask():
        remaining = max(0.05, deadline - time.monotonic())
        return client.messages.create(
            model=settings.recall_model,
            max_tokens=C.RECALL_MAX_TOKENS,
            system=system,
            messages=messages,
            output_config=output_config,
            timeout=remaining,
            **options,
        )

    response = _before_deadline(
        lambda: call_with_retries(ask, max_attempts=settings.max_attempts, deadline=deadline), deadline
    )
    usage = response.usage.model_dump(exclude_none=True) if response.usage else {}
    if response.stop_reason not in ("end_turn", "stop_sequence"):
        raise UnusableAnswer(f"stop_reason={response.stop_reason}")
    text = "".join(b.text for b in response.content if getattr(b, "type", "") == "text").strip()
    if not text:
        raise UnusableAnswer("no parsable selection in the reply (no text)")
    try:
        parsed = Selection.model_validate_json(text)
    except ValueError as exc:
        raise UnusableAnswer(f"no parsable selection in the reply ({str(exc).splitlines()[0][:120]})") from None
    by_path = {h.rel_path: h for h in candidates}
    chosen: list[Header] = []
    unknown: list[str] = []
    for name in parsed.selected_memories:
        header = by_path.get(name.strip())
        if header is None:
            unknown.append(name)
        elif header not in chosen:
            chosen.append(header)
    from memdir.pricing import cost_usd

    return LLMSelection(chosen[: settings.recall_max], unknown, usage, cost_usd(settings.recall_model, usage))
