"""Extraction bookkeeping in `.memdir/`: cursors, daily usage, the pending request, notices, run log.

Every hook is a new process, so all of this is files, written atomically (and under a lock where
several processes may read-modify-write them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from memdir import constants as C, safefs, safefs_write
from memdir.session_key import session_rel


def state_dir(memory_dir: Path) -> Path:
    return memory_dir / C.STATE_DIRNAME


def _session_rel(session_id: str) -> str:
    """`.memdir/sessions/<key>` (memdir.session_key): every state file is opened through memdir.safefs."""
    return session_rel(str(session_id))


# --- cursor per session ----------------------------------------------------------------
def load_cursor(memory_dir: Path, session_id: str) -> dict:
    """{"uuid": last processed message or None, "turns": eligible turns since the last run}."""
    data = safefs.read_json(memory_dir, f"{_session_rel(session_id)}/cursor.json", {})
    if not isinstance(data, dict):
        data = {}
    uuid = data.get("uuid") if isinstance(data.get("uuid"), str) else None
    turns = data.get("turns", 0)
    return {"uuid": uuid, "turns": turns if isinstance(turns, int) and not isinstance(turns, bool) else 0}


def save_cursor(memory_dir: Path, session_id: str, uuid: str | None, turns: int = 0) -> None:
    safefs_write.write_text(memory_dir, f"{_session_rel(session_id)}/cursor.json",
                            json.dumps({"uuid": uuid, "turns": turns}))


# --- the stashed request (newest wins) ----------------------------------------------------
def pending_path(memory_dir: Path) -> Path:
    return state_dir(memory_dir) / "pending.json"


def stash(memory_dir: Path, request: dict) -> None:
    safefs_write.write_text(memory_dir, f"{C.STATE_DIRNAME}/pending.json", json.dumps(request))


def take_pending(memory_dir: Path) -> dict | None:
    """Atomically claim the stashed request, if any."""
    claimed = f"{C.STATE_DIRNAME}/pending.claimed-{time.monotonic_ns()}"
    try:
        safefs_write.rename(memory_dir, f"{C.STATE_DIRNAME}/pending.json", claimed)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        request = safefs.read_json(memory_dir, claimed, None)
        return request if isinstance(request, dict) else None
    finally:
        safefs_write.unlink(memory_dir, claimed)


# --- run log ------------------------------------------------------------------------------------
def log_run(memory_dir: Path, entry: dict) -> None:
    """One line per run in `.memdir/runs.jsonl`, with any secret (or slug of one) redacted (memdir.runlog: the
    one writer of that log, which also keeps it within its cap)."""
    from memdir.runlog import append_run

    append_run(memory_dir, entry)
