"""CLI commands for the pipeline stages: extract, batch, dream, recall (a thin shell, like memdir/cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.entry.cli_support import memory_dir_of, print_json
from memdir.errors import MemdirError

if TYPE_CHECKING:
    import argparse


def cmd_recall(args: argparse.Namespace) -> int:
    from memdir.config import Settings, choose_engine
    from memdir.stages.recall.api import recall

    settings = Settings.from_env().with_overrides(
        engine=args.engine, recall_model=args.model, recall_timeout=args.timeout
    )
    choose_engine(settings.engine)  # says once, plainly, when it falls back to offline
    tools = [t.strip() for t in (args.tools or "").split(",") if t.strip()]
    result = recall(
        memory_dir_of(args).path, args.query, settings=settings, tools=tools, session_id=args.session,
        record=bool(args.session),
    )
    if args.json:
        print_json(result.as_dict())
        return 0
    for line in result.debug:
        print(f"memdir: {line}", file=sys.stderr)
    if not result.selected:
        print("no memory clearly applies", file=sys.stderr)
        return 0
    print(result.context)
    return 0


def _ran_elsewhere(transcript: Path, target: Path, args: argparse.Namespace) -> str:
    """A note when the session ran in another project on this machine than the folder extraction wrote to
    (no --dir, no --agent): `memdir batch` files a session under its own project, `extract` under this one."""
    if getattr(args, "dir", None) is not None or getattr(args, "agent", None):
        return ""
    from memdir.paths import resolve_memory_dir
    from memdir.transcript import read_transcript

    try:
        cwd = read_transcript(transcript, last_n=1, max_bytes=C.TRANSCRIPT_READ_MAX_BYTES).cwd
        home = resolve_memory_dir(Path(cwd)).path if cwd and Path(cwd).is_dir() else None
    except (MemdirError, OSError):
        return ""
    if home is None or home.resolve() == target.resolve():
        return ""
    return (f"note: this session ran in {cwd}, whose memory folder is {home}; its memories went to {target}, this "
            f"project's (`memdir extract --dir {home} ...` or `memdir batch {transcript}` files them there)")

def cmd_extract(args: argparse.Namespace) -> int:
    from memdir.config import Settings, choose_engine
    from memdir.stages.extractor.schedule import request_extraction

    settings = Settings.from_env().with_overrides(engine=args.engine, extract_model=args.model)
    choose_engine(settings.engine)  # says once, plainly, when it falls back to offline
    transcript = Path(args.transcript)
    if not transcript.exists():
        raise MemdirError(f"{transcript}: transcript not found")
    if not transcript.is_file():
        raise MemdirError(f"{transcript}: not a regular file; give a transcript file (.jsonl or .json)")
    if args.last is not None and args.last < 1:
        raise MemdirError("--last must be at least 1")
    request = {"transcript": str(transcript), "session_id": args.session, "last_n": args.last,
               "engine": settings.engine, "dry_run": args.dry_run}
    target = memory_dir_of(args).path
    results = request_extraction(target, request, settings=settings)
    elsewhere = _ran_elsewhere(transcript, target, args)
    if elsewhere:
        print(elsewhere, file=sys.stderr)
    if args.json:
        print_json([r.as_dict() for r in results])
        return 0 if all(r.status != "failed" for r in results) else 1
    for r in results:
        engine = f"{r.engine} engine" if r.engine else "no engine run"
        read = f"{r.prompts_seen} prompt(s) read in {r.chunks} chunk(s)" if r.chunks else ""
        head = ", ".join(filter(None, (engine, read)))
        if r.changes:
            print(f"{'dry run, ' if r.dry_run else ''}{head}{': ' + r.reason if r.reason else ''}")
        else:
            print(f"{r.status}: {'nothing would change' if r.dry_run else 'no memory changed'} ({head})"
                  f"{': ' + r.reason if r.reason else ''}")
        for line in r.report_lines():
            print(f"  {line}")
        for error in r.errors:
            print(f"  refused: {error}")
        if r.usage:
            u = r.usage
            print(
                f"  tokens: {u.get('input_tokens', 0)} in, {u.get('output_tokens', 0)} out, "
                f"{u.get('cache_read_input_tokens', 0)} cache read, {u.get('cache_creation_input_tokens', 0)} cache write"
                f" over {r.turns} turn(s)"
            )
    return 0 if all(r.status != "failed" for r in results) else 1


def cmd_batch(args: argparse.Namespace) -> int:
    from datetime import date

    from memdir.config import Settings, choose_engine
    from memdir.stages.extractor.batch import run_batch, summary_table

    if args.max_cost is not None and not args.max_cost >= 0:  # not ... >= : NaN too
        raise MemdirError(f"--max-cost must be 0 or more (USD), not {args.max_cost}")
    settings = Settings.from_env().with_overrides(engine=args.engine, extract_model=args.model,
                                                  extract_last_n=args.last)
    engine = choose_engine(settings.engine)
    try:
        since = date.fromisoformat(args.since) if args.since else None
    except ValueError:
        raise MemdirError(f"--since {args.since!r} is not a date; use YYYY-MM-DD") from None
    paths = [Path(p) for p in args.paths] or None
    for path in paths or []:
        if path.is_symlink() and not path.is_dir():  # skipped silently, it ran nothing and said "0 transcripts"
            raise MemdirError(f"{path}: a symlink; memdir batch never reads a transcript through one, so pass "
                              "the file it points to")
        if not path.exists():
            raise MemdirError(f"{path}: no such file or folder")
    if args.batch_api:
        from memdir.stages.extractor.batches_api import run_batch_api

        if engine != "llm" or args.dry_run:
            raise MemdirError("--batch-api needs the llm engine (ANTHROPIC_API_KEY) and cannot be a --dry-run")
        report = run_batch_api(paths, settings=settings, since=since, max_cost=args.max_cost)
    else:
        report = run_batch(paths, settings=settings, engine=engine, since=since, dry_run=args.dry_run,
                           max_cost=args.max_cost, concurrency=args.concurrency)
    print(summary_table(report, settings, dry_run=args.dry_run))
    return 1 if report.errors else 0


def cmd_dream(args: argparse.Namespace) -> int:
    from memdir.config import Settings, choose_engine
    from memdir.stages.extractor.dream import dream

    settings = Settings.from_env().with_overrides(engine=args.engine, extract_model=args.model)
    choose_engine(settings.engine)
    result = dream(memory_dir_of(args).path, settings=settings, dry_run=args.dry_run)
    if args.json:
        print_json(result.as_dict())
    else:
        print(f"{result.status}{': ' + result.reason if result.reason else ''}")
        for line in result.report_lines():  # "created X", "updated X (previous version kept: ...)", "would ..."
            print(f"  {line}")
    return 1 if result.status == "failed" else 0


def add_parsers(command) -> None:
    from memdir.entry.cli_consolidate import add_parser as add_consolidate_parser

    add_consolidate_parser(command)
    p = command("batch", cmd_batch, "back-fill memories from existing transcripts (default: all of ~/.claude/projects)",
                folder=False)
    p.add_argument("paths", nargs="*", help="transcript files or folders")
    p.add_argument("--since", help="only transcripts modified on or after YYYY-MM-DD")
    p.add_argument("--engine", help="auto (default), anthropic, claude-code or offline")
    p.add_argument("--model", help="extraction model")
    p.add_argument("--last", type=int, help="messages per extraction window (default 20)")
    p.add_argument("--concurrency", type=int, default=4, help="transcripts extracted at once")
    p.add_argument("--max-cost", type=float, help="stop cleanly before the estimated spend passes this many USD")
    p.add_argument("--dry-run", action="store_true", help="show what would be written; advance no cursor")
    p.add_argument("--batch-api", action="store_true",
                   help="send each agent turn for all transcripts as one Message Batches request (50%% price)")

    p = command("dream", cmd_dream, "daily-log mode: distill new log entries into typed memories (safe to re-run)")
    p.add_argument("--engine", help="auto (default), anthropic, claude-code or offline")
    p.add_argument("--model", help="model for the llm engine")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--json", action="store_true")

    p = command("recall", cmd_recall, "print the memories that would be injected for a prompt")
    p.add_argument("--agent", help="use this agent type's memory (e.g. code-reviewer) instead of the project's")
    p.add_argument("--scope", choices=["user", "project", "local"], help="agent memory scope (default project)")
    p.add_argument("query", help="the prompt, as you would type it to Claude Code")
    p.add_argument("--engine", help="auto (default), anthropic, claude-code or offline")
    p.add_argument("--tools", help="recently used tools, comma-separated (e.g. Read,Bash)")
    p.add_argument("--session", help="session id: skip memories already surfaced there, and record these")
    p.add_argument("--model", help="model for the llm selector (default $MEMDIR_RECALL_MODEL or claude-haiku-5-5)")
    p.add_argument("--timeout", type=float, help="seconds the llm selector may take (default 2)")
    p.add_argument("--json", action="store_true")

    p = command("extract", cmd_extract, "save memories from a transcript (Claude Code JSONL or a JSON message list)")
    p.add_argument("--agent", help="use this agent type's memory (e.g. code-reviewer) instead of the project's")
    p.add_argument("--scope", choices=["user", "project", "local"], help="agent memory scope (default project)")
    p.add_argument("transcript", help="a Claude Code session (.jsonl) or a JSON message list; its memories go to "
                   "this project's folder (or --dir), whichever project the session was in")
    p.add_argument("--session", help="session id: only messages after this session's cursor, which then advances")
    p.add_argument("--last", type=int, help="read only the last N messages (default: the whole transcript, or "
                                            "everything after the session's cursor)")
    p.add_argument("--engine", help="auto (default), anthropic, claude-code or offline")
    p.add_argument("--model", help="model for the llm engine (default $MEMDIR_EXTRACT_MODEL or claude-sonnet-5-5)")
    p.add_argument("--dry-run", action="store_true",
                   help="show which files would be created or updated (updates as diffs); write nothing")
    p.add_argument("--json", action="store_true")
