"""The LLM selector: one structured-output side query to a fast model (SPEC §4)."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from memdir.config import Settings
from memdir.llm import call_with_retries, make_client
from memdir.scan import Header
from recall.manifest import manifest

MAX_TOKENS = 256


class Selection(BaseModel):
    """The model's answer: file names taken from the manifest."""

    selected_memories: list[str] = Field(max_length=20, description="file names from the list, best first")


@dataclass
class LLMSelection:
    selected: list[Header]
    unknown: list[str] = field(default_factory=list)  # names the model made up; dropped
    usage: dict = field(default_factory=dict)


def request_messages(
    query: str, candidates: list[Header], tools: list[str], max_selected: int
) -> tuple[str, list[dict]]:
    from prompts import render

    system = render("recall_system.j2", max_selected=max_selected)
    user = render("recall_user.j2", query=query, manifest=manifest(candidates), tools=tools)
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
) -> LLMSelection:
    """Ask the model; raises on API errors or when the time budget runs out (the caller falls back)."""
    if not candidates:
        return LLMSelection([])
    client = client or make_client(timeout=settings.recall_timeout)
    system, messages = request_messages(query, candidates, tools, settings.recall_max)
    deadline = time.monotonic() + settings.recall_timeout

    def ask():
        remaining = max(0.05, deadline - time.monotonic())
        return client.messages.parse(
            model=settings.recall_model,
            max_tokens=MAX_TOKENS,
            system=system,
            messages=messages,
            output_format=Selection,
            timeout=remaining,
        )

    response = _before_deadline(
        lambda: call_with_retries(ask, max_attempts=settings.max_attempts, deadline=deadline), deadline
    )
    parsed = response.parsed_output or Selection(selected_memories=[])
    by_path = {h.rel_path: h for h in candidates}
    chosen: list[Header] = []
    unknown: list[str] = []
    for name in parsed.selected_memories:
        header = by_path.get(name.strip())
        if header is None:
            unknown.append(name)
        elif header not in chosen:
            chosen.append(header)
    usage = response.usage.model_dump(exclude_none=True) if response.usage else {}
    return LLMSelection(chosen[: settings.recall_max], unknown, usage)
