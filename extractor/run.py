"""Public extraction functions: messages or a transcript in, memory files out.

The CLI, the Stop hook's worker, batch processing and evals all call these.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from memdir import constants as C, githistory, usage, write_mode
from memdir.config import Settings, choose_engine
from memdir.daylog import log_path, memory_mode
from memdir.errors import FolderBusy
from memdir.stages.extractor import offline, report, state
from memdir.stages.extractor.platform_paths import inside
from memdir.stages.extractor.result import ExtractResult
from memdir.stages.extractor.tools import WRITE_TOOLS, Toolbox
from memdir.stages.extractor.window import chunks, parts
from memdir.store import MemoryStore
from memdir.transcript import Message, read_transcript

MEMORY_WRITING_TOOLS = (*WRITE_TOOLS, "MultiEdit", "NotebookEdit")
NO_USER_WORDS = "no words of the user (prompt, answer or rejection reason) in these messages; not sent to the model"


def main_agent_wrote_memory(messages: list[Message], memory_dir: Path, cwd: str | None = None) -> bool:
    """Did the main agent itself write into the memory folder (then there is nothing to add)?

    Each `file_path` is read as the transcript's platform means it (extractor/platform_paths.py):
    a relative path against the message's (or the session's) `cwd`, a Windows path with `ntpath`."""
    for message in messages:
        for call in message.tool_uses():
            if call.get("name") not in MEMORY_WRITING_TOOLS:
                continue
            target = (call.get("input") or {}).get("file_path") or (call.get("input") or {}).get("notebook_path")
            if isinstance(target, str) and target and inside(target, message.cwd or cwd, memory_dir):
                return True
    return False


def _choose(engine: str, messages: list[Message], memory_dir: Path, settings: Settings, today: date) -> tuple[str, str]:
    """(engine to use, why). The cost guard and the daily budget live here."""
    chosen = choose_engine(engine, quiet=True)
    if chosen not in ("llm", "claude-code"):  # the model engines share the cost guard and budget
        return chosen, ""
    # The only reason not to call the model: the user said nothing here at all. Language, length
    # and keywords never decide; cost is bounded by the chunk token budget and the daily budget.
    if not any(m.user_text() for m in messages):
        return "skip", NO_USER_WORDS
    used = usage.tokens_used(usage.usage_for(memory_dir, today))
    if used >= settings.daily_token_budget:
        return "offline", f"daily token budget reached ({used:,} of {settings.daily_token_budget:,}); used the offline engine"
    return chosen, ""


def _write_mode_engine(memory_dir: Path, engine: str | None) -> tuple[str | None, str, str]:
    """(engine, write mode, why) as the write mode allows (memdir/write_mode.py): read-only runs nothing;
    manual runs only the offline rules, whose explicit "remember ..." / "forget ..." are what gets saved."""
    mode, source = write_mode.current_with_source(memory_dir)
    if mode == "read-only":
        return "skip", mode, f"the memory folder is read-only ({source}); nothing is extracted or saved"
    if mode == "manual":
        return "offline", mode, (f"write mode manual ({source}): only the user's explicit remember/forget requests "
                                 "are saved")
    return engine, mode, ""


def _begin(messages, memory_dir, settings, engine, today, dry_run, source: str = "extraction",
           session_id=None) -> ExtractResult:
    """The engine decision, the once-a-day budget notice, and the offline run when chosen."""
    engine, mode, mode_why = _write_mode_engine(memory_dir, engine)
    if engine == "skip":
        return ExtractResult("skipped", reason=mode_why, dry_run=dry_run)
    chosen, why = _choose(engine or settings.engine, messages, memory_dir, settings, today)
    why = "; ".join(filter(None, (mode_why, why)))
    result = ExtractResult("nothing", engine=chosen, reason=why, dry_run=dry_run)
    if chosen == "skip":
        result.status, result.engine = "skipped", None
        return result
    if why and chosen == "offline" and not usage.usage_for(memory_dir, today).get("budget_notice"):
        import sys

        print(f"memdir: {why}", file=sys.stderr)  # said once a day per folder
        usage.add_usage(memory_dir, today, {}, budget_notice=True)
    if chosen == "offline":
        # Outside write mode auto, a daily log is not written: what the user asked for (manual) or the
        # proposals (confirm) are typed memories, which review and recall know.
        if memory_mode(memory_dir) == "daily-log" and mode == "auto":
            outcome = offline.log_drafts(memory_dir, messages, today=today, dry_run=dry_run)
        else:
            outcome = offline.apply(MemoryStore(memory_dir), messages, today=today, dry_run=dry_run, source=source,
                                    session=session_id)
        result.saved, result.deleted, result.errors = outcome.saved + outcome.updated, outcome.deleted, outcome.errors
        result.proposed, result.changes = outcome.proposed, outcome.changes
        result.reason = "; ".join(outcome.notes) or result.reason
        _set_status(result)
    return result


def _set_status(result: ExtractResult) -> None:
    if result.saved or result.deleted:
        result.status = "saved"
    elif result.proposed:
        result.status = "proposed"


def _toolbox(memory_dir: Path, dry_run: bool, today: date, messages: list[Message], session_id: str | None,
             engine: str, source: str = "extraction") -> tuple[Toolbox, str]:
    """The agent's tools: the memory folder only (never the project: see extractor/tools.py), each
    write weighed against these messages' words (extractor/support.py) and its provenance recorded.
    Outside write mode auto the agent writes typed memories (proposals), never a daily log."""
    from memdir.stages.extractor.support import sources_of

    mode = memory_mode(memory_dir)
    if mode == "daily-log" and write_mode.current(memory_dir) != "auto":
        mode = "topics"
    daily = log_path(memory_dir, today) if mode == "daily-log" else None
    toolbox = Toolbox(memory_dir, dry_run=dry_run, daily_log=daily, source=source)
    toolbox.sources, toolbox.session_id, toolbox.writer = sources_of(messages), session_id, f"extractor:{engine}"
    toolbox.said_days = _said_days(messages)
    return toolbox, mode


def _said_days(messages: list[Message]) -> list[str]:
    """The days on which the user said something in these messages (what a decision is dated by)."""
    from memdir.stages.extractor.excerpt import message_date

    return sorted({d.isoformat() for m in messages if m.user_text() for d in [message_date(m)] if d})


def _existing(memory_dir: Path) -> set[str]:
    return {h.rel_path for h in MemoryStore(memory_dir).scan().headers} if memory_dir.is_dir() else set()


def _finish_llm(result: ExtractResult, toolbox: Toolbox, run, error: Exception | None, settings, memory_dir, today,
                before: frozenset[str] | set[str] = frozenset()):
    from memdir.llm import describe_error

    result.saved, result.deleted, result.errors = toolbox.written, toolbox.deleted, toolbox.errors
    result.changes = report.from_toolbox(before, toolbox.written, toolbox.deleted, memory_dir / C.STATE_DIRNAME,
                                         memory_dir, result.dry_run, toolbox.snapshots)
    result.proposed = list(dict.fromkeys(toolbox.proposed))
    result.changes += [report.change("proposed", rel) for rel in result.proposed]
    run = run if run is not None else getattr(error, "run", None)
    if run is not None:  # tokens spent count even when the run failed
        result.turns, result.usage, result.model = run.turns, run.usage, run.model
        result.cost_usd, result.refusals = round(run.cost_usd, 6), run.refusals
        if not result.dry_run and run.usage:
            usage.add_usage(memory_dir, today, run.usage)
    if error is None and toolbox.busy:  # a write found the folder locked: retry the whole window later
        error = FolderBusy(toolbox.busy)
    if error is not None:  # API failure after retries, or a truncated reply: the caller keeps its cursor
        result.status, result.reason = "failed", describe_error(error)
        _note_unreachable(error)
        return result
    if run.refusals:
        result.reason = "the model declined this window (stop_reason=refusal); nothing was saved"
    if run.hit_turn_cap:
        result.reason = f"stopped at the {settings.extract_max_turns}-turn cap"
    _set_status(result)
    return result


def _note_unreachable(error: Exception) -> None:
    from memdir.llm import describe_error, is_connection_failure, mark_unreachable

    try:
        if is_connection_failure(error):
            mark_unreachable(describe_error(error))
    except Exception:  # noqa: BLE001 - bookkeeping must never mask the run's own outcome
        pass


def extract_messages(
    messages: list[Message],
    memory_dir: Path,
    *,
    settings: Settings | None = None,
    engine: str | None = None,
    today: date | None = None,
    dry_run: bool = False,
    client=None,
    part=None,
    source: str = "extraction",
    session_id: str | None = None,
) -> ExtractResult:
    """Run one extraction over `messages` (`part`: which chunk of the window they are, extractor/window.py).
    API failures come back as status "failed", never raised. `source` names the run in proposals."""
    settings = settings or Settings.from_env()
    today = today or date.today()
    index_before = report.read_index(memory_dir)
    result = _begin(messages, memory_dir, settings, engine, today, dry_run, source, session_id)
    if result.engine not in ("llm", "claude-code"):
        result.changes += report.index_change(memory_dir, index_before, dry_run)
        return result
    from memdir.stages.extractor.agent import run_agent

    toolbox, mode = _toolbox(memory_dir, dry_run, today, messages, session_id, str(result.engine), source)
    before = _existing(memory_dir)
    run = error = None
    try:
        if result.engine == "claude-code":
            from memdir.stages.extractor.claude_code import run_claude_code_agent

            run = run_claude_code_agent(messages, toolbox, settings, today=today, mode=mode,
                                        transport=client, part=part)  # tests pass a scripted CLI as `client`
        else:
            run = run_agent(messages, toolbox, settings, today=today, client=client, mode=mode, part=part)
    except Exception as exc:  # noqa: BLE001
        error = exc
    result = _finish_llm(result, toolbox, run, error, settings, memory_dir, today, before)
    result.changes += report.index_change(memory_dir, index_before, dry_run)
    return result


async def aextract_messages(
    messages: list[Message],
    memory_dir: Path,
    *,
    client,
    settings: Settings | None = None,
    engine: str | None = None,
    today: date | None = None,
    dry_run: bool = False,
    session_id: str | None = None,
) -> ExtractResult:
    """`extract_messages` with an `AsyncAnthropic` client (batch processing)."""
    settings = settings or Settings.from_env()
    today = today or date.today()
    index_before = report.read_index(memory_dir)
    result = _begin(messages, memory_dir, settings, engine, today, dry_run, session_id=session_id)
    if result.engine != "llm":
        result.changes += report.index_change(memory_dir, index_before, dry_run)
        return result
    from memdir.stages.extractor.agent import arun_agent

    toolbox, mode = _toolbox(memory_dir, dry_run, today, messages, session_id, str(result.engine))
    before = _existing(memory_dir)
    run = error = None
    try:
        run = await arun_agent(messages, toolbox, settings, today=today, client=client, mode=mode)
    except Exception as exc:  # noqa: BLE001
        error = exc
    result = _finish_llm(result, toolbox, run, error, settings, memory_dir, today, before)
    result.changes += report.index_change(memory_dir, index_before, dry_run)
    return result


def _reading_notes(read, transcript: Path) -> list[str]:
    """What the bounded read left out, said in the run's reason so nothing is skipped silently."""
    notes = []
    if read.invalid_lines:
        notes.append(f"skipped {read.invalid_lines} unparsable transcript line(s)")
    if read.oversized_lines:
        notes.append(f"skipped {read.oversized_lines} transcript line(s) over {C.TRANSCRIPT_LINE_MAX_BYTES >> 20} MB")
    if read.unread_bytes:
        notes.append(
            f"read only the last {C.TRANSCRIPT_READ_MAX_BYTES >> 20} MB of the transcript; "
            f"{read.unread_bytes >> 20} MB before it were not read (`memdir batch {transcript}` reads them)"
        )
    return notes


def extract_transcript(
    transcript: Path,
    memory_dir: Path,
    *,
    session_id: str | None = None,
    last_n: int | None = None,
    settings: Settings | None = None,
    engine: str | None = None,
    today: date | None = None,
    dry_run: bool = False,
    client=None,
) -> ExtractResult:
    """Extract from a transcript file: every message after the session's cursor (the whole file
    without one), or only the last `last_n` when given, in chunks under the token budget.

    The cursor advances past each chunk that was processed and stops before the first one that
    failed; when the main agent already wrote memory in the window, it advances without a run.
    """
    with githistory.batch(memory_dir, f"extraction run from transcript {transcript.name}",
                          run=githistory.new_run_id()) as commit:
        result = _extract_transcript(transcript, memory_dir, session_id=session_id, last_n=last_n,
                                     settings=settings, engine=engine, today=today, dry_run=dry_run, client=client,
                                     run_id=commit.run)
        commit.engine = result.engine
    return result


def _nothing_read(transcript: Path, read, cursor: str | None) -> str:
    """Why a transcript gave no message: all read before, or none there (`memdir extract notes.txt`)."""
    if cursor is not None:
        return "no new messages since the last run"
    unread = read.invalid_lines + read.partial_last_line  # a last line that is not JSON is taken as half-written
    bad = f" ({unread} line(s) are not JSON: give a Claude Code session (.jsonl) or a JSON message list)" if unread else ""
    return f"no conversation messages in {transcript.name}{bad}"

def _extract_transcript(transcript: Path, memory_dir: Path, *, session_id: str | None, last_n: int | None,
                        settings: Settings | None, engine: str | None, today: date | None, dry_run: bool, client,
                        run_id: str | None) -> ExtractResult:
    settings = settings or Settings.from_env()
    cursor: dict = state.load_cursor(memory_dir, session_id) if session_id else {"uuid": None, "turns": 0}
    read = read_transcript(transcript, last_n=last_n, after_uuid=cursor["uuid"], max_bytes=C.TRANSCRIPT_READ_MAX_BYTES)
    messages = read.messages
    if not messages:
        return ExtractResult("skipped", reason=_nothing_read(transcript, read, cursor["uuid"]), cursor=cursor["uuid"])
    newest = next((m.uuid for m in reversed(messages) if m.uuid), None)
    if main_agent_wrote_memory(messages, memory_dir, read.cwd):
        if session_id and not dry_run:
            state.save_cursor(memory_dir, session_id, newest)
        return ExtractResult("skipped", reason="the main agent already wrote to the memory folder", cursor=newest)
    from memdir.native import other_writer_in_window

    other = other_writer_in_window(memory_dir, messages, Path(read.cwd) if read.cwd else None)
    if other:  # Claude Code's own extractor covered this window: saving again would duplicate it
        if session_id and not dry_run:
            state.save_cursor(memory_dir, session_id, newest)
        return ExtractResult("skipped", reason=other, cursor=newest)
    result = ExtractResult("skipped", dry_run=dry_run, cursor=cursor["uuid"])
    window = chunks(messages, settings.extract_chunk_tokens)
    for chunk, where in zip(window, parts(window), strict=True):
        part = extract_messages(
            chunk, memory_dir, settings=settings, engine=engine, today=today,
            dry_run=dry_run, client=client, part=where if where.of > 1 else None,
            source=f"extraction of session {session_id}" if session_id else f"extraction of {transcript.name}",
            session_id=session_id or read.session_id,
        )
        if where.of > 1 and part.reason:  # say which chunk a reason is about: others may have called the model
            part.reason = f"chunk {where.number} of {where.of}: {part.reason}"
        result.add_chunk(part)
        if part.status == "failed":
            break  # the cursor stays before this chunk, so the next run retries it
        result.chunks += 1
        result.prompts_seen += sum(1 for m in chunk if m.user_text())
        chunk_end = next((m.uuid for m in reversed(chunk) if m.uuid), None)
        if session_id and not dry_run and chunk_end:
            state.save_cursor(memory_dir, session_id, chunk_end)
            result.cursor = chunk_end
    for note in _reading_notes(read, transcript):
        result.reason = f"{result.reason}; {note}" if result.reason else note
    if not dry_run:
        state.log_run(memory_dir, {"session": session_id, "run": run_id,
                                   **{k: v for k, v in result.as_dict().items() if k != "dry_run"}})
    return result
