"""The detached background worker the Stop hook starts: `python -m memdir.entry.worker '<json>'`.

It resolves the memory folder (the hook itself does no work beyond starting this), runs the
scheduled extraction, and records the outcome in `.memdir/`; the next prompt or session-start
hook shows "Memory saved: ..." once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


class WorkerTimeout(BaseException):
    """Raised by the worker's alarm: a BaseException, so no `except Exception` inside a stage swallows it."""


def _stop_after(seconds: int) -> None:
    """A wall-clock bound for the whole worker: a run that passes it ends like a crash would, which loses
    nothing (writes are atomic, history is kept first) and leaves the cursor before the unfinished chunk."""
    import signal

    def expired(signum, frame):
        raise WorkerTimeout()

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)


def main(argv: list[str]) -> int:
    from memdir import constants as C
    from memdir.hooklog import log

    _enter_workdir()
    memory_dir = None
    try:
        request = json.loads(argv[0])
        from memdir.paths import memdir_enabled, resolve_memory_dir

        cwd = _project_folder(request)
        if cwd is None:
            log(None, "stop", "no usable project folder in the request (cwd missing, '/', or not a folder)")
            return 0
        memory_dir = resolve_memory_dir(cwd).path
        if not memdir_enabled(memory_dir).enabled:  # memdir's own switch, not Claude Code's
            return 0
        if not request.get("transcript"):
            log(memory_dir, "stop", "no transcript_path in the Stop payload; nothing to extract")
            return 0
        _sweep(memory_dir, request)
        _extract(memory_dir, request)
        _dream_if_due(memory_dir, request)
        _sync_and_tidy(memory_dir, cwd)
    except WorkerTimeout:
        log(memory_dir, "stop", f"worker stopped after {C.WORKER_MAX_SECONDS} s; the next Stop goes on from the saved cursor")
        return 1
    except Exception as exc:  # a background worker has nobody to show a traceback to
        log(memory_dir, "stop", f"worker failed: {type(exc).__name__}: {exc}")
        return 1
    return 0


def _enter_workdir() -> None:
    """Run in the folder the hook names (MEMDIR_WORKER_CWD), when it is one; the variable goes no further."""
    import os

    workdir = os.environ.pop("MEMDIR_WORKER_CWD", None)
    if workdir and os.path.isdir(workdir):
        os.chdir(workdir)


def _project_folder(request: dict) -> Path | None:
    """The project folder the Stop payload names, or None when it names none that memdir can use."""
    from memdir.prompt_scope import usable_cwd

    cwd_text = usable_cwd(request.get("cwd") if isinstance(request.get("cwd"), str) else None)
    return None if cwd_text is None else Path(cwd_text)


def _extract(memory_dir: Path, request: dict) -> None:
    """The scheduled extraction, then the decision tiers (issue 14), each outcome one line in the hook log."""
    from memdir.hooklog import log
    from memdir.stages.extractor.decision_pipeline import stop_step
    from memdir.stages.extractor.report import summary as describe_changes
    from memdir.stages.extractor.schedule import request_extraction

    for result in request_extraction(memory_dir, {**request, "hook": True}):
        # One plain line: what changed ("created a.md; updated b.md (previous version kept: ...)"),
        # or why nothing did.
        read = f" ({result.prompts_seen} prompt(s) read)" if result.chunks else ""
        if result.changes:
            line = f"{result.engine or 'no'} engine{read}: {describe_changes(result.changes, result.dry_run)}"
        else:
            line = f"{result.status}{read}" + (f": {result.reason}" if result.reason else "")
        log(memory_dir, "stop", line)
    for line in stop_step(memory_dir, request.get("cwd"), request.get("transcript")):
        log(memory_dir, "stop", line)


def _dream_if_due(memory_dir: Path, request: dict) -> None:
    """In daily-log mode: note this session, and consolidate the logs into memories when a dream is due."""
    from memdir.daylog import memory_mode

    if memory_mode(memory_dir) != "daily-log":
        return
    from memdir.hooklog import log
    from memdir.stages.extractor import dream

    dream.note_session(memory_dir, request.get("session_id"))
    if dream.due(memory_dir):
        outcome = dream.dream(memory_dir)
        log(memory_dir, "dream", f"{outcome.status}: {', '.join(outcome.saved) or outcome.reason}")


def _sync_and_tidy(memory_dir: Path, cwd: Path) -> None:
    """Sync the folder with its remote when the user turned it on (issue 23), then pack the history's git
    objects: one pack per commit would pass git's limit, and repacking belongs off the hook path."""
    from memdir import githistory
    from memdir.gitsync import background_sync
    from memdir.hooklog import log
    from memdir.paths import project_root

    synced = background_sync(memory_dir, project_root(cwd))
    if synced:
        log(memory_dir, "sync", synced)
    githistory.tidy(memory_dir)


def _sweep(memory_dir: Path, request: dict) -> None:
    """Commit what others changed since the last commit (Claude Code's agent, its extractor or dream, a
    person), before memdir writes anything, naming the writer when the transcript shows it."""
    from memdir import githistory

    if not githistory.enabled():
        return
    from memdir.stages.extractor.writers import memory_writers

    writers = memory_writers(Path(request["transcript"]), memory_dir)
    session = request.get("session_id")
    why = "changes made outside memdir, found at the end of a Claude Code turn" + (f" (session {session})"
                                                                                    if session else "")
    githistory.sweep(memory_dir, writers, why=why)


if __name__ == "__main__":  # the detached process only: in-process callers keep their own signals
    from memdir import constants

    _stop_after(constants.WORKER_MAX_SECONDS)
    sys.exit(main(sys.argv[1:]))
