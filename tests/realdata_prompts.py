"""The labelled real prompts (benchmarks/realdata_recall.yaml) that tests comparing two ways of recalling share.

A sample across every set: the answers compared are one implementation's against another's (caches, indexes), which
any real prompt tests alike, so every third prompt keeps each set in and the suite's time as it was at 58 prompts
(28 of 83), where every other one had grown with set 6 to 42.
"""

from __future__ import annotations

from pathlib import Path

import yaml

LABELS = Path(__file__).resolve().parents[1] / "benchmarks" / "realdata_recall.yaml"
STEP = 3


def sampled_prompts() -> list[str]:
    data = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    return [p["prompt"] for s in data["sets"] for p in s["prompts"]][::STEP]
