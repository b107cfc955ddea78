"""Eval reports: a markdown summary of a run, and the comparison of two runs."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

from memdir.errors import MemdirError


def wilson(passed: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a pass rate: honest at small n and near 0 or 1."""
    if total == 0:
        return 0.0, 0.0
    p = passed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate_line(label: str, records: list[dict]) -> str:
    graded = [r for r in records if r["status"] in ("pass", "fail")]
    passed = sum(r["status"] == "pass" for r in graded)
    low, high = wilson(passed, len(graded))
    errors = sum(r["status"] == "error" for r in records)
    skipped = sum(r["status"] == "skipped" for r in records)
    rate = f"{passed / len(graded):.0%}" if graded else "-"
    return f"| {label} | {passed}/{len(graded)} | {rate} | {low:.0%}–{high:.0%} | {errors} | {skipped} |"


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(records: list[dict], title: str) -> str:
    lines = [f"# {title}", "", "Pass rate counts graded cases (errors and skips are listed apart); "
             "the interval is a 95% Wilson interval.", "",
             "| suite | passed | rate | 95% CI | errors | skipped |", "|---|---|---|---|---|---|"]
    by_suite: dict[str, list[dict]] = defaultdict(list)
    by_tag: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_suite[r["suite"]].append(r)
        for tag in r.get("tags", []):
            by_tag[f"{r['suite']}:{tag}"].append(r)
    for suite in sorted(by_suite):
        lines.append(_rate_line(suite, by_suite[suite]))
    lines.append(_rate_line("**all**", records))
    if by_tag:
        lines += ["", "## By tag", "", "| tag | passed | rate | 95% CI | errors | skipped |", "|---|---|---|---|---|---|"]
        lines += [_rate_line(tag, by_tag[tag]) for tag in sorted(by_tag)]
    latencies = [r["latency_s"] for r in records if r["status"] in ("pass", "fail")]
    costs = [r.get("cost_usd", 0.0) for r in records]
    tokens = [sum(v for k, v in r.get("usage", {}).items() if k.endswith("tokens")) for r in records]
    cached = sum(bool(r.get("cache_hit")) for r in records)
    lines += ["", "## Cost and latency", "",
              f"- tokens per case: mean {statistics.mean(tokens) if tokens else 0:,.0f}; "
              f"cases that read the prompt cache: {cached}",
              f"- estimated cost: {sum(costs):.4f} USD in all, {statistics.mean(costs) if costs else 0:.5f} USD per case "
              "(prices in memdir/pricing.py are estimates)",
              f"- latency: p50 {_percentile(latencies, 0.5):.2f} s, p95 {_percentile(latencies, 0.95):.2f} s"]
    failures = [r for r in records if r["status"] in ("fail", "error")]
    if failures:
        lines += ["", "## Failures and errors", ""]
        for r in failures:
            if r["status"] == "error":
                lines.append(f"- `{r['suite']}/{r['case']}` #{r['repeat']} ERROR: {r.get('error')}")
                continue
            reasons = "; ".join(f"{g['check']}: {g['reason']}" for g in r["grades"] if not g["passed"])
            lines.append(f"- `{r['suite']}/{r['case']}` #{r['repeat']}: {reasons}")
    return "\n".join(lines) + "\n"


def load_run(path: Path) -> list[dict]:
    target = path / "results.jsonl" if path.is_dir() else path
    try:
        return [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        raise MemdirError(f"{target}: no results here; pass a run folder written by `memdir eval run`") from None
    except ValueError as exc:
        raise MemdirError(f"{target}: not a results JSONL file ({exc})") from None


def compare(a: list[dict], b: list[dict], name_a: str = "A", name_b: str = "B") -> str:
    """Per-case flips between two runs and the difference in pass rate (over cases graded in both)."""

    def outcomes(records: list[dict]) -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = defaultdict(list)
        for r in records:
            out[(r["suite"], r["case"])].append(r["status"])
        return out

    left, right = outcomes(a), outcomes(b)
    lines = [f"# {name_a} vs {name_b}", ""]
    flips = []
    both = sorted(set(left) & set(right))
    for key in both:
        rate_l = left[key].count("pass") / len(left[key])
        rate_r = right[key].count("pass") / len(right[key])
        if rate_l != rate_r:
            arrow = "fixed" if rate_r > rate_l else "broke"
            flips.append(f"- {arrow}: `{key[0]}/{key[1]}` {'/'.join(left[key])} -> {'/'.join(right[key])}")
    graded_l = [s for k in both for s in left[k] if s in ("pass", "fail")]
    graded_r = [s for k in both for s in right[k] if s in ("pass", "fail")]
    rate_a = graded_l.count("pass") / len(graded_l) if graded_l else 0.0
    rate_b = graded_r.count("pass") / len(graded_r) if graded_r else 0.0
    lines.append(f"pass rate over {len(both)} shared cases: {name_a} {rate_a:.1%}, {name_b} {rate_b:.1%} "
                 f"({(rate_b - rate_a) * 100:+.1f} points)")
    only = sorted(set(left) ^ set(right))
    if only:
        lines.append(f"cases in only one run: {len(only)}")
    lines += ["", f"## Flips ({len(flips)})", ""] + (flips or ["none"])
    return "\n".join(lines) + "\n"
