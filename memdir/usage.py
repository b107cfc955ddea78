"""Token usage per memory folder per day, in `.memdir/usage/`: the daily budget and `doctor` read it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from memdir import constants as C
from memdir.fsio import atomic_write_text, locked

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _folder(memory_dir: Path) -> Path:
    return memory_dir / C.STATE_DIRNAME / "usage"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def usage_for(memory_dir: Path, day: date) -> dict:
    data = _read(_folder(memory_dir) / f"{day.isoformat()}.json")
    return {**{k: 0 for k in USAGE_FIELDS}, "runs": 0, "budget_notice": False, **data}


def tokens_used(usage: dict) -> int:
    return sum(int(usage.get(k, 0)) for k in USAGE_FIELDS)


def add_usage(memory_dir: Path, day: date, usage: dict, *, budget_notice: bool | None = None) -> dict:
    with locked(memory_dir / C.STATE_DIRNAME / "usage.lock"):
        total = usage_for(memory_dir, day)
        for key in USAGE_FIELDS:
            total[key] += int(usage.get(key, 0))
        total["runs"] += 1 if usage else 0
        if budget_notice is not None:
            total["budget_notice"] = budget_notice
        atomic_write_text(_folder(memory_dir) / f"{day.isoformat()}.json", json.dumps(total))
    return total


def recent_usage(memory_dir: Path, days: int = 7) -> list[tuple[str, dict]]:
    folder = _folder(memory_dir)
    files = sorted(folder.glob("*.json"))[-days:] if folder.is_dir() else []
    return [(f.stem, _read(f)) for f in files]
