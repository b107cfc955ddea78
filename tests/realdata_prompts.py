"""The labelled real prompts (benchmarks/realdata_recall.yaml) that tests comparing two ways of recalling share.

A sample across every set: the answers compared are one implementation's against another's (caches, indexes), which
any real prompt tests alike. SAMPLE prompts, spread evenly over all of them, keep every set in and the suite's time
the same as sets are added. The default run takes 12 (one to three per set: the suite sat at its 150 s budget with
24, these comparisons over the sample being some 12 s of the two workers' time); the tests that compare whole
answers over the sample also run with LARGER_SAMPLE under `--slow` (SIZES), so CI still compares 48. The file is
parsed once per process: several modules ask for the sample, one of them per test (0.2 s of YAML each time).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml

LABELS = Path(__file__).resolve().parents[1] / "benchmarks" / "realdata_recall.yaml"
SAMPLE = 12
LARGER_SAMPLE = 48
# For a test that compares answers over the whole sample: the default run's, and a larger one with --slow.
SIZES = [pytest.param(SAMPLE, id="sample"), pytest.param(LARGER_SAMPLE, id="larger", marks=pytest.mark.slow)]


@functools.cache
def _sample(size: int) -> tuple[str, ...]:
    data = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    every = [p["prompt"] for s in data["sets"] for p in s["prompts"]]
    if len(every) <= size:
        return tuple(every)
    return tuple(every[i * len(every) // size] for i in range(size))


def sampled_prompts(size: int = SAMPLE) -> list[str]:
    return list(_sample(size))
