"""What the offline engine's rules cost per real session (the Stop hook's worker runs them each turn).

    .venv/bin/python -m benchmarks.offline_extract [--session KEY ...] [--repeat 5]

Reads each realdata transcript once, then times `offline.detect` over all its messages (the median
of --repeat runs) and prints the mean and the slowest session. No threshold: compare two checkouts'
output on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from memdir.evals.realdata import session_key
from memdir.evals.realdata_path import main_sessions, sessions2
from memdir.stages.extractor.offline import detect
from memdir.transcript import read_transcript


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/work/shared/realdata")
    parser.add_argument("--session", action="append", help="only these session keys (default: every session)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(args.root)
    timings: dict[str, float] = {}
    for transcript in main_sessions(root) + sessions2(root):
        key = session_key(root, transcript)
        if args.session and key not in args.session:
            continue
        messages = read_transcript(transcript)
        messages = getattr(messages, "messages", messages)
        runs = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            detect(messages)
            runs.append(time.perf_counter() - start)
        timings[key] = statistics.median(runs)
    if not timings:
        raise SystemExit("no session matched")
    slowest = max(timings, key=lambda k: timings[k])
    print(f"offline detect over {len(timings)} sessions: mean {1000 * statistics.mean(timings.values()):.1f} ms, "
          f"total {1000 * sum(timings.values()):.0f} ms, slowest {slowest} {1000 * timings[slowest]:.1f} ms")


if __name__ == "__main__":
    main()
