"""Why recall misses what it misses, on the tuning data only: each gold memory left out, by the step that left it out.

    .venv/bin/python -m benchmarks.recall_misses [--locomo] [--lexical] [--quiet]

The offline selector's steps (recall.explain walks them exactly as offline.select_offline does), and the
first one a gold memory fails, in order:
- not a candidate: recall.manifest.candidates never showed it to the selector;
- no match: it shares no meaning-bearing word with the prompt and is not close in meaning;
- under the floor: it scores under RELATIVE_FLOOR of the best match;
- outranked: it is past the first `recall_max` (5) ranked memories; "(would clear the bar)" when
  offline.relevant would have passed it, so the ranking alone keeps it out;
- meaning check: ranked in, but no memory stands out in meaning (offline.about_folder);
- under the bar: ranked in, and offline.relevant says no (too few of the prompt's own words, or too
  little above the folder's median cosine).
On the real folder (`benchmarks/realdata_recall.yaml`) each gold file counts once per prompt; on LoCoMo a
question counts once, by its best-placed gold memory (hit@5 needs one). Only the development sets (those not held out: 1, 2, 5)
and LoCoMo conversations 0-4 are read: the held-out ones (sets 3-4, conversations 5-9) are for the one
run at the end of a change, never for finding out what to change.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.realdata_labels import DEFAULT_LABELS, load_labels
from memdir.config import Settings
from memdir.evals.realdata_path import locate_realdata, missing_reason
from memdir.scan import Header, scan
from memdir.stages.recall import offline as O
from memdir.stages.recall.explain import explain
from memdir.stages.recall.manifest import candidates

STEPS = ["picked", "under the bar", "meaning check", "outranked (would clear the bar)", "outranked",
         "under the floor", "no match", "not a candidate"]
LOCOMO_TUNING = [0, 1, 2, 3, 4]


def placements(query: str, headers: list[Header], gold: set[str], limit: int, dense=None,
               folder: Path | None = None) -> dict[str, str]:
    """Per gold file, the first selector step it fails ("picked" when it passes them all)."""
    pool = candidates(headers, query)
    asked = dense.similarities(folder, query, pool) if dense is not None else None
    verdicts = explain(query, pool, limit, None, asked)
    sims = asked if asked is not None and any(s is not None for s in asked) else [None] * len(pool)
    margins, leads = O._margins(sims), O._leads(sims)
    about = O.about_folder(margins)
    ranked = sorted((v for v in verdicts if v.score >= O.RELATIVE_FLOOR), key=lambda v: -v.score)
    place = {id(v.header): n for n, v in enumerate(ranked)}
    index = {id(h): i for i, h in enumerate(pool)}
    found = O.signals(query, pool, asked).found  # as the selector saw it (with the identifiers it names)
    on_day = O.written_on_named_day(pool, query)  # past the floor, a dated memory's date counted in its score
    out = dict.fromkeys(gold, "not a candidate")
    for v in (v for v in verdicts if v.header.rel_path in gold):
        i = index[id(v.header)]
        if v.passed:
            step = "picked"
        elif v.score <= 0:
            step = "no match"
        elif v.score < O.RELATIVE_FLOOR:
            step = "under the floor"
        elif place[id(v.header)] >= limit:
            would = O.relevant(found, i, sims[i], on_day[i], margins[i], leads[i], about)
            step = "outranked (would clear the bar)" if would else "outranked"
        elif not about and sims[i] is not None:
            step = "meaning check"
        else:
            step = "under the bar"
        out[v.header.rel_path] = step
    return out


def realdata_rows(dense, limit: int, quiet: bool) -> Counter:
    labels = load_labels(DEFAULT_LABELS)
    root = locate_realdata()
    if root is None:
        raise SystemExit(f"recall_misses: the real folder is not here ({missing_reason()})")
    tally: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="memdir-misses-") as tmp:
        folder = Path(tmp) / "memory"
        shutil.copytree(root / labels.folder, folder)
        headers = scan(folder).headers
        if dense is not None:
            dense.embed_missing(folder, headers)
        for case in (c for c in labels.cases if not c.held_out and c.gold):
            steps = placements(case.prompt, headers, set(case.gold), limit, dense, folder)
            tally.update(steps.values())
            if not quiet:
                print(f"[{case.set_name}] {case.prompt!r}")
                for rel, step in sorted(steps.items(), key=lambda item: STEPS.index(item[1])):
                    print(f"    {step:<32} {rel}")
    return tally


def locomo_rows(dense, limit: int) -> Counter:
    from memdir.evals.locomo import build, default_data_path, load

    samples = load(default_data_path())
    tally: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="memdir-misses-") as tmp:
        for index in LOCOMO_TUNING:
            folder = Path(tmp) / f"conv{index}" / "memory"
            conversation = build(samples[index], index, folder)
            headers = scan(folder).headers
            if dense is not None:
                dense.embed_missing(folder, headers)
            for question in conversation.questions:
                steps = placements(question.text, headers, question.gold, limit, dense, folder)
                tally[min(steps.values(), key=STEPS.index)] += 1
    return tally


def table(title: str, tally: Counter) -> list[str]:
    total = sum(tally.values())
    lines = [f"{title}: {total}"]
    lines += [f"    {step:<32} {tally[step]:>4}  {tally[step] / max(1, total):.0%}" for step in STEPS if tally[step]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", action="store_true", help="also LoCoMo conversations 0-4, one row per question")
    parser.add_argument("--lexical", action="store_true", help="without the dense model (what a hook answers alone)")
    parser.add_argument("--quiet", action="store_true", help="only the tallies")
    args = parser.parse_args(argv)
    dense = None
    if not args.lexical:
        from memdir.embed_models import with_second
        from memdir.embeddings import shared_model

        dense = with_second(shared_model())  # MEMDIR_DENSE_SECOND: a second opinion (embed_models)
        if dense is None:
            print("recall_misses: the dense model is not installed or MEMDIR_DENSE=0; pass --lexical", file=sys.stderr)
            return 2
    limit = Settings.from_env().recall_max
    lines = table("real folder, development sets, gold files", realdata_rows(dense, limit, args.quiet))
    if args.locomo:
        lines += table("LoCoMo 0-4, questions (by the best-placed gold memory)", locomo_rows(dense, limit))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    from benchmarks.common import pinned_hash_seed

    pinned_hash_seed("benchmarks.recall_misses")  # the lexical ranking's ties follow string hashing
    sys.exit(main())
