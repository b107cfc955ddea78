"""`memdir batch --batch-api`: every agent turn of every transcript as one Message Batches request.

Batches cost half the price but answer in minutes, so the agents advance in lockstep: all turn-1
requests go out together; when they end, each agent's tool calls run here, and those that need
another turn go out together next, up to the turn cap. Each round handles the next window of every
transcript; cursors advance for the windows that finished. A round's requests are split into as
many batches as the documented limits need (C.BATCH_MAX_REQUESTS requests / C.BATCH_MAX_BYTES).

Prompts are cached for 1 hour (the docs' advice for batches: turns are minutes apart, past the
5-minute TTL), and daily-log mode is honoured as on the live path. Every API call, status polls included, goes through the one retry layer.

Everything needed to continue is written to `<config home>/memdir/batch-api.json` at each step:
after planning a round, after each batch is submitted, after each batch's results are applied, and
after the round's cursors are saved. A run interrupted at any of those points resumes from the
file: a submitted batch is polled again, never submitted twice. (A batch whose results were applied
but not yet recorded is applied again; the agents' read-before-write rule refuses the repeated
writes, so nothing is duplicated.)
"""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path

from memdir import constants as C, runlog, usage
from memdir.config import Settings
from memdir.daylog import log_path, memory_mode
from memdir.fsio import atomic_write_text, read_text
from memdir.llm import call_with_retries, describe_error
from memdir.paths import config_home
from memdir.pricing import BATCH_DISCOUNT
from memdir.secrets import redact
from memdir.stages.extractor import report as changes_report, state, support
from memdir.stages.extractor.agent import AgentRun, StopReasonError, _take_turn, _truncated, build_request, may_continue
from memdir.stages.extractor.batch import BatchReport, FolderRow, count_changes, estimate_usd, plan
from memdir.stages.extractor.run import _choose, _existing
from memdir.stages.extractor.tools import Toolbox
from memdir.transcript_stream import transcript_windows

POLL_SECONDS = 30.0
STATE_VERSION = 2


def state_path() -> Path:
    return config_home() / "memdir" / "batch-api.json"


def _save(data: dict) -> None:
    """The round's state for a restart, redacted: it holds transcript windows (a restart then sends the
    redacted conversation; a redacted memory snapshot only makes the agent read that file again)."""
    atomic_write_text(state_path(), redact(json.dumps(data)))


def _load() -> dict | None:
    try:
        data = json.loads(read_text(state_path()))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == STATE_VERSION else None


def _new_round(paths, since, settings: Settings, today: date, failed: list[str], report: BatchReport) -> dict:
    """The next window of every transcript that still has one, as jobs with their first request.

    Transcripts whose window failed earlier in this run wait for the next run (no retry loop)."""
    jobs = {}
    for n, job in enumerate(plan(paths, since, report.errors)):
        if str(job.transcript) in failed:
            continue
        cursor = state.load_cursor(job.memory_dir, job.session_id)["uuid"]
        pending = transcript_windows(job.transcript, cursor, settings.extract_last_n)
        window = next(pending, None)  # only this round's window is read into memory
        pending.close()
        if window is None:
            continue
        engine, why = _choose("llm", window, job.memory_dir, settings, today)
        if engine != "llm":
            # Skipped windows (nothing memorable) still advance; budget fallbacks wait for a normal run.
            if engine == "skip":
                row = report.rows.setdefault(str(job.memory_dir), FolderRow(str(job.memory_dir)))
                row.windows, row.skipped = row.windows + 1, row.skipped + 1
                state.save_cursor(job.memory_dir, job.session_id, window[-1].uuid)
            continue
        mode = memory_mode(job.memory_dir)
        daily = log_path(job.memory_dir, today) if mode == "daily-log" else None
        request = build_request(window, job.memory_dir, settings, today, mode=mode, daily_log=daily, cache_ttl="1h")
        jobs[f"job-{n}"] = {
            "transcript": str(job.transcript), "memory_dir": str(job.memory_dir), "session_id": job.session_id,
            "daily_log": str(daily) if daily else None,
            "window_end": next((m.uuid for m in reversed(window) if m.uuid), cursor),
            "estimate": estimate_usd(window, settings) * BATCH_DISCOUNT,
            "conversation": request.pop("messages"), "request": request, "turns": 0, "usage": {}, "cost": 0.0,
            "refusals": 0, "max_tokens_retries": 0, "snapshots": {}, "written": [], "deleted": [], "errors": [],
            "status": "running", "sources": [support.to_json(s) for s in support.sources_of(window)],
        }
    return {"round_jobs": jobs, "batches": []}


def _toolbox(job: dict) -> Toolbox:
    daily = Path(job["daily_log"]) if job.get("daily_log") else None
    box = Toolbox(Path(job["memory_dir"]), daily_log=daily)
    box.snapshots, box.written, box.deleted = dict(job["snapshots"]), list(job["written"]), list(job["deleted"])
    box.errors = list(job["errors"])
    # Every write is weighed against the window's words, as in a live run (extractor/support.py). A job
    # saved by a memdir from before this check has none: it is finished unweighed rather than lost.
    if "sources" in job:
        box.sources = [support.from_json(item) for item in job["sources"]]
    box.session_id, box.writer = job.get("session_id"), "extractor:batch"
    return box


def split_requests(requests: list[dict], *, max_requests: int | None = None, max_bytes: int | None = None) -> list[list[dict]]:
    """Consecutive chunks, each within both batch limits (as serialized in the create body)."""
    max_requests = C.BATCH_MAX_REQUESTS if max_requests is None else max_requests
    max_bytes = C.BATCH_MAX_BYTES if max_bytes is None else max_bytes
    envelope = len(b'{"requests": []}')
    chunks: list[list[dict]] = []
    current: list[dict] = []
    size = envelope
    for request in requests:
        cost = len(json.dumps(request).encode()) + 2  # the item plus its ", " separator
        if envelope + cost > max_bytes:
            raise ValueError(f"one request ({request['custom_id']}) is larger than a whole batch may be "
                             f"({cost:,} bytes; limit {max_bytes:,})")
        if current and (len(current) >= max_requests or size + cost > max_bytes):
            chunks.append(current)
            current, size = [], envelope
        current.append(request)
        size += cost
    if current:
        chunks.append(current)
    return chunks


def _plan_batches(jobs: dict) -> list[dict]:
    requests = [{"custom_id": cid, "params": {**job["request"], "messages": job["conversation"]}}
                for cid, job in jobs.items() if job["status"] == "running"]
    return [{"id": None, "custom_ids": [r["custom_id"] for r in chunk], "applied": False}
            for chunk in split_requests(requests)]


def _submit(client, jobs: dict, custom_ids: list[str], settings: Settings) -> str:
    requests = [{"custom_id": cid, "params": {**jobs[cid]["request"], "messages": jobs[cid]["conversation"]}}
                for cid in custom_ids]
    return call_with_retries(lambda: client.messages.batches.create(requests=requests).id,
                             max_attempts=settings.max_attempts)


def _wait(client, batch_id: str, poll: float, settings: Settings) -> None:
    """Poll until the batch ends; each status check is retried on its own (a 529 is not the end)."""
    while call_with_retries(lambda: client.messages.batches.retrieve(batch_id).processing_status,
                            max_attempts=settings.max_attempts) != "ended":
        time.sleep(poll)


def _results(client, batch_id: str, settings: Settings) -> list:
    return call_with_retries(lambda: list(client.messages.batches.results(batch_id)), max_attempts=settings.max_attempts)


def _apply_one(job: dict, message, settings: Settings) -> None:
    model: str = job["request"]["model"]
    run = AgentRun(turns=job["turns"], usage=job["usage"], cost_usd=job["cost"], refusals=job["refusals"],
                   max_tokens_retries=job["max_tokens_retries"], model=model)
    box = _toolbox(job)
    if "before" not in job:  # the folder as this job first found it: what it writes there later is an update
        job["before"] = sorted(_existing(Path(job["memory_dir"])))
    try:
        if _truncated(run, job["request"], message, model):
            more = True  # asked again next batch with the larger budget job["request"] now carries
        else:
            more = _take_turn(run, job["conversation"], message, box, model)
    except StopReasonError as exc:
        job["status"], job["reason"], more = "failed", str(exc), False
    job.update(turns=run.turns, usage=run.usage, cost=run.cost_usd, refusals=run.refusals,
               max_tokens_retries=run.max_tokens_retries, snapshots=box.snapshots, written=box.written,
               deleted=box.deleted, errors=box.errors)
    if job["status"] == "failed":
        return
    if not more:
        job["status"] = "done"
    elif not may_continue(run, settings):
        job["status"], job["reason"] = "done", f"stopped at the {settings.extract_max_turns}-turn cap"


def _apply(client, batch: dict, jobs: dict, settings: Settings) -> None:
    answered = set()
    for item in _results(client, batch["id"], settings):
        job = jobs.get(item.custom_id)
        if job is None or job["status"] != "running" or item.custom_id not in batch["custom_ids"]:
            continue
        answered.add(item.custom_id)
        if item.result.type != "succeeded":
            detail = getattr(getattr(item.result, "error", None), "error", None)
            job["status"], job["reason"] = "failed", f"batch request {item.result.type}: {getattr(detail, 'message', '')}"
            continue
        _apply_one(job, item.result.message, settings)
    for cid in batch["custom_ids"]:
        job = jobs[cid]
        if job["status"] == "running" and cid not in answered:
            job["status"], job["reason"] = "failed", "no result in the batch"


def _finish(jobs: dict, report: BatchReport, settings: Settings, today: date, budget: dict, counted: list[str]) -> None:
    for job in jobs.values():
        memory_dir = Path(job["memory_dir"])
        row = report.rows.setdefault(job["memory_dir"], FolderRow(job["memory_dir"]))
        if job["transcript"] not in counted:
            counted.append(job["transcript"])
            row.transcripts += 1
        row.windows += 1
        tokens = sum(v for v in job["usage"].values() if isinstance(v, int))
        spent = job["cost"] * BATCH_DISCOUNT
        row.tokens, row.cost = row.tokens + tokens, row.cost + spent
        budget["spent"] += spent
        if job["usage"]:
            usage.add_usage(memory_dir, today, job["usage"])
        changes = changes_report.from_toolbox(set(job.get("before", ())), job["written"], job["deleted"],
                                              memory_dir / C.STATE_DIRNAME, memory_dir, False)
        try:
            runlog.append_run(memory_dir, {
                "kind": "batch-api", "session": job["session_id"], "engine": "llm", "model": job["request"]["model"],
                "status": "failed" if job["status"] == "failed" else ("saved" if job["written"] else "nothing"),
                "saved": job["written"], "changes": changes, "usage": job["usage"], "turns": job["turns"],
                "refusals": job["refusals"], "cost_usd": round(spent, 6), "reason": job.get("reason", "")})
        except OSError as exc:  # an unsafe .memdir/ is doctor's to report; the run itself stands
            report.errors.append(f"{memory_dir}: run not logged ({exc})")
        if job["status"] == "failed":
            row.failed += 1
            report.errors.append(f"{job['transcript']}: {job.get('reason')}")
            continue
        created, updated = count_changes(changes)
        row.saved, row.updated = row.saved + created, row.updated + updated
        state.save_cursor(memory_dir, job["session_id"], job["window_end"])


def _run_round(client, data: dict, settings: Settings, poll: float) -> None:
    """Submit, poll and apply until no job of the round needs another turn, saving at each step."""
    jobs = data["round_jobs"]
    while any(job["status"] == "running" for job in jobs.values()):
        if not data["batches"]:
            data["batches"] = _plan_batches(jobs)
            _save(data)
        for batch in data["batches"]:
            if batch["id"] is None:
                batch["id"] = _submit(client, jobs, batch["custom_ids"], settings)
                _save(data)  # from here on a restart polls this batch instead of submitting it again
        for batch in data["batches"]:
            if not batch["applied"]:
                _wait(client, batch["id"], poll, settings)
                _apply(client, batch, jobs, settings)
                batch["applied"] = True
                _save(data)
        data["batches"] = []
        _save(data)


def run_batch_api(paths: list[Path] | None = None, *, settings: Settings, since: date | None = None,
                  max_cost: float | None = None, client=None, poll: float = POLL_SECONDS,
                  today: date | None = None) -> BatchReport:
    from memdir.llm import make_client

    client = client or make_client()
    today = today or date.today()
    report = BatchReport()
    data = _load() or {}
    budget = {"spent": float(data.get("spent", 0.0))}
    counted: list[str] = []
    while True:
        if not data.get("round_jobs"):
            failed = list(data.get("failed", []))
            data = {"version": STATE_VERSION, **_new_round(paths, since, settings, today, failed, report),
                    "spent": budget["spent"], "failed": failed}
            if not data["round_jobs"]:
                break
            planned = sum(j["estimate"] for j in data["round_jobs"].values())
            if max_cost is not None and budget["spent"] + planned > max_cost:
                report.stopped = (f"--max-cost {max_cost:.2f} USD: the next round is estimated at {planned:.4f} "
                                  f"on top of {budget['spent']:.4f} spent; rerun with a higher limit to continue")
                break
            _save(data)  # the planned round: a restart continues it rather than planning again
        try:
            _run_round(client, data, settings, poll)
        except Exception as exc:
            report.errors.append(f"batch API: {describe_error(exc)}; rerun to resume (state in {state_path()})")
            return report
        _finish(data["round_jobs"], report, settings, today, budget, counted)
        failed = list(data.get("failed", [])) + [j["transcript"] for j in data["round_jobs"].values()
                                                 if j["status"] == "failed"]
        data = {"version": STATE_VERSION, "round_jobs": {}, "batches": [], "spent": budget["spent"], "failed": failed}
        _save(data)
    state_path().unlink(missing_ok=True)
    return report
