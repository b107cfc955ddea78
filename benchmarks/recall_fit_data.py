"""Per (prompt, memory) signals of the offline selector, with gold labels, from the tuning data only.

    .venv/bin/python -m benchmarks.recall_fit_data [--out PATH] [--work DIR]

Reads the real folder's development sets (those not `held_out` in benchmarks/realdata_recall.yaml) and
LoCoMo conversations 0-4; never set 3, set 4 or conversations 5-9. For every prompt, every memory of its
candidate pool that the selector would rank (a positive fused score) gets one row: the signals
`recall.offline.pair_features` computes (the same code the selector runs), its gold label, and whether the
hand-set bar chain picks it. benchmarks/recall_fit.py fits and cross-validates a model on them.
`--work`: where the folders and their dense vectors are kept between runs (embedding is most of the time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from benchmarks.realdata_labels import DEFAULT_LABELS, load_labels
from memdir.evals.realdata_path import locate_realdata
from memdir.scan import scan
from memdir.stages.recall import offline as O
from memdir.stages.recall.manifest import candidates

LOCOMO_TUNING = [0, 1, 2, 3, 4]


def prompt_rows(query: str, folder: Path, dense, gold: set[str]) -> dict:
    """One prompt's candidate rows: features, gold labels, the chain's picks."""
    pool = candidates(scan(folder).headers, query)
    sims = dense.similarities(folder, query, pool)
    signals = O.signals(query, pool, sims)
    chain = {id(h) for h in O.select_offline(query, pool, similarities=sims)}
    rows = []
    best = signals.scores[signals.order[0]] if signals.order else 1.0
    for i in signals.order:
        passes = signals.scores[i] >= best * O.RELATIVE_FLOOR and O.relevant(
            signals.found, i, signals.similarities[i], signals.dated[i], signals.margins[i], signals.leads[i],
            signals.about)
        rows.append({"features": O.pair_features(signals, pool, i), "gold": pool[i].rel_path in gold,
                     "chain": id(pool[i]) in chain, "passes": passes, "file": pool[i].rel_path})
    return {"prompt": query, "n_gold": len(gold), "gold_in_pool": sum(h.rel_path in gold for h in pool),
            "rows": rows}


def realdata(dense, work: Path) -> list[dict]:
    labels = load_labels(DEFAULT_LABELS)
    root = locate_realdata()
    if root is None:
        raise SystemExit("recall_fit_data: the real folder is not here")
    folder = work / "real" / "memory"
    if not folder.exists():
        shutil.copytree(root / labels.folder, folder)
    dense.embed_missing(folder, scan(folder).headers)
    out = []
    for case in (c for c in labels.cases if not c.held_out):
        entry = prompt_rows(case.prompt, folder, dense, set(case.gold))
        entry.update(group=case.set_name, kind="real", off_topic=case.off_topic)
        out.append(entry)
    return out


def locomo(dense, work: Path) -> list[dict]:
    from memdir.evals.locomo import build, default_data_path, load

    samples = load(default_data_path())
    out = []
    for index in LOCOMO_TUNING:
        folder = work / f"conv{index}" / "memory"
        conversation = build(samples[index], index, folder)
        dense.embed_missing(folder, scan(folder).headers)
        for question in conversation.questions:
            entry = prompt_rows(question.text, folder, dense, question.gold)
            entry.update(group=f"conv{index}", kind="locomo", off_topic=False)
            out.append(entry)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/memdir-fit/rows.json"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/memdir-fit"))
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args(argv)
    from memdir.embeddings import shared_model

    dense = shared_model()
    if dense is None:
        print("recall_fit_data: the dense model is not installed or MEMDIR_DENSE=0", file=sys.stderr)
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    prompts = realdata(dense, args.work) + ([] if args.no_locomo else locomo(dense, args.work))
    args.out.write_text(json.dumps({"names": list(O.FEATURE_NAMES), "prompts": prompts}))
    print(f"{len(prompts)} prompts, {sum(len(p['rows']) for p in prompts)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") is None:  # the lexical ranking's ties follow string hashing (recall_realdata)
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.recall_fit_data", *sys.argv[1:]],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    sys.exit(main())
