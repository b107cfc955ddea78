"""Runtime settings from the environment (and flags, which override them).

A light frozen record rather than a pydantic model on purpose: the prompt hook reads these on every
prompt, and pydantic's import plus model build (~190 ms here) is more than its whole budget.
Invalid values are one-line errors naming the variable.
"""

from __future__ import annotations

import math
import os

from memdir import constants as C
from memdir.engines import ENGINES, normalize as _normalize_engine
from memdir.errors import MemdirError
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# Current, non-deprecated ids from anthropic 2.12's own model list.
DEFAULT_EXTRACT_MODEL = "claude-sonnet-5-5"
DEFAULT_RECALL_MODEL = "claude-haiku-5-5"
DEFAULT_JUDGE_MODEL = "claude-sonnet-5-5"


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise MemdirError(f"${name}={raw!r} is not a number; set it like {name}={default}") from None
    if not math.isfinite(value):
        raise MemdirError(f"${name}={raw!r} must be a finite number; set it like {name}={default}")
    if value < 0:
        raise MemdirError(f"${name}={raw!r} must not be negative")
    return value


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    value = _float(env, name, default)
    if value != int(value):
        raise MemdirError(f"${name} must be a whole number")
    return int(value)


def _positive(value: int, name: str) -> int:
    if value < 1:
        raise MemdirError(f"{name} must be at least 1 (messages per extraction window)")
    return value


def _write_mode(env: Mapping[str, str]) -> str | None:
    raw = env.get(C.WRITE_MODE_ENV, "")
    if not raw.strip():
        return None  # the usual case: memdir.write_mode (its own imports) is not loaded for every hook's Settings
    from memdir.write_mode import parse

    return parse(raw, f"${C.WRITE_MODE_ENV}")


class Settings(FrozenRecord):
    engine: str = "auto"
    extract_model: str = DEFAULT_EXTRACT_MODEL
    recall_model: str = DEFAULT_RECALL_MODEL
    judge_model: str = DEFAULT_JUDGE_MODEL
    recall_timeout: float = 2.0  # seconds the LLM selector may take before the offline result is used
    recall_max: int = 5
    recall_session_bytes: int = 60 * 1024  # stop surfacing after this much per session
    extract_last_n: int = 20  # messages per batch window (the hook and `extract` read the whole new window)
    # whole-window extraction runs once per chunk of about this many tokens
    extract_chunk_tokens: int = C.EXTRACT_CHUNK_TOKENS
    extract_max_turns: int = 5
    extract_every_n_turns: int = 1
    daily_token_budget: int = 2_000_000  # tokens per memory folder per day, then extraction falls back to offline
    max_attempts: int = 4  # tenacity's attempts per API call (SDK retries are off)
    # MEMDIR_WRITE_MODE as set (validated): auto | confirm | manual | read-only; None when unset, then the
    # config files decide. Writers ask memdir/write_mode.py, which knows the memory folder's config too.
    write_mode: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        d = cls()  # the defaults
        raw_engine = env.get("MEMDIR_ENGINE", "auto").strip().lower() or "auto"
        if raw_engine not in ENGINES:
            raise MemdirError(f"$MEMDIR_ENGINE={raw_engine!r} is unknown; use auto, anthropic, claude-code or offline")
        engine = _normalize_engine(raw_engine)
        return cls(
            engine=engine,
            extract_model=env.get("MEMDIR_EXTRACT_MODEL") or DEFAULT_EXTRACT_MODEL,
            recall_model=env.get("MEMDIR_RECALL_MODEL") or DEFAULT_RECALL_MODEL,
            judge_model=env.get("MEMDIR_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL,
            recall_timeout=_float(env, "MEMDIR_RECALL_TIMEOUT", d.recall_timeout),
            extract_last_n=_positive(_int(env, "MEMDIR_EXTRACT_LAST_N", d.extract_last_n), "$MEMDIR_EXTRACT_LAST_N"),
            extract_chunk_tokens=max(1_000, _int(env, "MEMDIR_EXTRACT_CHUNK_TOKENS", d.extract_chunk_tokens)),
            extract_every_n_turns=max(1, _int(env, "MEMDIR_EXTRACT_EVERY", d.extract_every_n_turns)),
            daily_token_budget=_int(env, "MEMDIR_DAILY_TOKEN_BUDGET", d.daily_token_budget),
            max_attempts=max(1, _int(env, "MEMDIR_MAX_ATTEMPTS", d.max_attempts)),
            write_mode=_write_mode(env),
        )

    def with_overrides(self, **overrides: Any) -> Settings:  # field values of any type; None: not given
        given = {k: v for k, v in overrides.items() if v is not None}
        if "extract_last_n" in given:
            _positive(given["extract_last_n"], "--last")
        if "engine" in given:
            given["engine"] = _normalize_engine(str(given["engine"]))
        return self.replace(**given)


# Engine choice lives in memdir/engines.py (auto order, credentials, the claude CLI).
from memdir.engines import choose_engine, llm_configured, prompt_engine, recall_engine  # noqa: E402,F401
