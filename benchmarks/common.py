"""Shared helpers: same-run baselines, medians, throwaway memory folders."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

WORDS = ("deploy payments ledger kafka consumer offsets grafana dashboard release freeze mobile react backend "
         "migration postgres index latency alerting oncall runbook tracker sprint review testing mocks database "
         "staging feature flag rollout customer invoice refund").split()


def write_memories(root: Path, count: int, seed: int = 7) -> None:
    """`count` realistic memory files plus an index; mtimes spread over a year."""
    import random

    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    types = ("user", "feedback", "project", "reference")
    index = []
    now = time.time()
    for i in range(count):
        kind = types[i % 4]
        words = " ".join(rng.choice(WORDS) for _ in range(10))
        name = f"{kind} note {i}"
        body = f"{words}.\n\n**Why:** {rng.choice(WORDS)} matters\n**How to apply:** check {rng.choice(WORDS)} first\n"
        path = root / f"{kind}_note_{i}.md"
        path.write_text(f"---\nname: {name}\ndescription: {words}\ntype: {kind}\n---\n\n{body}", encoding="utf-8")
        stamp = now - rng.random() * 365 * 86400
        os.utime(path, (stamp, stamp))
        index.append(f"- [{name}]({path.name}) — {words[:60]}")
    (root / "MEMORY.md").write_text("\n".join(index[:200]) + "\n", encoding="utf-8")


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def precompile() -> None:
    """Write .pyc files for memdir's packages, as `pip install` does for users.

    Without them (an editable install under PYTHONDONTWRITEBYTECODE=1) every hook run would
    compile memdir from source and the timings would measure the compiler, not memdir.
    """
    import compileall

    repo = Path(__file__).resolve().parents[1]
    for package in ("memdir", "recall", "extractor", "prompts", "evals"):
        compileall.compile_dir(repo / package, quiet=1)


HASH_SEED = "0"


def pinned_hash_seed(module: str) -> None:
    """Re-run `module` (python -m) under PYTHONHASHSEED=0 unless a seed was chosen: the lexical ranker's
    pseudo-relevance feedback breaks ties between equally weighted terms in set order, so string
    hashing moves scores (and a pick or two) from run to run. Pass PYTHONHASHSEED=N to see another."""
    if os.environ.get("PYTHONHASHSEED") is None:
        os.execve(sys.executable, [sys.executable, "-m", module, *sys.argv[1:]],
                  {**os.environ, "PYTHONHASHSEED": HASH_SEED})


def process_env(extra: dict | None = None) -> dict:
    env = {**os.environ, **(extra or {})}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_process(argv: list[str], stdin: str, env: dict | None = None) -> None:
    subprocess.run(argv, input=stdin, text=True, capture_output=True, env=process_env(env), check=True)


BARE_PYTHON = [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"]


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) a process has used so far, NaN where it cannot be read (no /proc, or gone):
    what the machine's load does not inflate."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
