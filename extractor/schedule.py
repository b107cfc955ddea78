"""One extraction per memory folder at a time, with a stashed trailing run (SPEC §5).

Every hook is its own process, so coordination is a lock file: a request that finds a run in
progress is stashed in `.memdir/pending.json` (a newer one replaces it) and the running process
does exactly one trailing run for it when done, covering only messages after the advanced cursor.
"""

from __future__ import annotations

from pathlib import Path

from memdir import constants as C, safefs, safefs_write
from memdir.config import Settings
from memdir.notices import add_notice
from memdir.stages.extractor import state
from memdir.stages.extractor.result import ExtractResult
from memdir.stages.extractor.run import extract_transcript


def _throttled(memory_dir: Path, request: dict, settings: Settings) -> bool:
    """Count an eligible turn; True when this one should not run yet (every N turns)."""
    session = request.get("session_id")
    if not request.get("hook") or not session or settings.extract_every_n_turns <= 1:
        return False
    cursor = state.load_cursor(memory_dir, session)
    turns = cursor["turns"] + 1
    if turns < settings.extract_every_n_turns:
        state.save_cursor(memory_dir, session, cursor["uuid"], turns)
        return True
    return False


def _run_one(memory_dir: Path, request: dict, settings: Settings, client) -> ExtractResult:
    result = extract_transcript(
        Path(request["transcript"]),
        memory_dir,
        session_id=request.get("session_id"),
        last_n=request.get("last_n"),
        settings=settings,
        engine=request.get("engine"),
        dry_run=bool(request.get("dry_run")),
        client=client,
    )
    if result.status == "saved" and not result.dry_run:
        add_notice(memory_dir, [str(memory_dir / p) for p in result.saved])
    return result


def request_extraction(
    memory_dir: Path, request: dict, *, settings: Settings | None = None, client=None
) -> list[ExtractResult]:
    """Run now (plus any trailing run), or stash the request when another process is running."""
    settings = settings or Settings.from_env()
    if _throttled(memory_dir, request, settings):
        return [ExtractResult("skipped", reason=f"throttled: runs every {settings.extract_every_n_turns} turns")]
    results: list[ExtractResult] = []
    current: dict | None = request
    while True:
        with safefs_write.try_locked(memory_dir, f"{C.STATE_DIRNAME}/extract.lock") as got:
            if not got:
                if current is not None:
                    state.stash(memory_dir, current)
                    results.append(ExtractResult("stashed", reason="another run is in progress; queued as the trailing run"))
                return results
            if current is not None:
                results.append(_run_one(memory_dir, current, settings, client))
            while (pending := state.take_pending(memory_dir)) is not None:
                results.append(_run_one(memory_dir, pending, settings, client))
        # A request may have been stashed after our last look but before the lock was released.
        if not safefs.exists(memory_dir, f"{C.STATE_DIRNAME}/pending.json"):
            return results
        current = None
