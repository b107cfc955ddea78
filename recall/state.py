"""Per-session recall state in `.memdir/`: what was already surfaced, and how many bytes.

Every prompt hook is a new process, so this lives on disk, written atomically under a lock.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from memdir import constants as C
from memdir.fsio import atomic_write_text, locked
from memdir.record import Record


class Surfaced(Record):
    __slots__ = ("paths", "bytes")
    _defaults = {"paths": list, "bytes": 0}


def _file(memory_dir: Path, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", session_id)[:100] or "default"
    return memory_dir / C.STATE_DIRNAME / "sessions" / safe / "surfaced.json"


def load(memory_dir: Path, session_id: str | None) -> Surfaced:
    if not session_id:
        return Surfaced()
    try:
        data = json.loads(_file(memory_dir, session_id).read_text(encoding="utf-8"))
        return Surfaced(list(data.get("paths", [])), int(data.get("bytes", 0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return Surfaced()


def record(memory_dir: Path, session_id: str | None, paths: list[str], size: int) -> None:
    if not session_id or not paths:
        return
    target = _file(memory_dir, session_id)
    with locked(target.with_name("lock")):
        current = load(memory_dir, session_id)
        merged = current.paths + [p for p in paths if p not in current.paths]
        # Not fsynced: losing this in a power cut only means a memory may be shown once more.
        atomic_write_text(target, json.dumps({"paths": merged, "bytes": current.bytes + size}), durable=False)
