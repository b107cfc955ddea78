"""benchmarks.recall_fit: the logistic fit and the selection it is scored by (top 5 at or above a threshold)."""

from __future__ import annotations

import numpy as np

from benchmarks.recall_fit import fit, predict, score, top_above


def test_the_fit_ranks_by_the_signal_that_tells_gold_apart():
    rng = np.random.default_rng(0)
    signal, noise = rng.normal(size=400), rng.normal(size=400)
    gold = (signal + 0.3 * rng.normal(size=400) > 0.5).astype(float)
    X = np.column_stack([signal, noise])
    model = fit(X, gold, np.ones(400), l2=1.0)
    _, _, beta = model
    assert beta[0] > 1.0 and abs(beta[1]) < 0.5 * beta[0]
    probability = predict(model, X)
    assert probability[gold == 1].mean() > 0.5 > probability[gold == 0].mean()


def _prompt(kind, golds, off_topic=False, group="g"):
    return {"kind": kind, "group": group, "off_topic": off_topic, "n_gold": sum(golds),
            "rows": [{"gold": g, "chain": False, "passes": False} for g in golds]}


def test_selection_takes_at_most_five_at_or_above_the_threshold_and_scores_them():
    prompts = [_prompt("real", [True, False, False, False, False, False, False]),
               _prompt("real", [False, False], off_topic=True), _prompt("locomo", [False, True])]
    pid = np.array([0] * 7 + [1] * 2 + [2] * 2)
    prob = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.52, 0.51, 0.2, 0.1, 0.6, 0.4])
    loose = score(prompts, pid, top_above(prob, 0.0))
    assert (loose["picks"], loose["good"], loose["off"], loose["hits"]) == (7, 1, "0/1", 1)
    strict = score(prompts, pid, top_above(prob, 0.5))
    assert (strict["picks"], strict["good"], strict["off"], strict["hits"]) == (5, 1, "1/1", 0)
