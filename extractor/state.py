"""Extraction bookkeeping in `.memdir/`: cursors, daily usage, the pending request, notices, run log.

Every hook is a new process, so all of this is files, written atomically (and under a lock where
several processes may read-modify-write them).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from memdir import constants as C
from memdir.fsio import atomic_write_text, locked



def state_dir(memory_dir: Path) -> Path:
    return memory_dir / C.STATE_DIRNAME


def _read_json(path: Path, default):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _session_dir(memory_dir: Path, session_id: str) -> Path:
    return state_dir(memory_dir) / "sessions" / (re.sub(r"[^A-Za-z0-9_-]", "-", session_id)[:100] or "default")


# --- cursor per session ----------------------------------------------------------------
def load_cursor(memory_dir: Path, session_id: str) -> dict:
    """{"uuid": last processed message or None, "turns": eligible turns since the last run}."""
    data = _read_json(_session_dir(memory_dir, session_id) / "cursor.json", {})
    return {"uuid": data.get("uuid"), "turns": int(data.get("turns", 0))}


def save_cursor(memory_dir: Path, session_id: str, uuid: str | None, turns: int = 0) -> None:
    atomic_write_text(_session_dir(memory_dir, session_id) / "cursor.json", json.dumps({"uuid": uuid, "turns": turns}))


# --- the stashed request (newest wins) ----------------------------------------------------
def pending_path(memory_dir: Path) -> Path:
    return state_dir(memory_dir) / "pending.json"


def stash(memory_dir: Path, request: dict) -> None:
    atomic_write_text(pending_path(memory_dir), json.dumps(request))


def take_pending(memory_dir: Path) -> dict | None:
    """Atomically claim the stashed request, if any."""
    path = pending_path(memory_dir)
    claimed = path.with_name(f"pending.claimed-{time.monotonic_ns()}")
    try:
        path.rename(claimed)
    except FileNotFoundError:
        return None
    try:
        return _read_json(claimed, None)
    finally:
        claimed.unlink(missing_ok=True)


# --- run log ------------------------------------------------------------------------------------
def log_run(memory_dir: Path, entry: dict) -> None:
    target = state_dir(memory_dir) / "runs.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(state_dir(memory_dir) / "runs.lock"):
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%S"), **entry}) + "\n")
