"""How memdir's commands and the dense index grow with the folder: 200 -> 20,000 real-sized memories.

    .venv/bin/python -m benchmarks.scale [--sizes 200,1000,5000,20000] [--repeat 3] [--no-model]

Folders come from benchmarks/realistic.py (the real 55-file folder recombined: ~4.6 KB
non-ASCII files), built once per size in its cache under the temp dir and copied for each run. Every command runs
as a real process with MEMDIR_DENSE=0; figures are medians (min-max) of wall seconds, the CPU seconds
the process used, and the ratio to a bare `python -c pass` in the same run. "doctor (first)" is a
folder memdir has never seen; the other rows run after one `list`, so .memdir/file-facts.json exists.
All run outside any git checkout except "doctor (in a git checkout)", run from this repository.

Dense rows: "vector bookkeeping" is DenseModel.refresh with an instant stand-in engine (memdir's own
cost: scan, keys, appends); "model, CPU ms/memory" embeds a sample of real-sized passages with the real
model on one thread, and "dense index, projected" multiplies it by the count: the model is CPU-bound,
so on an idle machine wall time is that CPU time. The load average is printed: on a shared machine
wall times grow with it, CPU times much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import realistic
from benchmarks.common import precompile

REPO = Path(__file__).resolve().parents[1]
# the cache's .complete marker and any .memdir state other benchmarks left there: a run starts on a folder
# memdir has never seen
PRISTINE = shutil.ignore_patterns(".*")


def pristine(count: int) -> Path:
    """The cached folder of `count` memories; callers copy it (or only read it), never write to it."""
    return realistic.folder(count)


def timed(argv: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) for one run, outside any git checkout unless `cwd` is one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, env={**os.environ, "MEMDIR_DENSE": "0"}, timeout=1800,
                   cwd=cwd or tempfile.gettempdir())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def memdir(folder: Path, *argv: str) -> list[str]:
    return [sys.executable, "-m", "memdir.entry.cli", "--dir", str(folder), *argv]


def command_rows(count: int, repeat: int, bare: float) -> dict[str, str]:
    rows: dict[str, list[tuple[float, float]]] = {}
    for n in range(repeat):
        work = Path(tempfile.mkdtemp(prefix="memdir-scale-")) / "memory"
        shutil.copytree(pristine(count), work, ignore=PRISTINE)
        rows.setdefault("doctor (first)", []).append(timed(memdir(work, "doctor")))
        timed(memdir(work, "list"))
        for name, argv in (("list", ["list"]), ("doctor", ["doctor"]), ("index --rebuild", ["index", "--rebuild"]),
                           ("remember", ["remember", "--type", "project", f"Release train {n} ships on Thursdays"]),
                           ("forget", ["forget", f"project_release_train_{n}_ships_thursdays.md"])):
            rows.setdefault(name, []).append(timed(memdir(work, *argv)))
        # inside a git checkout doctor also checks what the newest memories name against the code
        rows.setdefault("doctor (in a git checkout)", []).append(timed(memdir(work, "doctor"), cwd=REPO))
        shutil.rmtree(work.parent)
    return {name: cell(runs, bare) for name, runs in rows.items()}


def cell(runs: list[tuple[float, float]], bare: float) -> str:
    walls = [w for w, _ in runs]
    wall = statistics.median(walls)
    cpu = statistics.median(c for _, c in runs)
    return f"{wall:.2f} s ({min(walls):.2f}-{max(walls):.2f}), CPU {cpu:.2f} s, {wall / bare:.0f}x"


class InstantEngine:
    dim = 384

    def passage(self, texts):
        import numpy as np

        return np.ones((len(texts), self.dim), dtype=np.float32)

    def query(self, text):
        import numpy as np

        return np.ones(self.dim, dtype=np.float32)


def dense_rows(count: int, model_ms: float | None) -> dict[str, str]:
    from memdir.embeddings import DenseModel

    work = Path(tempfile.mkdtemp(prefix="memdir-scale-dense-")) / "memory"
    shutil.copytree(pristine(count), work, ignore=PRISTINE)
    started = time.perf_counter()
    DenseModel(InstantEngine()).refresh(work)
    rows = {"vector bookkeeping": f"{time.perf_counter() - started:.2f} s"}
    shutil.rmtree(work.parent)
    if model_ms is not None:
        rows["dense index, projected"] = f"{model_ms * count / 60_000:.1f} min"
    return rows


def model_cpu_ms(sample: int = 24) -> float | None:
    """CPU milliseconds per real-sized memory for the real model on one thread, or None without it."""
    from memdir.embeddings import passage_text, shared_model
    from memdir.scan import scan

    os.environ["MEMDIR_DENSE"] = "1"
    model = shared_model(threads=1)
    if model is None:
        return None
    texts = [passage_text(h) for h in scan(pristine(200)).headers[:sample]]
    started = time.process_time()
    for text in texts:
        model.embed_passages([text])
    return (time.process_time() - started) * 1000 / len(texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-model", action="store_true", help="skip the real model's timing")
    args = parser.parse_args(argv)
    precompile()
    sizes = [int(s) for s in args.sizes.split(",")]
    bare = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    model_ms = None if args.no_model else model_cpu_ms()
    if model_ms is not None:
        print(f"model: {model_ms:.0f} CPU ms per real-sized memory (one thread)")
    table: dict[int, dict[str, str]] = {}
    for count in sizes:
        table[count] = {**command_rows(count, args.repeat, bare), **dense_rows(count, model_ms)}
        print(f"{count}: done", file=sys.stderr)
    names = list(table[sizes[0]])
    print(f"\nbare python: {bare * 1000:.0f} ms; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for name in names:
        print(f"| {name} | " + " | ".join(table[n].get(name, "") for n in sizes) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
