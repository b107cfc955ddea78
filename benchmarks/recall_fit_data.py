"""Per (prompt, memory) signals of the offline selector, with gold labels, from the tuning data only.

    .venv/bin/python -m benchmarks.recall_fit_data [--out PATH] [--work DIR]

Reads the real folder's development sets (those not `held_out` in benchmarks/realdata_recall.yaml) and
LoCoMo conversations 0-4; never set 3, set 4 or conversations 5-9. For every prompt, every memory of its
candidate pool that the selector would rank (a positive fused score) gets one row: the signals
`recall.offline.signals` computes (the same code the selector runs) as numbers (`pair_features`), its gold
label, whether the hand-set bar chain picks it, and whether it clears that chain's bar at any rank.
benchmarks/recall_fit.py fits and cross-validates a model on them.
`--work`: where the folders and their dense vectors are kept between runs (embedding is most of the time).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

from benchmarks.realdata_labels import DEFAULT_LABELS, load_labels
from memdir.evals.realdata_path import locate_realdata
from memdir.scan import Header, scan
from memdir.stages.recall import offline as O
from memdir.stages.recall.manifest import candidates

LOCOMO_TUNING = [0, 1, 2, 3, 4]


def _ranks(values: list[float]) -> list[int]:
    """Each value's place when sorted high to low (0: the highest)."""
    out = [0] * len(values)
    for place, i in enumerate(sorted(range(len(values)), key=lambda i: -values[i])):
        out[i] = place
    return out


FEATURE_NAMES = ("lexical", "boost", "fused", "margin", "below_top", "prompt_margin", "share", "distinct", "titled",
                 "matched_share", "worded", "lexical_rank", "dense_rank", "dated", "length", "cosine", "query_words", "pool",
                 "named")


def pair_features(sig: O.Signals, headers: list[Header]) -> list[list[float]]:
    """Per memory the selector ranks (sig.order), its signals for the prompt as numbers (FEATURE_NAMES)."""
    found, sims = sig.found, sig.similarities
    lexical_ranks = _ranks(sig.lexical)
    dense_ranks = _ranks([-1.0 if s is None else s for s in sims])
    best_margin = max((m for m in sig.margins if m is not None), default=0.0)
    top = max((s for s in sims if s is not None), default=0.0)
    best = sig.scores[sig.order[0]] if sig.order else 1.0
    rows = []
    for i in sig.order:
        similarity, header = sims[i], headers[i]
        worded = (found.share[i] >= O.COVERAGE_BAR and found.distinct[i] >= 1
                  and (found.titled[i] or found.matched[i] >= min(O.MIN_WORDS_MATCHED, found.query_words)))
        rows.append([sig.lexical[i], sig.boosts[i], sig.scores[i] / best, sig.margins[i] or 0.0,
                     (similarity - top) if similarity is not None else -1.0, best_margin, found.share[i],
                     float(found.distinct[i] >= 1), float(found.titled[i]), found.matched[i] / max(1, found.query_words),
                     float(worded), math.log1p(lexical_ranks[i]), math.log1p(dense_ranks[i]), float(sig.dated[i]),
                     math.log1p(len(header.description or "") + len(header.excerpt)), similarity or 0.0,
                     math.log1p(found.query_words), math.log(len(headers)), float(found.named[i])])
    return rows


def prompt_rows(query: str, folder: Path, dense, gold: set[str]) -> dict:
    """One prompt's candidate rows: features, gold labels, the chain's picks."""
    pool = candidates(scan(folder).headers, query)
    sims = dense.similarities(folder, query, pool)
    signals = O.signals(query, pool, sims)
    chain = {id(h) for h in O.select_offline(query, pool, similarities=sims)}
    rows = []
    best = signals.scores[signals.order[0]] if signals.order else 1.0
    for i, features in zip(signals.order, pair_features(signals, pool), strict=True):
        passes = signals.scores[i] >= best * O.RELATIVE_FLOOR and O.relevant(
            signals.found, i, signals.similarities[i], signals.dated[i], signals.margins[i], signals.leads[i],
            signals.about)
        rows.append({"features": features, "gold": pool[i].rel_path in gold,
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
    args.out.write_text(json.dumps({"names": list(FEATURE_NAMES), "prompts": prompts}))
    print(f"{len(prompts)} prompts, {sum(len(p['rows']) for p in prompts)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    from benchmarks.common import pinned_hash_seed

    pinned_hash_seed("benchmarks.recall_fit_data")  # the lexical ranking's ties follow string hashing
    sys.exit(main())
