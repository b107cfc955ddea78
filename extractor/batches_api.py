"""`memdir batch --batch-api`: every agent turn of every transcript as one Message Batches request.

Batches cost half the price but answer in minutes, so the agents advance in lockstep: all turn-1
requests go out as one batch; when it ends, each agent's tool calls run here, and those that need
another turn go out together as the next batch, up to the turn cap. Each round handles the next
window of every transcript; cursors advance for the windows that finished.

Everything needed to continue is written to `<config home>/memdir/batch-api.json` before and after
each batch: a run interrupted while a batch is in flight resumes by polling that same batch, never
by submitting it again. (If it dies after applying a batch's results but before recording them,
the re-applied writes are refused by the agents' read-before-write rule, so nothing is duplicated.)
"""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path

from extractor import state
from extractor.agent import AgentRun, _take_turn, build_request
from extractor.batch import BatchReport, FolderRow, estimate_usd, plan, windows
from extractor.run import _choose
from extractor.tools import Toolbox
from memdir import usage
from memdir.config import Settings
from memdir.fsio import atomic_write_text
from memdir.paths import config_home
from memdir.pricing import cost_usd
from memdir.transcript import read_transcript

BATCH_DISCOUNT = 0.5
POLL_SECONDS = 30.0


def state_path() -> Path:
    return config_home() / "memdir" / "batch-api.json"


def _save(data: dict) -> None:
    atomic_write_text(state_path(), json.dumps(data))


def _load() -> dict | None:
    try:
        return json.loads(state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _new_round(paths, since, settings: Settings, today: date, failed: list[str]) -> dict:
    """The next window of every transcript that still has one, as jobs with their first request.

    Transcripts whose window failed earlier in this run wait for the next run (no retry loop)."""
    jobs = {}
    for n, job in enumerate(plan(paths, since)):
        if str(job.transcript) in failed:
            continue
        messages = read_transcript(job.transcript).messages
        cursor = state.load_cursor(job.memory_dir, job.session_id)["uuid"]
        pending = windows(messages, cursor, settings.extract_last_n)
        if not pending:
            continue
        window = pending[0]
        engine, why = _choose("llm", window, job.memory_dir, settings, today)
        if engine != "llm":
            # Skipped windows (nothing memorable) still advance; budget fallbacks wait for a normal run.
            if engine == "skip":
                state.save_cursor(job.memory_dir, job.session_id, window[-1].uuid)
            continue
        request = build_request(window, job.memory_dir, settings, today)
        jobs[f"job-{n}"] = {
            "transcript": str(job.transcript), "memory_dir": str(job.memory_dir), "session_id": job.session_id,
            "window_end": next((m.uuid for m in reversed(window) if m.uuid), cursor),
            "estimate": estimate_usd(window, settings) * BATCH_DISCOUNT,
            "conversation": request.pop("messages"), "request": request, "turns": 0, "usage": {},
            "snapshots": {}, "written": [], "deleted": [], "errors": [], "status": "running",
        }
    return {"round_jobs": jobs, "batch_id": None}


def _toolbox(job: dict) -> Toolbox:
    box = Toolbox(Path(job["memory_dir"]))
    box.snapshots, box.written, box.deleted = dict(job["snapshots"]), list(job["written"]), list(job["deleted"])
    box.errors = list(job["errors"])
    return box


def _submit(client, jobs: dict) -> str:
    requests = [
        {"custom_id": cid, "params": {**job["request"], "messages": job["conversation"]}}
        for cid, job in jobs.items() if job["status"] == "running"
    ]
    return client.messages.batches.create(requests=requests).id


def _wait(client, batch_id: str, poll: float) -> None:
    while client.messages.batches.retrieve(batch_id).processing_status != "ended":
        time.sleep(poll)


def _apply(client, batch_id: str, jobs: dict, settings: Settings) -> None:
    answered = set()
    for item in client.messages.batches.results(batch_id):
        job = jobs.get(item.custom_id)
        if job is None or job["status"] != "running":
            continue
        answered.add(item.custom_id)
        if item.result.type != "succeeded":
            detail = getattr(getattr(item.result, "error", None), "error", None)
            job["status"], job["reason"] = "failed", f"batch request {item.result.type}: {getattr(detail, 'message', '')}"
            continue
        run = AgentRun(turns=job["turns"], usage=job["usage"])
        box = _toolbox(job)
        more = _take_turn(run, job["conversation"], item.result.message, box)
        job.update(turns=run.turns, usage=run.usage, snapshots=box.snapshots, written=box.written,
                   deleted=box.deleted, errors=box.errors)
        if not more:
            job["status"] = "done"
        elif run.turns >= settings.extract_max_turns:
            job["status"], job["reason"] = "done", f"stopped at the {settings.extract_max_turns}-turn cap"
    for cid, job in jobs.items():
        if job["status"] == "running" and cid not in answered:
            job["status"], job["reason"] = "failed", "no result in the batch"


def _finish(jobs: dict, report: BatchReport, settings: Settings, today: date, budget: dict) -> None:
    for job in jobs.values():
        memory_dir = Path(job["memory_dir"])
        row = report.rows.setdefault(job["memory_dir"], FolderRow(job["memory_dir"]))
        row.windows += 1
        tokens = sum(v for v in job["usage"].values() if isinstance(v, int))
        spent = cost_usd(settings.extract_model, job["usage"]) * BATCH_DISCOUNT
        row.tokens, row.cost = row.tokens + tokens, row.cost + spent
        budget["spent"] += spent
        if job["usage"]:
            usage.add_usage(memory_dir, today, job["usage"])
        if job["status"] == "failed":
            row.failed += 1
            report.errors.append(f"{job['transcript']}: {job.get('reason')}")
            continue
        row.saved += len(job["written"])
        state.save_cursor(memory_dir, job["session_id"], job["window_end"])


def run_batch_api(paths: list[Path] | None = None, *, settings: Settings, since: date | None = None,
                  max_cost: float | None = None, client=None, poll: float = POLL_SECONDS,
                  today: date | None = None) -> BatchReport:
    from memdir.llm import make_client

    client = client or make_client()
    today = today or date.today()
    report = BatchReport()
    data = _load() or {}
    budget = {"spent": float(data.get("spent", 0.0))}
    while True:
        if not data.get("round_jobs"):
            failed = list(data.get("failed", []))
            data = {**_new_round(paths, since, settings, today, failed), "spent": budget["spent"], "failed": failed}
            if not data["round_jobs"]:
                break
            planned = sum(j["estimate"] for j in data["round_jobs"].values())
            if max_cost is not None and budget["spent"] + planned > max_cost:
                report.stopped = (f"--max-cost {max_cost:.2f} USD: the next round is estimated at {planned:.4f} "
                                  f"on top of {budget['spent']:.4f} spent; rerun with a higher limit to continue")
                break
        jobs = data["round_jobs"]
        while any(job["status"] == "running" for job in jobs.values()):
            if not data.get("batch_id"):
                data["batch_id"] = _submit(client, jobs)
                _save(data)  # from here on a restart polls this batch instead of submitting again
            _wait(client, data["batch_id"], poll)
            _apply(client, data["batch_id"], jobs, settings)
            data["batch_id"] = None
            _save(data)
        _finish(jobs, report, settings, today, budget)
        failed = list(data.get("failed", [])) + [j["transcript"] for j in jobs.values() if j["status"] == "failed"]
        data = {"round_jobs": {}, "batch_id": None, "spent": budget["spent"], "failed": failed}
        _save(data)
    state_path().unlink(missing_ok=True)
    return report
