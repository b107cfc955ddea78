"""`memdir eval consolidate FOLDER`: run consolidation on a COPY of a memory folder and count what it did.

The folder itself is only read: it is copied into the run folder and consolidated there (`--dry-run`:
planned only). The model's side goes through the same loop as `memdir eval run --suite realdata`
(evals/model_loop.py): `--engine relay` (a person or an agent answers the request files), `--record`
and `--replay` a cassette, so CI replays what a model once answered. The figures: memories before and
after, merges, supersedes, pairs left for the user, and the no-loss check (every original file's bytes
are still in the folder or in its history).
"""

from __future__ import annotations

import sys
from pathlib import Path

from memdir import constants as C

# history, shutil and json are imported where used: `add_parser` runs on every `memdir` command.
SESSION_PREFIX = "consolidate/"


def lost_bytes(original: Path, copy: Path) -> list[str]:
    """Original memory files whose exact bytes are neither in the copy nor among its kept versions."""
    from memdir import history

    state = copy / C.STATE_DIRNAME
    lost = []
    for path in sorted(original.rglob("*.md")):
        rel = path.relative_to(original).as_posix()
        if rel.startswith(C.STATE_DIRNAME + "/"):
            continue
        data = path.read_bytes()
        here = copy / rel
        if here.is_file() and here.read_bytes() == data:
            continue
        if not any(v.read() == data for v in history.versions(state, rel)):
            lost.append(rel)
    return lost


def run_on_copy(folder: Path, out: Path, *, engine: str, settings, dry_run: bool, loop=None) -> dict:
    import shutil

    from memdir.stages.extractor.consolidate import consolidate, report_lines

    copy = out / folder.name
    shutil.copytree(folder, copy, symlinks=True)
    for path in [copy, *copy.rglob("*")]:  # the shared data is read-only; its copy must be writable
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    before = len([p for p in copy.glob("*.md") if p.name != C.INDEX_NAME])
    if loop is not None:
        loop.begin(SESSION_PREFIX + folder.name, copy)
    result = consolidate(copy, settings=settings, engine=engine, dry_run=dry_run,
                         client=loop.client() if loop is not None else None)
    plan = result.plan
    return {
        "folder": str(folder), "copy": str(copy), "engine": plan.engine, "dry_run": dry_run, "failed": result.failed,
        "memories_before": before,
        "memories_after": len([p for p in copy.glob("*.md") if p.name != C.INDEX_NAME]),
        "merges": [{"keep": m.keep, "drop": m.drop, "reason": m.reason} for m in plan.merges],
        "supersedes": [{"newer": s.newer, "older": s.older, "reason": s.reason} for s in plan.supersedes],
        "listed": [{"files": i.files, "note": i.note} for i in plan.listed],
        "skipped": plan.skipped, "files_changed": len(result.edits), "usage": result.usage,
        "lost": lost_bytes(folder, copy), "lines": report_lines(result),
    }


def run(args) -> int:
    import json

    from memdir.config import Settings, choose_engine
    from memdir.errors import MemdirError
    from memdir.evals.model_loop import model_loop
    from memdir.evals.run_folder import own_run_folder

    folder = Path(args.folder).expanduser()
    if not folder.is_dir():
        print(f"memdir eval consolidate: {folder}: not a folder; pass a memory folder", file=sys.stderr)
        return 2
    requested = args.engine or "auto"
    with (own_run_folder(Path(args.out), f"consolidate-{requested}") as out,
          model_loop(requested, relay_dir=args.relay_dir, record=args.record, replay=args.replay,
                     misses=out / "replay-misses") as loop):
        engine = "llm" if loop is not None else choose_engine(requested)
        settings = Settings.from_env().with_overrides(engine=engine, extract_model=args.model)
        try:
            report = run_on_copy(folder, out, engine=engine, settings=settings, dry_run=args.dry_run, loop=loop)
        except MemdirError as exc:
            print(f"memdir eval consolidate: {exc}", file=sys.stderr)
            return 1
        if loop is not None and loop.failure:
            print(f"memdir eval consolidate: {loop.failure}", file=sys.stderr)
            return 1
        if loop is not None:
            loop.finish()
        (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n".join(report["lines"]))
    print(f"memories {report['memories_before']} -> {report['memories_after']}; merges {len(report['merges'])}, "
          f"supersedes {len(report['supersedes'])}, for you to decide {len(report['listed'])}, files changed "
          f"{report['files_changed']}, original files whose bytes were lost {len(report['lost'])}")
    print(f"report: {out / 'report.json'}", file=sys.stderr)
    return 1 if report["lost"] or report["failed"] else 0


def add_parser(evsub) -> None:
    c = evsub.add_parser("consolidate", help="consolidate a copy of a memory folder and count what it did",
                         description="consolidate a COPY of a memory folder (the folder is only read)")
    c.add_argument("folder", help="a memory folder, e.g. ../shared/realdata/memory-folders/application-pipeline")
    c.add_argument("--engine", choices=["auto", "llm", "anthropic", "offline", "relay"], default=None,
                   help="relay: a person or another agent answers each request as a file in --relay-dir")
    c.add_argument("--relay-dir", help="--engine relay: where NNNN.request.md is written and NNNN.response.json read")
    c.add_argument("--record", metavar="DIR", help="record every answer the model gave as a cassette in DIR")
    c.add_argument("--replay", metavar="DIR", help="answer from the cassette in DIR")
    c.add_argument("--model", help="model for the anthropic engine")
    c.add_argument("--dry-run", action="store_true", help="plan only; the copy is left as copied")
    c.add_argument("--out", default="eval-runs", help="where run folders are written (default ./eval-runs)")
    c.set_defaults(func=run)
