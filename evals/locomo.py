"""Recall quality on the public LoCoMo data (shared/bench/locomo): one memory per observation.

Query = question; gold = observations whose evidence ids intersect the question's. Reported:
hit@5 (at least one gold memory among those recalled) and evidence recall@5 (share of a question's
gold memories that were recalled). Conversations 0-4 tune, 5-9 are held out.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memdir.model import Memory, MemoryType
from memdir.store import MemoryStore

_EVIDENCE = re.compile(r"D\d+:\d+")
ADVERSARIAL = 5


def default_data_path() -> Path:
    """`shared/bench/locomo/locomo10.json`, found beside the real data (evals.realdata_path's one locator)."""
    from memdir.evals.realdata_path import REPO, locate_realdata

    real = locate_realdata()
    shared = real.parent if real is not None else REPO.parent / "shared"
    return shared / "bench" / "locomo" / "locomo10.json"


def _ids(value: object) -> set[str]:
    if isinstance(value, list):
        return set().union(*(_ids(v) for v in value)) if value else set()
    return set(_EVIDENCE.findall(str(value)))


def _session_time(conversation: dict, session: str) -> float | None:
    raw = conversation.get(f"{session}_date_time")
    if not raw:
        return None
    try:
        return datetime.strptime(raw, "%I:%M %p on %d %B, %Y").timestamp()
    except ValueError:
        return None


@dataclass
class Observation:
    rel_path: str
    fact: str
    evidence: set[str]


@dataclass
class Question:
    text: str
    gold: set[str]  # rel paths
    category: int


@dataclass
class Conversation:
    index: int
    sample_id: str
    observations: list[Observation] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def build(sample: dict, index: int, root: Path) -> Conversation:
    """Write one memory file per observation into `root`; mtimes are the session dates."""
    store = MemoryStore(root)
    conv = Conversation(index, sample.get("sample_id", str(index)))
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for key, per_speaker in sample["observation"].items():
        session = key.removesuffix("_observation")
        stamp = _session_time(sample["conversation"], session)
        for speaker, observations in per_speaker.items():
            for n, (fact, evidence) in enumerate(observations):
                rel = f"user_{session}_{speaker.lower()}_{n}.md"
                memory = Memory(name=f"{speaker} {session} #{n}", description=fact, type=MemoryType.user, body=fact)
                text = f"---\nname: {memory.name}\ndescription: {json.dumps(fact)}\ntype: user\n---\n\n{fact}\n"
                (root / rel).write_text(text, encoding="utf-8")
                if stamp:
                    os.utime(root / rel, (stamp, stamp))
                conv.observations.append(Observation(rel, fact, _ids(evidence)))
                lines.append(f"- [{memory.name}]({rel})")
    store.index_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for qa in sample["qa"]:
        if qa.get("category") == ADVERSARIAL:
            continue
        wanted = _ids(qa.get("evidence", []))
        gold = {o.rel_path for o in conv.observations if o.evidence & wanted}
        if gold:
            conv.questions.append(Question(qa["question"], gold, qa.get("category", 0)))
    return conv


def load(path: Path | None = None) -> list[dict]:
    return json.loads((path or default_data_path()).read_text(encoding="utf-8"))


@dataclass
class Score:
    questions: int = 0
    hits: int = 0
    evidence_recall: float = 0.0
    selected: int = 0
    gold_selected: int = 0

    def add(self, gold: set[str], chosen: list[str]) -> None:
        self.questions += 1
        found = len(gold & set(chosen))
        self.hits += found > 0
        self.evidence_recall += found / len(gold)
        self.selected += len(chosen)
        self.gold_selected += found

    @property
    def hit_at_5(self) -> float:
        return self.hits / self.questions if self.questions else 0.0

    @property
    def precision(self) -> float:
        """Share of the recalled memories that are evidence for the question."""
        return self.gold_selected / self.selected if self.selected else 0.0

    @property
    def recall_at_5(self) -> float:
        return self.evidence_recall / self.questions if self.questions else 0.0


Selector = Callable[[str, Path], list[str]]  # (question, memory folder) -> chosen rel paths


def evaluate(samples: list[dict], indices: list[int], selector: Selector, limit: int | None = None) -> Score:
    score = Score()
    with tempfile.TemporaryDirectory(prefix="memdir-locomo-") as tmp:
        for i in indices:
            root = Path(tmp) / f"conv{i}" / "memory"
            conv = build(samples[i], i, root)
            for q in conv.questions[:limit]:
                score.add(q.gold, selector(q.text, root))
    return score


def run_records(engine: str, settings, limit: int | None = None, progress=None) -> list[dict]:
    """The LoCoMo recall benchmark as eval records (one per question; pass = hit@5)."""
    import time as _time

    from memdir.stages.recall.api import recall

    samples = load()
    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="memdir-locomo-") as tmp:
        for i, sample in enumerate(samples):
            root = Path(tmp) / f"conv{i}" / "memory"
            conv = build(sample, i, root)
            for n, q in enumerate(conv.questions[:limit]):
                started = _time.monotonic()
                result = recall(root, q.text, settings=settings, engine=engine, record=False)
                chosen = {h.rel_path for h in result.selected}
                found = len(chosen & q.gold)
                record = {"case": f"conv{i}-q{n}", "suite": "locomo",
                          "tags": [f"half-{'0-4' if i < 5 else '5-9'}", f"category-{q.category}"],
                          "repeat": 0, "engine": result.engine, "model": None, "inputs_hash": "",
                          "status": "pass" if found else "fail",
                          "grades": [{"check": "hit@5", "passed": bool(found),
                                      "reason": f"evidence recall {found}/{len(q.gold)}"}],
                          "outputs": {"selected": sorted(chosen), "evidence_recall": found / len(q.gold)},
                          "usage": result.usage, "cost_usd": 0.0, "cache_hit": False, "error": None,
                          "latency_s": round(_time.monotonic() - started, 3)}
                records.append(record)
                if progress:
                    progress.update(record)
    return records
