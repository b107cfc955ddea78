"""The first Stop on a huge transcript: wall time and peak RSS of `memdir extract --session` (the Stop
worker's path) on a session of N MB built from a real transcript, against the same run on the real one.

    python -m benchmarks.huge_transcript [--mb 1024] [--keep DIR]

The session repeats a real claude-code-log transcript with fresh uuids until it reaches N MB, so what
is read is what Claude Code writes; the real prompts are at the end, where the Stop worker reads.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _real_transcript() -> Path:
    from memdir.evals.realdata_path import locate_realdata, missing_reason

    root = locate_realdata()  # the one locator: `../shared` beside a worktree is not the team machine's folder
    if root is None:
        raise SystemExit(missing_reason())
    sessions = sorted(p for p in (root / "claude-code-log").glob("*/*.jsonl") if not p.name.startswith("agent-"))
    return max(sessions, key=lambda p: p.stat().st_size)


def write_copies(out, real_lines: list[str], megabytes: int, chained: bool = False) -> str | None:
    """Copies of the real session's lines with fresh uuids (`c<N>-<uuid>`) until `megabytes` are written. Each copy
    keeps the real session's root; `chained` parents each copy's root on the previous copy's last line instead.
    The last line's uuid."""
    want, written, copy, last = megabytes << 20, 0, 0, None
    while written < want:
        for raw in real_lines:
            obj = json.loads(raw)
            for key in ("uuid", "parentUuid"):
                if isinstance(obj.get(key), str):
                    obj[key] = f"c{copy}-{obj[key]}"
            if chained and "parentUuid" in obj and obj["parentUuid"] is None:
                obj["parentUuid"] = last
            last = obj.get("uuid", last)
            written += out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        copy += 1
    return last


def build(target: Path, megabytes: int) -> Path:
    """Copies of the real session with rewritten uuids, then the real session itself, as one conversation: each
    root line parented on the line before it. (Copies that each kept the real root were sibling prompts of one
    parent, all but the last rewound: the Stop read them and dropped them, which is not what a long session is.)"""
    real_lines = _real_transcript().read_text(encoding="utf-8").splitlines()
    with open(target, "w", encoding="utf-8") as out:
        last = write_copies(out, real_lines, megabytes, chained=True)
        for raw in real_lines:
            obj = json.loads(raw)
            if "parentUuid" in obj and obj["parentUuid"] is None:
                obj["parentUuid"] = last
                raw = json.dumps(obj, ensure_ascii=False)
            last = obj.get("uuid", last)
            out.write(raw + "\n")
    return target


def run_stop(transcript: Path, memory: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MB, reason) of the Stop worker's extraction, offline, first run of a session.
    Peak RSS is the largest of this process's children so far: run the small case first."""
    memory.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMDIR_ENGINE": "offline", "ANTHROPIC_API_KEY": ""}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memdir.entry.main", "extract", str(transcript), "--dir", str(memory),
         "--session", "bench", "--engine", "offline", "--json"],
        capture_output=True, text=True, env=env, timeout=1800,
    )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode not in (0, 1):
        raise SystemExit(f"memdir extract failed: {done.stderr.strip()[-400:]}")
    try:
        runs = json.loads(done.stdout)
        reason = "; ".join(run.get("reason", "") for run in (runs if isinstance(runs, list) else [runs]))
    except ValueError:
        reason = done.stdout.strip()[-400:]
    return seconds, max(peak, before) / 1024, reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the big transcript here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        big = where / f"huge-{args.mb}mb.jsonl"
        if not big.exists():
            build(big, args.mb)
        real = _real_transcript()
        base_s, base_rss, _ = run_stop(real, Path(tmp) / "mem-real")
        big_s, big_rss, reason = run_stop(big, Path(tmp) / "mem-big")
        print(f"real session ({real.stat().st_size >> 10} KB): {base_s:.2f} s, peak RSS {base_rss:.0f} MB")
        print(f"{args.mb} MB session: {big_s:.2f} s ({big_s / base_s:.1f}x), peak RSS {big_rss:.0f} MB")
        print(f"reason: {reason}")
        print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
