"""`memdir batch` on one big transcript: peak RSS of walking all its windows, against the transcript's size.

    python -m benchmarks.batch_memory [--mb 100] [--keep DIR] [--extract]

The session repeats a real claude-code-log transcript with fresh uuids, as one conversation. Without --extract
it walks the windows as `memdir batch` does (no extraction), which is where a whole-file read shows; with
--extract it runs `memdir batch --dry-run` offline. On 2026-11-27, 100 MB: the whole read before took 183 MB
peak RSS for the batch (178 MB for the walk), the forward read 45 MB (24 MB).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.huge_transcript import _real_transcript, write_copies

WALK = """
import sys
from pathlib import Path
from memdir.transcript_stream import transcript_windows
count = sum(len(window) for window in transcript_windows(Path(sys.argv[1]), None, 20))
print(count)
"""


def build(target: Path, megabytes: int) -> Path:
    """Copies of a real session with fresh uuids, each copy's root line parented on the previous copy's last
    line: one conversation, no rewinds (copies that shared a root would read as rewound, all but one)."""
    real_lines = _real_transcript().read_text(encoding="utf-8").splitlines()
    with open(target, "w", encoding="utf-8") as out:
        write_copies(out, real_lines, megabytes, chained=True)
    return target


def peak_of(argv: list[str], home: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MB, last output line) of one child process; run it in a fresh parent for a clean peak."""
    env = {**os.environ, "MEMDIR_ENGINE": "offline", "ANTHROPIC_API_KEY": "", "HOME": str(home)}
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"failed: {done.stderr.strip()[-400:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lines = (done.stdout or done.stderr).strip().splitlines()
    return seconds, peak, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the big transcript here")
    parser.add_argument("--extract", action="store_true", help="run the whole `memdir batch --dry-run`, offline")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        big = where / f"batch-{args.mb}mb.jsonl"
        if not big.exists():
            build(big, args.mb)
        if args.extract:
            cmd = [sys.executable, "-m", "memdir.entry.main", "batch", str(big), "--dry-run", "--engine", "offline"]
        else:
            cmd = [sys.executable, "-c", WALK, str(big)]
        seconds, peak, last = peak_of(cmd, Path(tmp))
        print(f"{big.stat().st_size >> 20} MB transcript: {seconds:.1f} s, peak RSS {peak:.0f} MB ({last})")
        print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
