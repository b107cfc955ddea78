"""The one place memdir talks to the Anthropic API: client construction, request options per model,
the retry layer, and the endpoint cool-down.

The SDK's own retries are switched off (`max_retries=0`) and tenacity owns retrying, so attempts
never multiply (SDK 2 x tenacity 4 would be 8 calls). Retried: 408, 409, 429, 5xx incl. 529
(overloaded) and connection errors, unless the server says otherwise with `x-should-retry`;
`retry-after`/`retry-after-ms` is honoured. `anthropic` is imported only here and only when a call
is about to be made: it costs ~1.7 s to import.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TypeVar

from memdir import constants as C

T = TypeVar("T")

MAX_BACKOFF = 20.0
NO_KEY_PLACEHOLDER = "memdir-no-key"  # a gateway at ANTHROPIC_BASE_URL may need no key; the SDK insists on one


def make_client(timeout: float | None = None, *, async_client: bool = False, env: Mapping[str, str] | None = None):
    """An SDK client that finds credentials the way the SDK does by default (API key, auth token,
    ANTHROPIC_PROFILE, workload identity federation, the active profile on disk). Only a configured
    base URL with none of those gets the placeholder key, for gateways that need no key."""
    import anthropic

    from memdir.engines import sdk_credentials_present

    env = os.environ if env is None else env
    kwargs: dict = {"max_retries": 0}
    if env.get("ANTHROPIC_BASE_URL") and not sdk_credentials_present(env):
        kwargs["api_key"] = NO_KEY_PLACEHOLDER
    if timeout is not None:
        kwargs["timeout"] = timeout
    # base_url: the SDK reads ANTHROPIC_BASE_URL itself.
    return (anthropic.AsyncAnthropic if async_client else anthropic.Anthropic)(**kwargs)


# --- what each model accepts --------------------------------------------------------------------
# From the model pages and migration guides (platform.claude.com/docs/en/models/...): every 5.x
# model thinks adaptively when `thinking` is omitted and rejects manual budgets, sampling
# parameters and assistant prefill; effort goes in `output_config.effort`. The lowest thinking
# setting differs: Haiku 5.5, Opus 5 and Sonnet 5 accept `disabled` (effort <= high), Sonnet 5.5
# wants `between_tools` instead, and Opus 5.5 / Fable / Mythos cannot turn thinking down at all.
LOWEST_THINKING = {
    "claude-haiku-5-5": {"type": "disabled"},
    "claude-opus-5": {"type": "disabled"},
    "claude-sonnet-5": {"type": "disabled"},
    "claude-sonnet-5-5": {"type": "between_tools"},
}
ADAPTIVE_MODELS = frozenset({
    "claude-fable-5-2", "claude-mythos-5-2", "claude-haiku-5-5", "claude-sonnet-5-5", "claude-fable-5-1",
    "claude-opus-5-5", "claude-mythos-5-1", "claude-sonnet-5", "claude-fable-5", "claude-mythos-5", "claude-opus-5",
    "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6",
})
# Forced tool choice (`any` / `tool`) returns 400 on these.
NO_FORCED_TOOL_CHOICE = frozenset({"claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5-1", "claude-fable-5-2",
                                   "claude-mythos-5-1", "claude-mythos-5-2", "claude-haiku-5-5"})


def thinking_options(model: str, *, think: bool, effort: str) -> dict:
    """Explicit `thinking` and `output_config.effort` for `model`, or {} for a model (older, or a
    gateway's own name) where sending them could be rejected."""
    if model not in ADAPTIVE_MODELS:
        return {}
    thinking = LOWEST_THINKING.get(model) if not think else None
    if effort in ("xhigh", "max"):
        thinking = None  # disabled / between_tools are rejected above `high`
    return {"thinking": thinking or {"type": "adaptive"}, "output_config": {"effort": effort}}


# --- retry layer --------------------------------------------------------------------------------
def is_retryable(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, anthropic.APIStatusError):
        hint = (exc.response.headers.get("x-should-retry") or "").strip().lower() if exc.response is not None else ""
        if hint in ("true", "false"):  # the server knows best (the SDK's own rule, kept in our one layer)
            return hint == "true"
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def is_connection_failure(exc: BaseException) -> bool:
    """The endpoint could not be reached at all (not: it answered with an error)."""
    import anthropic

    return isinstance(exc, anthropic.APIConnectionError) and not isinstance(exc, anthropic.APITimeoutError)


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

    attempts_used_up = tenacity.stop_after_attempt(max_attempts)

    def stop(retry_state) -> bool:
        if attempts_used_up(retry_state):
            return True
        return deadline is not None and time.monotonic() + _wait(retry_state) >= deadline  # out of time

    return {
        "retry": tenacity.retry_if_exception(is_retryable),
        "stop": stop,
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


# --- endpoint cool-down -------------------------------------------------------------------------
def _endpoint_state_path(env: Mapping[str, str] | None = None):
    from memdir.paths import config_home

    return config_home(env) / "memdir" / "run" / C.ENDPOINT_STATE_NAME


def _endpoint(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"


def mark_unreachable(error: str, *, env: Mapping[str, str] | None = None, now: float | None = None) -> None:
    """Remember that the endpoint could not be reached, so prompt hooks skip it for a while."""
    from memdir.fsio import atomic_write_text
    from memdir.secrets import redact

    now = time.time() if now is None else now
    data = {"endpoint": _endpoint(env), "since": now, "until": now + C.ENDPOINT_COOLDOWN_SECONDS, "error": error[:300]}
    try:  # redacted: ANTHROPIC_BASE_URL may carry a password, an error may quote a key
        atomic_write_text(_endpoint_state_path(env), redact(json.dumps(data)))
    except OSError:
        pass  # best effort: without the note the next prompt simply tries again


def clear_unreachable(env: Mapping[str, str] | None = None) -> None:
    try:
        _endpoint_state_path(env).unlink()
    except OSError:
        pass


def unreachable(env: Mapping[str, str] | None = None, now: float | None = None) -> dict | None:
    """The cool-down note for the configured endpoint while it lasts, else None."""
    try:
        data = json.loads(_endpoint_state_path(env).read_text(encoding="utf-8")[:4096])
    except (OSError, ValueError):
        return None
    now = time.time() if now is None else now
    from memdir.secrets import redact

    if not isinstance(data, dict) or data.get("endpoint") != redact(_endpoint(env)):  # stored redacted
        return None
    if not isinstance(data.get("until"), (int, float)) or data["until"] <= now:
        return None
    return data
