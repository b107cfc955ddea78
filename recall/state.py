"""Per-session recall state in `.memdir/`: what was already surfaced, and how many bytes.

Every prompt hook is a new process, so this lives on disk, written atomically under a lock. Two prompt hooks
can run at once for one prompt (memdir registered in two settings files): the hook reads and writes this under
`held`, after recall, so only one of them says a memory (memdir.entry.prompt_claim). Two SessionStart hooks
likewise: the session's start, as said by the first (memdir.entry.start_claim).
"""

from __future__ import annotations

import contextlib
import os

from memdir import light_json, safefs, safefs_write
from memdir.record import Record, field
from memdir.session_key import session_rel


class Surfaced(Record):
    paths: list[str] = field(default_factory=list)
    bytes: int = 0


def _folder(session_id: str) -> str:
    """`.memdir/sessions/<key>` (memdir.session_key), opened through memdir.safefs: never through a symlink."""
    return session_rel(session_id)


def load(memory_dir: str | os.PathLike, session_id: str | None) -> Surfaced:
    if not session_id:
        return Surfaced()
    try:
        data = light_json.loads(safefs.read_bytes(memory_dir, f"{_folder(session_id)}/surfaced.json").decode())
        if not isinstance(data, dict):
            return Surfaced()
        return Surfaced(list(data.get("paths", [])), int(data.get("bytes", 0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return Surfaced()


@contextlib.contextmanager
def held(memory_dir: str | os.PathLike, session_id: str, timeout: float = 30.0):
    """The session's state lock, for a read and a write (memdir.errors.FolderBusy past `timeout`)."""
    with safefs_write.locked(memory_dir, f"{_folder(session_id)}/lock", timeout):
        yield


def record(memory_dir: str | os.PathLike, session_id: str | None, paths: list[str], size: int) -> None:
    if not session_id or not paths:
        return
    with held(memory_dir, session_id):
        add(memory_dir, session_id, load(memory_dir, session_id), paths, size)


def add(memory_dir: str | os.PathLike, session_id: str, current: Surfaced, paths: list[str], size: int) -> None:
    """`paths` (and `size` bytes) added to the session's `current` state, read under `held`, which is still held."""
    merged = current.paths + [p for p in paths if p not in current.paths]
    # Not fsynced: losing this in a power cut only means a memory may be shown once more.
    safefs_write.write_text(memory_dir, f"{_folder(session_id)}/surfaced.json",
                            light_json.dumps({"paths": merged, "bytes": current.bytes + size}), durable=False)


def start_said(memory_dir: str | os.PathLike, session_id: str) -> tuple[str, float, bool] | None:
    """(the SessionStart source, when, whether with MEMORY.md) memdir's session-start text was last given to this
    session with; None when never (or unreadable: then it is given again). Read under `held`."""
    try:
        data = light_json.loads(safefs.read_bytes(memory_dir, f"{_folder(session_id)}/started.json", 4096).decode())
        if not isinstance(data, dict):
            return None
        return str(data["source"]), int(data["at_ms"]) / 1000, data["index"] is True
    except (OSError, ValueError, TypeError, KeyError):
        return None


def note_start(memory_dir: str | os.PathLike, session_id: str, source: str, at: float, index: bool) -> None:
    """The session's start given now (`start_said`'s fields), under `held`."""
    safefs_write.write_text(memory_dir, f"{_folder(session_id)}/started.json",
                            light_json.dumps({"source": source, "at_ms": int(at * 1000), "index": index}), durable=False)
