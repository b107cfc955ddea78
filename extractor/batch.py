"""`memdir batch`: back-fill memories from folders of existing transcripts.

Each transcript is walked from its session's cursor in windows of N messages, each window one
extraction, the cursor advancing after each: an interrupted batch resumes where it stopped and
never repeats a finished window. Transcripts run concurrently on an `AsyncAnthropic` client
(bounded), windows of one transcript in order. `--max-cost` reserves an estimate before each
window and stops cleanly rather than exceed the budget.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import date, datetime
from pathlib import Path

from memdir import constants as C
from memdir.config import Settings
from memdir.errors import MemdirError, os_error_line
from memdir.paths import config_home, resolve_memory_dir
from memdir.pricing import cost_usd, price
from memdir.record import Record, field
from memdir.stages.extractor import state
from memdir.stages.extractor.result import ExtractResult
from memdir.stages.extractor.run import aextract_messages, extract_messages
from memdir.transcript import Message, read_transcript
from memdir.transcript_stream import transcript_windows

PROMPT_OVERHEAD_TOKENS = 3000  # system prompt, tools and manifest, roughly
OUTPUT_TOKENS_GUESS = 800


class Job(Record):
    transcript: Path
    memory_dir: Path
    session_id: str


class FolderRow(Record):
    memory_dir: str
    transcripts: int = 0
    windows: int = 0
    saved: int = 0
    updated: int = 0
    proposed: int = 0  # write mode confirm: changes left for `memdir review`
    skipped: int = 0
    failed: int = 0
    tokens: int = 0
    cost: float = 0.0


class BatchReport(Record):
    rows: dict[str, FolderRow] = field(default_factory=dict)  # by memory folder
    stopped: str | None = None  # why the batch stopped early
    errors: list[str] = field(default_factory=list)


def discover(paths: list[Path] | None = None, since: date | None = None) -> list[Path]:
    """Session transcripts (`*.jsonl`), skipping subagent files; newest last."""
    roots = paths or [config_home() / "projects"]
    found: list[Path] = []
    for root in roots:
        candidates = [root] if root.is_file() else sorted(root.rglob("*.jsonl")) if root.is_dir() else []
        for path in candidates:
            if "subagents" in path.parts or path.name.startswith("agent-"):
                continue
            if path.parent.name.endswith("-memdir-claude-code"):  # memdir's own claude-code sessions
                continue
            inner = path.relative_to(root).parts[:-1] if path != root else ()
            if any(part.startswith(".") for part in inner) or C.STATE_DIRNAME in path.parts:
                continue  # memdir's own state (.memdir/runs.jsonl) and hidden folders are not transcripts
            if path.is_symlink() or not path.is_file():
                continue  # FIFOs, devices and symlinks are never read as transcripts
            if since and datetime.fromtimestamp(path.stat().st_mtime).date() < since:
                continue
            found.append(path)
    return sorted(set(found), key=lambda p: p.stat().st_mtime)


def route(transcript: Path, cwd: str | None) -> Path:
    """The memory folder a transcript belongs to: its cwd's canonical git root, as the hooks resolve it.

    When that folder no longer exists, the transcript's own project folder (Claude Code names it
    after the sanitized cwd) holds the memory, as Claude Code would have put it.
    """
    if cwd and Path(cwd).is_dir():
        return resolve_memory_dir(Path(cwd)).path
    return transcript.parent / "memory"


def windows(messages: list[Message], cursor: str | None, size: int) -> list[list[Message]]:
    ids = [m.uuid for m in messages]
    start = ids.index(cursor) + 1 if cursor in ids else 0
    rest = messages[start:]
    return [rest[i : i + size] for i in range(0, len(rest), size)]


def estimate_usd(window: list[Message], settings: Settings) -> float:
    """A deliberately high guess: the prompt written to cache once, read once more, plus output."""
    chars = sum(len(str(b.get("text") or b.get("content") or b.get("input") or "")) for m in window for b in m.content)
    prompt = PROMPT_OVERHEAD_TOKENS + chars // 4
    usage = {"cache_creation_input_tokens": prompt, "cache_read_input_tokens": prompt, "input_tokens": 600,
             "output_tokens": OUTPUT_TOKENS_GUESS}
    return cost_usd(settings.extract_model, usage)


class _Budget:
    def __init__(self, limit: float | None) -> None:
        self.limit, self.spent, self.reserved, self.stopped = limit, 0.0, 0.0, False

    def reserve(self, amount: float) -> bool:
        if self.limit is not None and self.spent + self.reserved + amount > self.limit:
            self.stopped = True
            return False
        self.reserved += amount
        return True

    def settle(self, reserved: float, actual: float) -> None:
        self.reserved -= reserved
        self.spent += actual


class _Progress:
    def __init__(self, total: int, stream=None) -> None:
        self.total, self.done, self.windows, self.saved, self.tokens = total, 0, 0, 0, 0
        self.stream = stream or sys.stderr
        self._logged = (0, "")  # not a terminal: (done, line) last written

    def show(self, final: bool = False) -> None:
        line = (f"[batch] transcripts {self.done}/{self.total} windows {self.windows} saved {self.saved} "
                f"tokens {self.tokens:,}")
        if self.stream.isatty():
            self.stream.write("\r" + line + ("\n" if final else ""))
        elif (final or self.done != self._logged[0]) and line != self._logged[1]:
            # a log gets one line per transcript finished, not one per window (248 for 44 real transcripts)
            self.stream.write(line + "\n")
            self._logged = (self.done, line)
        self.stream.flush()


async def _run_job(job: Job, *, settings: Settings, engine: str, size: int, dry_run: bool, client, budget: _Budget,
                   report: BatchReport, progress: _Progress, today: date | None) -> None:
    row = report.rows.setdefault(str(job.memory_dir), FolderRow(str(job.memory_dir)))
    row.transcripts += 1
    cursor = state.load_cursor(job.memory_dir, job.session_id)["uuid"]
    for window in transcript_windows(job.transcript, cursor, size):  # read as it goes: memory bounded by a window
        estimate = estimate_usd(window, settings) if engine == "llm" else 0.0
        if not budget.reserve(estimate):
            report.stopped = f"--max-cost {budget.limit:.2f} USD reached (spent {budget.spent:.4f}); rerun to continue"
            return
        if engine == "llm":
            result: ExtractResult = await aextract_messages(window, job.memory_dir, client=client, settings=settings,
                                                            engine=engine, today=today, dry_run=dry_run)
        else:
            result = extract_messages(window, job.memory_dir, settings=settings, engine=engine, today=today,
                                      dry_run=dry_run)
        actual = cost_usd(settings.extract_model, result.usage) if result.usage else 0.0
        budget.settle(estimate, actual)
        row.windows += 1
        progress.windows += 1
        tokens = sum(v for v in result.usage.values() if isinstance(v, int))
        row.tokens += tokens
        progress.tokens += tokens
        row.cost += actual
        if result.status == "failed":
            row.failed += 1
            report.errors.append(f"{job.transcript}: {result.reason}")
            return  # the cursor stays before this window: a rerun retries it
        created, updated = count_changes(result.changes)
        row.saved += created
        row.updated += updated
        row.proposed += len(result.proposed)
        progress.saved += created
        row.skipped += result.status == "skipped"
        if not dry_run:
            state.save_cursor(job.memory_dir, job.session_id, next((m.uuid for m in reversed(window) if m.uuid), cursor))
        progress.show()


def count_changes(changes: list[dict]) -> tuple[int, int]:
    """(new memories, updated memories): "saved" counts new memory files, "updated" changed ones (each
    with its previous version kept). MEMORY.md's own change is not a memory."""
    created = sum(1 for c in changes if c["action"] == "created" and c["file"] != C.INDEX_NAME)
    updated = sum(1 for c in changes if c["action"] == "updated" and c["file"] != C.INDEX_NAME)
    return created, updated


async def _run_all(jobs: list[Job], *, settings: Settings, engine: str, size: int, dry_run: bool, client,
                   max_cost: float | None, concurrency: int, today: date | None) -> BatchReport:
    report = BatchReport()
    budget = _Budget(max_cost)
    progress = _Progress(len(jobs))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(job: Job) -> None:
        async with gate:
            if budget.stopped:
                return
            try:
                await _run_job(job, settings=settings, engine=engine, size=size, dry_run=dry_run, client=client,
                               budget=budget, report=report, progress=progress, today=today)
            except OSError as exc:  # disk full, read-only: the machine's state, in words with a fix
                report.errors.append(f"{job.transcript}: {os_error_line(exc)}")
            except Exception as exc:  # noqa: BLE001 - one bad transcript must not end the batch
                report.errors.append(f"{job.transcript}: {type(exc).__name__}: {exc}")
            progress.done += 1
            progress.show()

    await asyncio.gather(*(one(job) for job in jobs))
    progress.show(final=True)
    return report


def plan(paths: list[Path] | None, since: date | None, errors: list[str] | None = None) -> list[Job]:
    """A job per transcript. One that cannot be read (a JSON list cut short, a file gone since it was listed) is
    named in `errors` and skipped: it stopped the whole back-fill, every other transcript unread, at every run."""
    jobs = []
    for transcript in discover(paths, since):
        try:
            head = read_transcript(transcript, last_n=1)
        except (MemdirError, OSError) as exc:
            if errors is None:
                raise
            line = str(exc) if isinstance(exc, MemdirError) else f"{transcript}: {os_error_line(exc)}"
            if line not in errors:
                errors.append(line)
            continue
        jobs.append(Job(transcript, route(transcript, head.cwd), head.session_id or transcript.stem))
    return jobs


def run_batch(paths: list[Path] | None = None, *, settings: Settings, engine: str, since: date | None = None,
              dry_run: bool = False, max_cost: float | None = None, concurrency: int = 4, client=None,
              today: date | None = None) -> BatchReport:
    unread: list[str] = []
    jobs = plan(paths, since, unread)
    size = settings.extract_last_n
    if engine == "llm" and client is None:
        from memdir.llm import make_client

        client = make_client(async_client=True)
    report = asyncio.run(_run_all(jobs, settings=settings, engine=engine, size=size, dry_run=dry_run, client=client,
                                  max_cost=max_cost, concurrency=concurrency, today=today))
    report.errors[:0] = unread
    return report


def summary_table(report: BatchReport, settings: Settings, dry_run: bool = False) -> str:
    lines = [f"{'memory folder':<60} {'transcripts':>11} {'windows':>7} {'saved':>5} {'updated':>7} {'skipped':>7} "
             f"{'failed':>6} {'tokens':>10} {'est. USD':>9}"]
    for row in report.rows.values():
        folder = row.memory_dir if len(row.memory_dir) <= 60 else "…" + row.memory_dir[-59:]
        lines.append(f"{folder:<60} {row.transcripts:>11} {row.windows:>7} {row.saved:>5} {row.updated:>7} {row.skipped:>7} "
                     f"{row.failed:>6} {row.tokens:>10,} {row.cost:>9.4f}")
    inp, out = price(settings.extract_model)
    lines.append(f"(cost estimated at {inp}/{out} USD per million input/output tokens; see memdir/pricing.py)")
    lines += [f"{row.proposed} change(s) proposed for review in {row.memory_dir} (write mode confirm): "
              f"`memdir --dir {row.memory_dir} review`" for row in report.rows.values() if row.proposed]
    if dry_run:  # the columns count what a real run would write: say so, or "saved 3" reads as done
        lines.append("dry run: nothing was written; saved and updated are what a run without --dry-run would write")
    if report.stopped:
        lines.append(f"stopped: {report.stopped}")
    lines += [f"error: {e}" for e in report.errors]
    return "\n".join(lines)
