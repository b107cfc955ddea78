"""`memdir dream`: distill daily-log entries into typed topic memories. Safe to re-run.

`.memdir/dream.json` remembers how far into each log the last successful pass got; only newer
entries are distilled, and the offline engine's near-duplicate check keeps reruns from piling up
copies. Claude Code gates its own pass at >= 24 h and >= 5 sessions; `due()` applies that gate.
"""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path

from memdir import constants as C, githistory, safefs, safefs_write, usage, write_mode
from memdir.config import Settings, choose_engine
from memdir.daylog import LogEntry, entries
from memdir.stages.extractor import offline, report
from memdir.stages.extractor.drafts import Draft, Forget
from memdir.stages.extractor.result import ExtractResult
from memdir.stages.extractor.tools import Toolbox
from memdir.store import MemoryStore

MIN_HOURS, MIN_SESSIONS = 24, 5


STATE = f"{C.STATE_DIRNAME}/dream.json"  # opened through memdir.safefs: never through a symlink


def _load(memory_dir: Path) -> dict:
    try:
        data = json.loads(safefs.read_bytes(memory_dir, STATE))
        if isinstance(data, dict) and isinstance(data.get("done", {}), dict) and isinstance(data.get("sessions", []), list):
            return data
    except (OSError, ValueError):
        pass
    return {"done": {}, "last": 0.0, "sessions": []}


def note_session(memory_dir: Path, session_id: str | None) -> None:
    """Daily-log extraction calls this so `due()` can count sessions since the last pass."""
    data = _load(memory_dir)
    sessions = data.setdefault("sessions", [])
    if session_id and session_id not in sessions:
        sessions.append(session_id)
        safefs_write.write_text(memory_dir, STATE, json.dumps(data))


def due(memory_dir: Path, now: float | None = None) -> bool:
    data = _load(memory_dir)
    now = time.time() if now is None else now
    return now - float(data.get("last", 0.0)) >= MIN_HOURS * 3600 and len(data.get("sessions", [])) >= MIN_SESSIONS


def pending(memory_dir: Path) -> list[LogEntry]:
    done = _load(memory_dir).get("done", {})
    return [e for e in entries(memory_dir) if e.line_no > int(done.get(e.file, 0))]


def dream(memory_dir: Path, *, settings: Settings | None = None, engine: str | None = None,
          today: date | None = None, dry_run: bool = False, client=None) -> ExtractResult:
    """Fold the daily log's new entries into memory files: one commit of the git history for the pass."""
    with githistory.batch(memory_dir, "dream: daily-log entries folded into memory files",
                          run=githistory.new_run_id()) as commit:
        result = _dream(memory_dir, settings=settings, engine=engine, today=today, dry_run=dry_run, client=client)
        commit.engine = result.engine
    return result


def _dream(memory_dir: Path, *, settings: Settings | None, engine: str | None, today: date | None,
           dry_run: bool, client) -> ExtractResult:
    settings = settings or Settings.from_env()
    today = today or date.today()
    mode, source = write_mode.current_with_source(memory_dir)
    if mode in ("read-only", "manual"):  # dream's memories are its own judgement, never the user's request
        return ExtractResult("skipped", reason=f"write mode {mode} ({source}): dream saves nothing", dry_run=dry_run)
    todo = pending(memory_dir)
    if not todo:
        return ExtractResult("skipped", reason="no new daily-log entries since the last pass", dry_run=dry_run)
    chosen = choose_engine(engine or settings.engine, quiet=True)
    result = ExtractResult("nothing", engine=chosen, dry_run=dry_run)
    if chosen == "offline":
        drafts = [Draft(e.type, e.text, e.why, kind="remember") for e in todo if e.type != "forget"]
        forgets = [Forget(e.text) for e in todo if e.type == "forget"]
        outcome = offline.apply_drafts(MemoryStore(memory_dir), drafts, forgets, today=today, dry_run=dry_run,
                                       source="dream", asked=False)
        result.saved, result.deleted, result.errors = outcome.saved + outcome.updated, outcome.deleted, outcome.errors
        result.proposed, result.changes = outcome.proposed, outcome.changes
    else:
        from memdir.llm import describe_error
        from memdir.manifest import manifest, own_times
        from memdir.prompts import render
        from memdir.scan import scan
        from memdir.stages.extractor.agent import run_agent

        toolbox = Toolbox(memory_dir, dry_run=dry_run, source="dream")
        existing = scan(memory_dir).headers
        before = {h.rel_path for h in existing}
        first = render("dream_user.j2", manifest=manifest(existing, times=own_times(existing)), entries=todo)
        try:
            run = run_agent([], toolbox, settings, today=today, client=client, mode="dream", first_message=first)
        except Exception as exc:  # noqa: BLE001 - progress marks stay where they were
            result.status, result.reason = "failed", describe_error(exc)
            return result
        result.turns, result.usage = run.turns, run.usage
        result.saved, result.deleted, result.errors = toolbox.written, toolbox.deleted, toolbox.errors
        result.changes = report.from_toolbox(before, toolbox.written, toolbox.deleted, memory_dir / C.STATE_DIRNAME,
                                             memory_dir, dry_run, toolbox.snapshots)
        result.proposed = list(dict.fromkeys(toolbox.proposed))
        result.changes += [report.change("proposed", rel) for rel in result.proposed]
        if not dry_run:
            usage.add_usage(memory_dir, today, run.usage)
    if result.saved or result.deleted:
        result.status = "saved"
    elif result.proposed:
        result.status = "proposed"
    if not dry_run:
        data = _load(memory_dir)
        done = data.setdefault("done", {})
        for e in todo:
            done[e.file] = max(int(done.get(e.file, 0)), e.line_no)
        data["last"], data["sessions"] = time.time(), []
        safefs_write.write_text(memory_dir, STATE, json.dumps(data))
    return result
