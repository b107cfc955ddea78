"""`memdir consolidate [--dry-run]`: a thin shell over memdir.stages.extractor.consolidate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir.entry.cli_support import memory_dir_of, print_json

if TYPE_CHECKING:
    import argparse


def cmd_consolidate(args: argparse.Namespace) -> int:
    from memdir.config import Settings, choose_engine
    from memdir.stages.extractor.consolidate import consolidate, report_lines

    settings = Settings.from_env().with_overrides(engine=args.engine, extract_model=args.model)
    choose_engine(settings.engine)
    result = consolidate(memory_dir_of(args).path, settings=settings, dry_run=args.dry_run)
    if args.json:
        plan = result.plan
        print_json({
            "engine": plan.engine, "dry_run": result.dry_run, "failed": result.failed, "usage": result.usage,
            "merges": [{"keep": m.keep, "drop": m.drop, "reason": m.reason} for m in plan.merges],
            "supersedes": [{"newer": s.newer, "older": s.older, "reason": s.reason} for s in plan.supersedes],
            "listed": [{"files": item.files, "note": item.note} for item in plan.listed],
            "skipped": plan.skipped,
            "changes": [{"file": e.rel, "action": "update" if e.memory is not None else "delete", "why": e.why,
                         "diff": e.diff()} for e in result.edits],
            "done": result.done,
        })
    else:
        for line in report_lines(result):
            print(line)
    return 1 if result.failed else 0


def add_parser(command) -> None:
    p = command("consolidate", cmd_consolidate,
                "merge memories that say the same thing; mark the older of two that contradict as superseded")
    p.add_argument("--engine", help="auto (default), anthropic (the model judges) or offline (exact and "
                                    "near-exact duplicates only)")
    p.add_argument("--model", help="model for the anthropic engine (default $MEMDIR_EXTRACT_MODEL)")
    p.add_argument("--dry-run", action="store_true", help="print the plan as unified diffs; change nothing")
    p.add_argument("--json", action="store_true")
