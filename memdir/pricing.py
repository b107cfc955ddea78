"""Estimated cost of a model call, from Anthropic's published prices (USD per million tokens).

Source: platform.claude.com/docs/en/about-claude/pricing and each model's overview page, as of
2026-11-22 (Sonnet 5.5's cache-read price was cut from $0.20 to $0.10 on 2026-10-07; Haiku 5.5 is
priced by prompt length: a request whose prompt, counting cache reads and writes, exceeds 100,000
tokens pays the higher band on every token). These are ESTIMATES: set MEMDIR_PRICES to your
contract's numbers, e.g. '{"claude-sonnet-5-5": [2, 10]}' (input, output; cache prices follow the
standard multipliers) or '{"claude-sonnet-5-5": {"input": 2, "output": 10, "cache_read": 0.1}}'.
The Batches API bills half of every rate (BATCH_DISCOUNT).
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

BATCH_DISCOUNT = 0.5
LONG_PROMPT_TOKENS = 100_000


class Price(NamedTuple):
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


def _standard(inp: float, out: float, read: float | None = None) -> Price:
    """The usual multipliers: 5-minute writes 1.25x, 1-hour writes 2x, reads 0.1x of input."""
    return Price(inp, out, inp * 1.25, inp * 2, inp * 0.1 if read is None else read)


# One row per model id in the SDK's own list (anthropic.types.Model); tests/test_pricing.py keeps
# the two in step. Retired ids the SDK still lists for old code are priced too, so old logs cost out.
PRICES: dict[str, Price] = {
    "claude-fable-5-2": Price(8, 40, 10, 16, 0.20),
    "claude-mythos-5-2": Price(8, 40, 10, 16, 0.20),
    "claude-fable-5-1": Price(10, 50, 12.5, 20, 0.25),
    "claude-mythos-5-1": Price(10, 50, 12.5, 20, 0.25),
    "claude-fable-5": _standard(10, 50),
    "claude-mythos-5": _standard(10, 50),
    "claude-opus-5-5": Price(4, 20, 5, 8, 0.20),
    "claude-opus-5": _standard(5, 25),
    "claude-opus-4-8": _standard(5, 25),
    "claude-opus-4-7": _standard(5, 25),
    "claude-opus-4-6": _standard(5, 25),
    "claude-opus-4-5": _standard(5, 25),
    "claude-opus-4-5-20251101": _standard(5, 25),
    "claude-sonnet-5-5": Price(2, 10, 2.5, 4, 0.10),
    "claude-sonnet-5": _standard(2, 10),
    "claude-sonnet-4-6": _standard(3, 15),
    "claude-sonnet-4-5": _standard(3, 15),
    "claude-sonnet-4-5-20250929": _standard(3, 15),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.20, 0.01),
    "claude-haiku-4-5": _standard(1, 5),
    "claude-haiku-4-5-20251001": _standard(1, 5),
}
# Haiku 5.5 above LONG_PROMPT_TOKENS of prompt.
LONG_PROMPT_PRICES: dict[str, Price] = {"claude-haiku-5-5": Price(0.50, 2.50, 0.625, 1.00, 0.05)}
FALLBACK_MODEL = "claude-sonnet-5-5"  # an unknown id (a gateway's own name) is estimated at Sonnet's price


def _custom(model: str) -> Price | None:
    try:
        custom = json.loads(os.environ.get("MEMDIR_PRICES", "") or "{}")
    except ValueError:
        return None
    value = custom.get(model) if isinstance(custom, dict) else None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return _standard(float(value[0]), float(value[1]))
    if isinstance(value, dict) and "input" in value and "output" in value:
        base = _standard(float(value["input"]), float(value["output"]))
        return base._replace(**{k: float(v) for k, v in value.items() if k in Price._fields})
    return None


def model_price(model: str, prompt_tokens: int = 0) -> Price:
    custom = _custom(model)
    if custom is not None:
        return custom
    base = model.split("[", 1)[0]  # "claude-sonnet-5-5[1m]" as Claude Code names it
    if prompt_tokens > LONG_PROMPT_TOKENS and base in LONG_PROMPT_PRICES:
        return LONG_PROMPT_PRICES[base]
    return PRICES.get(base) or PRICES[FALLBACK_MODEL]


def price(model: str) -> tuple[float, float]:
    """(input, output) USD per million tokens, for one-line summaries."""
    p = model_price(model)
    return p.input, p.output


def cost_usd(model: str, usage: dict, *, batch: bool = False) -> float:
    """USD for one response's `usage` (or a sum of them: then Haiku 5.5's long-prompt band is not
    applied, since the total is no single prompt). 1-hour cache writes are priced apart when the
    usage says how many there were (`cache_creation_1h_input_tokens`, summed by the agent)."""
    u = {k: int(v or 0) for k, v in (usage or {}).items() if isinstance(v, (int, float))}
    writes = u.get("cache_creation_input_tokens", 0)
    writes_1h = min(writes, u.get("cache_creation_1h_input_tokens", 0))
    prompt = u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0) + writes
    p = model_price(model, prompt)
    total = (
        u.get("input_tokens", 0) * p.input
        + u.get("output_tokens", 0) * p.output
        + u.get("cache_read_input_tokens", 0) * p.cache_read
        + (writes - writes_1h) * p.cache_write_5m
        + writes_1h * p.cache_write_1h
    ) / 1_000_000
    return total * (BATCH_DISCOUNT if batch else 1.0)
