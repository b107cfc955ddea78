"""Estimated cost per case. Prices are USD per million tokens and are ESTIMATES: set
MEMDIR_PRICES='{"model-id": [input, output]}' to your contract's numbers. Cache reads are billed at
0.1x and cache writes at 1.25x the input price."""

from __future__ import annotations

import json
import os

DEFAULT_PRICES = {"haiku": (1.0, 5.0), "sonnet": (3.0, 15.0), "opus": (5.0, 25.0)}


def price(model: str) -> tuple[float, float]:
    custom = json.loads(os.environ.get("MEMDIR_PRICES", "{}") or "{}")
    if model in custom:
        return tuple(custom[model])  # type: ignore[return-value]
    for family, value in DEFAULT_PRICES.items():
        if family in model:
            return value
    return DEFAULT_PRICES["sonnet"]


def cost_usd(model: str, usage: dict) -> float:
    inp, out = price(model)
    return (
        usage.get("input_tokens", 0) * inp
        + usage.get("output_tokens", 0) * out
        + usage.get("cache_read_input_tokens", 0) * inp * 0.1
        + usage.get("cache_creation_input_tokens", 0) * inp * 1.25
    ) / 1_000_000
