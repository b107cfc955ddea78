"""Token usage per memory folder per day, in `.memdir/usage/`: the daily budget and `doctor` read it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from memdir import constants as C, safefs, safefs_write

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


FOLDER = f"{C.STATE_DIRNAME}/usage"  # opened through memdir.safefs: never through a symlink


def _read(memory_dir: Path, rel: str) -> dict:
    data = safefs.read_json(memory_dir, rel, {})
    return data if isinstance(data, dict) else {}


def usage_for(memory_dir: Path, day: date) -> dict:
    data = _read(memory_dir, f"{FOLDER}/{day.isoformat()}.json")
    return {**{k: 0 for k in USAGE_FIELDS}, "runs": 0, "budget_notice": False, **data}


def tokens_used(usage: dict) -> int:
    total = 0
    for key in USAGE_FIELDS:
        value = usage.get(key, 0)
        total += value if isinstance(value, int) else 0
    return total


def add_usage(memory_dir: Path, day: date, usage: dict, *, budget_notice: bool | None = None) -> dict:
    with safefs_write.locked(memory_dir, f"{C.STATE_DIRNAME}/usage.lock"):
        total = usage_for(memory_dir, day)
        for key in USAGE_FIELDS:
            before = total[key] if isinstance(total[key], int) else 0
            total[key] = before + int(usage.get(key, 0))
        total["runs"] += 1 if usage else 0
        if budget_notice is not None:
            total["budget_notice"] = budget_notice
        safefs_write.write_text(memory_dir, f"{FOLDER}/{day.isoformat()}.json", json.dumps(total))
    return total


def recent_usage(memory_dir: Path, days: int = 7) -> list[tuple[str, dict]]:
    names = [n for n, kind in safefs.listdir(memory_dir, FOLDER) if kind == "file" and n.endswith(".json")]
    return [(n[: -len(".json")], _read(memory_dir, f"{FOLDER}/{n}")) for n in names[-days:]]
