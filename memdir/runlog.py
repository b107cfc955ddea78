"""`.memdir/runs.jsonl`: one line per run (extraction, batch, recall through a model) with its
engine, model, token usage and estimated cost; `memdir doctor` sums the last days from it.

The one writer of this log (the extractor's run lines come through append_run too); secrets redacted; every
access goes through memdir/safefs.py (no symlink out of the folder); reads are bounded to the tail.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date, timedelta
from pathlib import Path

from memdir import constants as C, safefs, safefs_write

TAIL_BYTES = 4 << 20  # a week of runs fits many times over; older lines are not needed here


def runs_path(memory_dir: Path) -> Path:
    return memory_dir / C.STATE_DIRNAME / C.RUNS_LOG_NAME


def append_run(memory_dir: Path | str | os.PathLike, entry: dict) -> None:
    from memdir.secrets import redact

    line = redact(json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%S"), **entry}, default=str))
    with safefs_write.locked(memory_dir, f"{C.STATE_DIRNAME}/runs.lock"):
        safefs_write.append_text(memory_dir, f"{C.STATE_DIRNAME}/{C.RUNS_LOG_NAME}", line + "\n",
                                 rotate_at=C.RUNS_LOG_MAX_BYTES)


def _tail_lines(memory_dir: Path) -> list[str]:
    """The last TAIL_BYTES of the run log, whole lines only, across a rotation (C.RUNS_LOG_MAX_BYTES)."""
    return safefs.tail_lines(memory_dir, f"{C.STATE_DIRNAME}/{C.RUNS_LOG_NAME}", TAIL_BYTES)


def cost_by_day(memory_dir: Path, days: int = C.COST_REPORT_DAYS, today: date | None = None) -> list[dict]:
    """One row per day with runs in the last `days` days, oldest first:
    {"day", "runs", "tokens", "cost_usd", "failed", "refusals", "engines": {engine: runs}}."""
    today = today or date.today()
    first = (today - timedelta(days=days - 1)).isoformat()
    rows: dict[str, dict] = {}
    for line in _tail_lines(memory_dir):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        day = str(entry.get("at", ""))[:10] if isinstance(entry, dict) else ""
        if not day or day < first or day > today.isoformat():
            continue
        row = rows.setdefault(day, {"day": day, "runs": 0, "tokens": 0, "cost_usd": 0.0, "failed": 0,
                                    "refusals": 0, "engines": {}})
        usage = entry.get("usage") if isinstance(entry.get("usage"), dict) else {}
        row["runs"] += 1
        row["tokens"] += sum(int(usage.get(k) or 0) for k in ("input_tokens", "output_tokens",
                                                              "cache_read_input_tokens", "cache_creation_input_tokens"))
        row["cost_usd"] += float(entry.get("cost_usd") or 0.0)
        row["failed"] += entry.get("status") == "failed"
        row["refusals"] += int(entry.get("refusals") or 0)
        engine = entry.get("engine") or "none"
        row["engines"][engine] = row["engines"].get(engine, 0) + 1
    return [rows[d] for d in sorted(rows)]


def cost_lines(memory_dir: Path, days: int = C.COST_REPORT_DAYS, today: date | None = None) -> list[str]:
    rows = cost_by_day(memory_dir, days, today)
    if not rows:
        return [f"model usage, last {days} days: no runs recorded"]
    total = sum(r["cost_usd"] for r in rows)
    out = [f"model usage, last {days} days (estimated ${total:.4f}; prices in memdir/pricing.py):"]
    for r in rows:
        extra = "".join(f", {r[k]} {k}" for k in ("failed", "refusals") if r[k])
        engines = ", ".join(f"{e} {n}" for e, n in sorted(r["engines"].items()))
        out.append(f"  {r['day']}: {r['runs']} run(s) ({engines}), {r['tokens']:,} tokens, ${r['cost_usd']:.4f}{extra}")
    return out
