"""Realistic Anthropic Messages API payloads for respx routes (shapes as the API returns them)."""

from __future__ import annotations

import itertools
import json

import httpx

_ids = itertools.count(1)


def usage(input_tokens=120, output_tokens=30, cache_read=0, cache_write=0) -> dict:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
        "service_tier": "standard",
    }


def message(content: list[dict], stop_reason: str = "end_turn", model: str = "claude-haiku-5-5", **u) -> dict:
    return {
        "id": f"msg_01{next(_ids):022d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage(**u),
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def thinking(value: str = "Let me weigh what is worth keeping...") -> dict:
    """A thinking block as the thinking models return it (the signature must be sent back as is)."""
    return {"type": "thinking", "thinking": value, "signature": f"sig_{next(_ids):08d}" + "A" * 40}


def refusal_details(category: str = "general_harms") -> dict:
    return {"type": "refusal", "category": category, "explanation": None}


def tool_use(name: str, tool_input: dict, id_: str | None = None) -> dict:
    return {"type": "tool_use", "id": id_ or f"toolu_01{next(_ids):022d}", "name": name, "input": tool_input}


def selection(*names: str, **u) -> httpx.Response:
    """A structured-output answer for the recall selector."""
    return httpx.Response(200, json=message([text(json.dumps({"selected_memories": list(names)}))], **u))


def error(status: int, retry_after: str | None = None, should_retry: str | None = None) -> httpx.Response:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
    kind = kinds.get(status, "api_error")
    headers = {"request-id": f"req_{next(_ids)}"}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if should_retry is not None:
        headers["x-should-retry"] = should_retry
    body = {"type": "error", "error": {"type": kind, "message": f"{kind.replace('_', ' ')}"}}
    return httpx.Response(status, json=body, headers=headers)


def batch(batch_id: str, status: str = "in_progress", n: int = 1) -> dict:
    """A MessageBatch object as the Batches API returns it."""
    ended = status == "ended"
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0,
                           "canceled": 0, "expired": 0},
        "created_at": "2026-03-02T09:00:00Z",
        "ended_at": "2026-03-02T09:05:00Z" if ended else None,
        "expires_at": "2026-03-03T09:00:00Z",
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"https://api.anthropic.com/v1/messages/batches/{batch_id}/results" if ended else None,
    }


def batch_results(results: dict[str, dict]) -> httpx.Response:
    """JSONL results: custom_id -> a message (succeeded) or {"error": ...} (errored)."""
    lines = []
    for custom_id, message_or_error in results.items():
        if "error" in message_or_error:
            result = {"type": "errored", "error": {"type": "error", "error": message_or_error["error"]}}
        else:
            result = {"type": "succeeded", "message": message_or_error}
        lines.append(json.dumps({"custom_id": custom_id, "result": result}))
    return httpx.Response(200, content="\n".join(lines).encode(), headers={"content-type": "application/binary"})
