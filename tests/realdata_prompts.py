"""The labelled real prompts (benchmarks/realdata_recall.yaml) that tests comparing two ways of recalling share.

A sample across every set: the answers compared are one implementation's against another's (caches, indexes), which
any real prompt tests alike. SAMPLE prompts, spread evenly over all of them, keep every set in and the suite's time
the same as sets are added (every third prompt had grown from 28 to 45 with sets 6 to 8). 24 since the suite neared
its time budget again (36 took some 12 s more of the two workers' time; 24 still take prompts from every set). The
file is parsed once per process: six modules ask for the sample, one of them per test (0.2 s of YAML each time).
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

LABELS = Path(__file__).resolve().parents[1] / "benchmarks" / "realdata_recall.yaml"
SAMPLE = 24


@functools.cache
def _sample() -> tuple[str, ...]:
    data = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    every = [p["prompt"] for s in data["sets"] for p in s["prompts"]]
    if len(every) <= SAMPLE:
        return tuple(every)
    return tuple(every[i * len(every) // SAMPLE] for i in range(SAMPLE))


def sampled_prompts() -> list[str]:
    return list(_sample())
