"""Running eval cases, each in its own temporary memory folder, through memdir's public functions."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memdir import constants as C
from memdir.config import Settings
from memdir.evals.cases import BehaviourCase, Case, ExtractionCase, RecallCase, SeedMemory
from memdir.evals.graders import Grade, grade_extraction, grade_recall
from memdir.model import Memory
from memdir.pricing import cost_usd
from memdir.prompts import VARIANT_ENV
from memdir.scan import scan
from memdir.store import MemoryStore
from memdir.transcript import Message, read_transcript

DAY = 86400


def seed(memory_dir: Path, memories: list[SeedMemory], now: float) -> None:
    """The case's memories, each written `age_days` before `now`: its file time and its `modified:` stamp."""
    from datetime import UTC, datetime

    from memdir.model import stamped_at

    store = MemoryStore(memory_dir)
    memory_dir.mkdir(parents=True, exist_ok=True)
    for m in memories:
        stamp = now - m.age_days * DAY
        with stamped_at(datetime.fromtimestamp(stamp, UTC)):
            result = store.save(Memory(name=m.name, description=m.description, type=m.type, body=m.body),
                                rel_path=m.file, allow_secrets=True)
        os.utime(result.path, (stamp, stamp))


def snapshot(memory_dir: Path) -> dict[str, str]:
    if not memory_dir.exists():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in memory_dir.glob("*.md") if p.name != C.INDEX_NAME}


def case_messages(case: ExtractionCase) -> list[Message]:
    if case.transcript_path:
        return read_transcript(Path(case.transcript_path)).messages
    return [
        Message(m.role, [{"type": "text", "text": m.content}] if isinstance(m.content, str) else m.content,
                uuid=f"case-{i}", timestamp=m.timestamp or f"{case.today.isoformat()}T09:00:00Z")
        for i, m in enumerate(case.transcript or [])
    ]


def inputs_hash(case: Case, variant: str | None) -> str:
    blob = case.model_dump_json() + (variant or "")
    if variant:
        for path in sorted(Path(variant).glob("*.j2")):
            blob += path.read_text(encoding="utf-8")
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_case(case: Case, *, engine: str, settings: Settings, client=None, repeat: int = 0,
             variant: str | None = None) -> dict:
    started = time.monotonic()
    record: dict[str, Any] = {"case": case.id, "suite": case.suite, "tags": case.tags, "repeat": repeat, "engine": engine,
              "model": None, "inputs_hash": inputs_hash(case, variant), "status": "pass", "grades": [],
              "outputs": {}, "usage": {}, "cost_usd": 0.0, "cache_hit": False, "error": None}
    try:
        with tempfile.TemporaryDirectory(prefix=f"memdir-eval-{case.suite}-") as tmp:
            memory_dir = Path(tmp) / "memory"
            grades = _run(case, memory_dir, engine, settings, client, record)
    except Exception as exc:  # noqa: BLE001 - a crashed case is reported, not raised
        from memdir.llm import describe_error

        record["status"], record["error"] = "error", describe_error(exc)
        grades = []
    record["latency_s"] = round(time.monotonic() - started, 3)
    if grades is None:
        record["status"] = record["status"] if record["status"] in ("error", "skipped") else "skipped"
    else:
        record["grades"] = [g.model_dump() for g in grades]
        if record["status"] == "pass" and not all(g.passed for g in grades):
            record["status"] = "fail"
    if record["usage"]:
        record["cost_usd"] = round(cost_usd(record["model"] or settings.extract_model, record["usage"]), 6)
        record["cache_hit"] = record["usage"].get("cache_read_input_tokens", 0) > 0
    return record


def _run(case: Case, memory_dir: Path, engine: str, settings: Settings, client, record: dict) -> list[Grade] | None:
    now = time.time()
    if isinstance(case, ExtractionCase):
        from memdir.evals.realdata import last_time
        from memdir.model import stamped_at
        from memdir.stages.extractor.run import extract_messages

        messages = case_messages(case)
        ended = last_time(messages, case.today)  # the session's clock: what it writes is stamped then, not now
        seed(memory_dir, case.existing, ended.timestamp())
        memory_dir.mkdir(parents=True, exist_ok=True)
        before = snapshot(memory_dir)
        with stamped_at(ended):
            result = extract_messages(messages, memory_dir, settings=settings, engine=engine, today=case.today,
                                      client=client)
        record["model"] = settings.extract_model if result.engine == "llm" else None
        record["usage"] = result.usage
        after = snapshot(memory_dir)
        record["outputs"] = {"status": result.status, "engine": result.engine, "saved": result.saved,
                             "deleted": result.deleted, "tool_errors": result.errors, "turns": result.turns,
                             "files": {k: v for k, v in after.items() if before.get(k) != v}}
        if result.status == "failed":
            record["status"], record["error"] = "error", result.reason
            return None
        return grade_extraction(case, before, after)
    if isinstance(case, RecallCase):
        from memdir.embeddings import shared_model
        from memdir.stages.recall.api import recall

        seed(memory_dir, case.memories, now)
        dense = shared_model()  # as the warm recall server answers when the model is installed
        if dense is not None:
            dense.embed_missing(memory_dir, [h for h in scan(memory_dir).headers])
        recalled = recall(memory_dir, case.query, settings=settings, engine=engine, tools=case.tools, record=False,
                        now=now, client=client, dense=dense)
        selected = [h.rel_path for h in recalled.selected]
        record["model"] = settings.recall_model if engine == "llm" else None
        record["usage"] = {k: v for k, v in recalled.usage.items() if isinstance(v, int)}
        record["outputs"] = {"selected": selected, "engine": recalled.engine, "debug": recalled.debug}
        if engine == "llm" and recalled.engine != "llm":
            record["status"], record["error"] = "error", "; ".join(recalled.debug) or "the llm selector failed"
            return None
        return grade_recall(case, selected)
    if isinstance(case, BehaviourCase):
        if engine != "llm":
            record["status"], record["error"] = "skipped", "behaviour cases need an LLM (--engine llm)"
            return None
        from memdir.evals.judge import run_behaviour

        seed(memory_dir, case.memories, now)
        grades, usage, reply = run_behaviour(case, memory_dir, settings, client)
        record["model"], record["usage"], record["outputs"] = settings.extract_model, usage, {"reply": reply}
        return grades
    raise TypeError(f"unknown case type {type(case).__name__}")


class Progress:
    """A one-line bar on a terminal; a plain line per case otherwise (CI logs, pipes)."""

    def __init__(self, total: int, stream=None) -> None:
        self.total, self.done, self.counts = total, 0, {"pass": 0, "fail": 0, "error": 0, "skipped": 0}
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def update(self, record: dict) -> None:
        self.done += 1
        self.counts[record["status"]] += 1
        if self.tty:
            filled = int(30 * self.done / max(1, self.total))
            summary = " ".join(f"{k} {v}" for k, v in self.counts.items() if v)
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {summary}")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"{self.done}/{self.total} {record['suite']}/{record['case']} #{record['repeat']}: "
                              f"{record['status']}\n")
        self.stream.flush()


@contextmanager
def prompt_variant(variant: str | None) -> Iterator[None]:
    """$MEMDIR_PROMPT_VARIANT set to `variant` for the run, as `--variant` promises."""
    previous = os.environ.get(VARIANT_ENV)
    if variant:
        os.environ[VARIANT_ENV] = str(Path(variant).resolve())
    try:
        yield
    finally:
        if variant:
            if previous is None:
                os.environ.pop(VARIANT_ENV, None)
            else:
                os.environ[VARIANT_ENV] = previous


def run_cases(cases: list[Case], *, engine: str, settings: Settings, repeat: int = 1, concurrency: int = 4,
              variant: str | None = None, client=None, progress: Progress | None = None) -> list[dict]:
    jobs = [(case, r) for case in cases for r in range(repeat)]
    progress = progress or Progress(len(jobs))

    def one(job):
        case, r = job
        record = run_case(case, engine=engine, settings=settings, client=client, repeat=r, variant=variant)
        progress.update(record)
        return record

    with prompt_variant(variant), ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, jobs))


def write_results(records: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
