"""Gold labels for recall on a real memory folder, and the arithmetic that scores picks against them.

The labels live in `benchmarks/realdata_recall.yaml` (how they were written is said there). Scores
are pooled over a set's prompts (micro averages), so a prompt with many gold files weighs more than
one with a single gold file:
- precision: picks that are gold / picks (None when nothing was picked);
- recall: gold files picked / gold files (None when the set has no gold files);
- silent: of the prompts whose gold set is empty (off-topic ones, plus on-topic ones no memory file
  helps), how many got nothing injected; off-topic prompts are also counted apart;
- mean picks and mean injected characters per prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

DEFAULT_LABELS = Path(__file__).with_name("realdata_recall.yaml")


class LabelError(ValueError):
    """The label file is unusable; the message names the file, the field and the fix."""


@dataclass(frozen=True)
class Case:
    set_name: str
    held_out: bool
    prompt: str
    gold: dict[str, str]  # memory file (relative path) -> why it helps
    off_topic: bool = False


@dataclass(frozen=True)
class Labels:
    folder: str  # relative to the realdata root
    cases: list[Case]

    def set_names(self) -> list[str]:
        return list(dict.fromkeys(case.set_name for case in self.cases))

    def held_out(self) -> set[str]:
        return {case.set_name for case in self.cases if case.held_out}


def load_labels(path: Path = DEFAULT_LABELS) -> Labels:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabelError(f"{path}: cannot read the labels ({exc.strerror}); pass --labels PATH") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise LabelError(f"{path}: cannot read the labels: invalid YAML{where} ({problem}); fix the file") from None
    if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
        raise LabelError(f"{path}: expected a mapping with a `sets:` list")
    cases = []
    for s, entry in enumerate(data["sets"]):
        where = f"{path}: sets[{s}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or not isinstance(entry.get("prompts"), list):
            raise LabelError(f"{where}: each set needs a `name:` and a `prompts:` list")
        for p, item in enumerate(entry["prompts"]):
            here = f"{where}.prompts[{p}]"
            if not isinstance(item, dict) or not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
                raise LabelError(f"{here}: needs a non-empty `prompt:` string")
            gold = item.get("gold")
            if not isinstance(gold, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                     for k, v in gold.items()):
                raise LabelError(f"{here}.gold: expected a mapping of memory file -> one-line reason ({{}} for none)")
            off_topic = bool(item.get("off_topic", False))
            if off_topic and gold:
                raise LabelError(f"{here}: an off_topic prompt cannot have gold files; empty `gold:` or drop off_topic")
            cases.append(Case(entry["name"], bool(entry.get("held_out", False)), item["prompt"], dict(gold), off_topic))
    if not cases:
        raise LabelError(f"{path}: no prompts")
    return Labels(str(data.get("folder", "")), cases)


def unknown_gold(labels: Labels, folder: Path) -> list[str]:
    """Gold files the folder does not hold (a label typo would silently lower recall)."""
    return sorted({name for case in labels.cases for name in case.gold if not (folder / name).is_file()})


@dataclass
class Tally:
    prompts: int = 0
    picks: int = 0
    relevant_picks: int = 0
    gold: int = 0
    gold_picked: int = 0
    chars: int = 0
    off_topic: int = 0
    off_topic_silent: int = 0
    empty_gold: int = 0
    empty_gold_silent: int = 0

    def add(self, case: Case, picked: list[str], chars: int) -> None:
        chosen = list(dict.fromkeys(picked))
        self.prompts += 1
        self.picks += len(chosen)
        self.relevant_picks += sum(name in case.gold for name in chosen)
        self.gold += len(case.gold)
        self.gold_picked += sum(name in chosen for name in case.gold)
        self.chars += chars
        if not case.gold:
            self.empty_gold += 1
            self.empty_gold_silent += not chosen
        if case.off_topic:
            self.off_topic += 1
            self.off_topic_silent += not chosen

    @property
    def precision(self) -> float | None:
        return _share(self.relevant_picks, self.picks)

    @property
    def recall(self) -> float | None:
        return _share(self.gold_picked, self.gold)

    @property
    def mean_picks(self) -> float:
        return _share(self.picks, self.prompts) or 0.0

    @property
    def mean_chars(self) -> float:
        return _share(self.chars, self.prompts) or 0.0


def _share(part: int, whole: int) -> float | None:
    """part / whole, None when there is nothing to divide by (no picks has no precision)."""
    return part / whole if whole else None


@dataclass
class Outcome:
    case: Case
    picked: list[str]
    chars: int


@dataclass
class Run:
    """One selector's outcomes over every labelled prompt."""
    mode: str
    outcomes: list[Outcome] = field(default_factory=list)

    def tally(self, set_names: set[str] | None = None) -> Tally:
        total = Tally()
        for o in self.outcomes:
            if set_names is None or o.case.set_name in set_names:
                total.add(o.case, o.picked, o.chars)
        return total


def prompt_lines(outcome: Outcome) -> list[str]:
    """A prompt's picks marked + (gold) or - (not gold), then the gold files it missed."""
    case = outcome.case
    lines = [f"[{case.set_name}] {case.prompt!r}: {len(outcome.picked)} picked, {outcome.chars:,} chars"
             + (" (off-topic)" if case.off_topic else "")]
    lines += [f"    {'+' if name in case.gold else '-'} {name}" for name in outcome.picked]
    lines += [f"    missed {name}" for name in case.gold if name not in outcome.picked]
    return lines


def _fraction(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


TABLE_HEADER = (f"{'mode':<24} {'prompts':<16} {'n':>3} {'picks':>5} {'precision':>9} {'recall':>6} "
                f"{'silent':>8} {'off-topic silent':>16} {'picks/prompt':>12} {'chars/prompt':>12}")


def table_row(mode: str, group: str, t: Tally) -> str:
    return (f"{mode:<24} {group:<16} {t.prompts:>3} {t.picks:>5} {_fraction(t.precision):>9} {_fraction(t.recall):>6} "
            f"{f'{t.empty_gold_silent}/{t.empty_gold}':>8} {f'{t.off_topic_silent}/{t.off_topic}':>16} "
            f"{t.mean_picks:>12.2f} {t.mean_chars:>12,.0f}")
