"""The one place memdir talks to the Anthropic API: client construction and the retry layer.

The SDK's own retries are switched off (`max_retries=0`) and tenacity owns retrying, so attempts
never multiply (SDK 2 x tenacity 4 would be 8 calls). Retried: 408, 409, 429, 5xx incl. 529
(overloaded) and connection errors; `retry-after`/`retry-after-ms` is honoured. `anthropic` is
imported only here and only when a call is about to be made: it costs ~1.7 s to import.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

T = TypeVar("T")

MAX_BACKOFF = 20.0
NO_KEY_PLACEHOLDER = "memdir-no-key"  # a gateway at ANTHROPIC_BASE_URL may need no key; the SDK insists on one


def make_client(timeout: float | None = None, *, async_client: bool = False):
    import anthropic

    kwargs: dict = {"max_retries": 0}
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        kwargs["api_key"] = NO_KEY_PLACEHOLDER
    if timeout is not None:
        kwargs["timeout"] = timeout
    # base_url: the SDK reads ANTHROPIC_BASE_URL itself.
    return (anthropic.AsyncAnthropic if async_client else anthropic.Anthropic)(**kwargs)


def is_retryable(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def retry_after_seconds(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def describe_error(exc: BaseException) -> str:
    """One line for logs and reports: status, type and message, no traceback."""
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", None) or exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {message}"[:300]


def _wait(retry_state) -> float:
    exc = retry_state.outcome.exception() if retry_state.outcome else None
    hinted = retry_after_seconds(exc) if exc else None
    if hinted is not None:
        return min(hinted, 60.0)
    backoff = min(MAX_BACKOFF, 0.5 * 2 ** (retry_state.attempt_number - 1))
    return backoff * (0.75 + random.random() * 0.5)


def _policy(max_attempts: int, deadline: float | None) -> dict:
    """tenacity settings shared by the sync and async callers."""
    import tenacity

    def out_of_time(retry_state) -> bool:
        return deadline is not None and time.monotonic() + _wait(retry_state) >= deadline

    return {
        "retry": tenacity.retry_if_exception(is_retryable),
        "stop": tenacity.stop_after_attempt(max_attempts) | out_of_time,
        "wait": _wait,
        "reraise": True,
    }


def call_with_retries(fn: Callable[[], T], *, max_attempts: int, deadline: float | None = None) -> T:
    """Run `fn`, retrying transient API failures; never waits past `deadline` (time.monotonic())."""
    import tenacity

    return tenacity.Retrying(**_policy(max_attempts, deadline))(fn)


async def acall_with_retries(fn, *, max_attempts: int, deadline: float | None = None):
    """Async twin of `call_with_retries` (batch processing)."""
    import tenacity

    return await tenacity.AsyncRetrying(**_policy(max_attempts, deadline))(fn)
