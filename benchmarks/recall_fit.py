"""Fit and cross-validate a logistic model over the selector's per-(prompt, memory) signals.

    .venv/bin/python -m benchmarks.recall_fit [--rows PATH] [--real-weight W] [--l2 L] [--features a,b,...]

Rows come from benchmarks/recall_fit_data.py (tuning data only: the real folder's development sets and
LoCoMo conversations 0-4). Cross-validation leaves one group out at a time (a LoCoMo conversation or a
real-folder set), fits on the rest, and scores the left-out group's prompts: selection = the top 5 by
probability at or above a threshold. Printed per threshold: the real folder's precision / recall and
silent off-topic prompts, LoCoMo hit@5, for the out-of-fold probabilities, next to the hand-set chain's
figures on the same rows. Then the model fitted on everything, as constants for recall/offline.py.
NumPy is used here only (fitting); the selector computes a dot product.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

LIMIT = 5


def load(path: Path, names: list[str] | None):
    data = json.loads(path.read_text())
    all_names = data["names"]
    keep = [all_names.index(n) for n in names] if names else list(range(len(all_names)))
    prompts = data["prompts"]
    X, y, pid = [], [], []
    for p, prompt in enumerate(prompts):
        for row in prompt["rows"]:
            X.append([row["features"][k] for k in keep])
            y.append(row["gold"])
            pid.append(p)
    return [all_names[k] for k in keep], prompts, np.array(X, float), np.array(y, float), np.array(pid)


def fit(X: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted L2-regularised logistic regression by Newton steps, on standardised features.
    Returns (mean, scale, coefficients with the intercept last)."""
    mean, scale = X.mean(0), X.std(0)
    scale[scale == 0] = 1.0
    Z = np.hstack([(X - mean) / scale, np.ones((len(X), 1))])
    beta = np.zeros(Z.shape[1])
    penalty = np.full(Z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-Z @ beta))
        grad = Z.T @ (w * (p - y)) + penalty * beta
        hess = (Z * (w * p * (1 - p))[:, None]).T @ Z + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, beta


def predict(model, X: np.ndarray) -> np.ndarray:
    mean, scale, beta = model
    return 1 / (1 + np.exp(-(((X - mean) / scale) @ beta[:-1] + beta[-1])))


def weights(prompts, pid: np.ndarray, real_weight: float) -> np.ndarray:
    """Each prompt weighs 1 in all (its rows share it), a real-folder prompt `real_weight`."""
    counts = np.bincount(pid, minlength=len(prompts)).astype(float)
    per_prompt = np.array([real_weight if p["kind"] == "real" else 1.0 for p in prompts])
    return per_prompt[pid] / np.maximum(counts[pid], 1)


def score(prompts, pid: np.ndarray, chosen_of, group: str | None = None) -> dict:
    """Real-folder precision / recall / off-topic silent and LoCoMo hit@5 for a selection per prompt."""
    picks = good = gold = off = off_silent = hits = questions = 0
    for p, prompt in enumerate(prompts):
        if group is not None and prompt["group"] != group:
            continue
        rows = prompt["rows"]
        chosen = chosen_of(p, np.flatnonzero(pid == p))
        found = sum(rows[k]["gold"] for k in chosen)
        if prompt["kind"] == "real":
            picks += len(chosen)
            good += found
            gold += prompt["n_gold"]
            if prompt["off_topic"]:
                off += 1
                off_silent += not chosen
        else:
            questions += 1
            hits += found > 0
    return {"P": good / picks if picks else float("nan"), "R": good / gold if gold else float("nan"),
            "picks": picks, "good": good, "off": f"{off_silent}/{off}", "hit": hits / max(1, questions), "hits": hits}


GATE: dict = {}  # --gate: the chain's own per-prompt meaning check (about_folder), applied first


def top_above(prob: np.ndarray, threshold: float):
    def chosen_of(p: int, index: np.ndarray) -> list[int]:
        if GATE and GATE["X"][index[0], GATE["column"]] < GATE["bar"]:
            return []
        order = sorted(range(len(index)), key=lambda k: -prob[index[k]])[:LIMIT]
        return [k for k in order if prob[index[k]] >= threshold]
    return chosen_of


def reranked(prompts, prob: np.ndarray, pid: np.ndarray):
    """The chain's bar, its top 5 ordered by the model instead of the fused score."""
    def chosen_of(p: int, index: np.ndarray) -> list[int]:
        rows = prompts[p]["rows"]
        passing = [k for k in range(len(index)) if rows[k]["passes"]]
        return sorted(passing, key=lambda k: -prob[index[k]])[:LIMIT]
    return chosen_of


def reordered(prompts, prob: np.ndarray):
    """The model's top 5, each kept if it passes the chain's bar (the chain with the model's order)."""
    def chosen_of(p: int, index: np.ndarray) -> list[int]:
        rows = prompts[p]["rows"]
        top = sorted(range(len(index)), key=lambda k: -prob[index[k]])[:LIMIT]
        return [k for k in top if rows[k]["passes"]]
    return chosen_of


def chain(prompts):
    return lambda p, index: [k for k, row in enumerate(prompts[p]["rows"]) if row["chain"]]


def fmt(s: dict) -> str:
    return (f"real P {s['P']:.2f} R {s['R']:.2f} ({s['good']}/{s['picks']}) off-topic silent {s['off']}  "
            f"LoCoMo hit@5 {s['hit']:.3f} ({s['hits']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, default=Path("/tmp/memdir-fit/rows.json"))
    parser.add_argument("--real-weight", type=float, default=10.0)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--features", help="comma-separated subset of the feature names")
    parser.add_argument("--gate", type=float, help="prompts whose closest memory stands out by less are silent")
    parser.add_argument("--sets", action="store_true", help="also the real folder's sets apart")
    parser.add_argument("--real-only", action="store_true", help="fit and score the real folder's sets alone")
    parser.add_argument("--thresholds", default="0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.6")
    args = parser.parse_args(argv)
    names, prompts, X, y, pid = load(args.rows, args.features.split(",") if args.features else None)
    mask = np.ones(len(y), bool)
    if args.real_only:
        keep_prompts = [p for p, prompt in enumerate(prompts) if prompt["kind"] == "real"]
        renumber = {p: n for n, p in enumerate(keep_prompts)}
        mask = np.isin(pid, keep_prompts)
        X, y, pid = X[mask], y[mask], np.array([renumber[p] for p in pid[mask]])
        prompts = [prompts[p] for p in keep_prompts]
    w = weights(prompts, pid, args.real_weight)
    if args.gate is not None:
        all_names = json.loads(args.rows.read_text())["names"]
        _, _, X_all, _, _ = load(args.rows, None)
        if args.real_only:
            X_all = X_all[mask]
        GATE.update(X=X_all, column=all_names.index("prompt_margin"), bar=args.gate)
    groups = np.array([prompts[p]["group"] for p in pid])
    print(f"{len(prompts)} prompts, {len(y)} rows, {int(y.sum())} gold; features: {', '.join(names)}")
    print(f"{'chain (hand-set bars)':<24} {fmt(score(prompts, pid, chain(prompts)))}")
    oof = np.zeros(len(y))
    for group in sorted(set(groups)):
        out = groups == group
        oof[out] = predict(fit(X[~out], y[~out], w[~out], args.l2), X[out])
    thresholds = [float(t) for t in args.thresholds.split(",")]
    print(f"{'CV, rerank in bar':<24} {fmt(score(prompts, pid, reranked(prompts, oof, pid)))}")
    print(f"{'CV, model order + bar':<24} {fmt(score(prompts, pid, reordered(prompts, oof)))}")
    real_sets = sorted({p["group"] for p in prompts if p["kind"] == "real"}) if args.sets else []
    for group in real_sets:
        print(f"{'  chain ' + group:<24} {fmt(score(prompts, pid, chain(prompts), group))}")
    for t in thresholds:
        print(f"{'CV, threshold ' + str(t):<24} {fmt(score(prompts, pid, top_above(oof, t)))}")
        for group in real_sets:
            print(f"{'  ' + group:<24} {fmt(score(prompts, pid, top_above(oof, t), group))}")
    model = fit(X, y, w, args.l2)
    full = predict(model, X)
    for t in thresholds:
        print(f"{'in-sample, ' + str(t):<24} {fmt(score(prompts, pid, top_above(full, t)))}")
    mean, scale, beta = model
    print("weights on raw features (intercept last):")
    raw = beta[:-1] / scale
    print("  " + ", ".join(f"{n}={c:+.4f}" for n, c in zip(names, raw, strict=True))
          + f", intercept={beta[-1] - float(raw @ mean):+.4f}")
    print("  standardised: " + ", ".join(f"{n}={c:+.2f}" for n, c in zip(names, beta[:-1], strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
