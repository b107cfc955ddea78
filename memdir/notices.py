""""Memory saved: ..." notices: written by the background worker, shown once by the next hook."""

from __future__ import annotations

import os

from memdir import constants as C, safefs

NOTICES = f"{C.STATE_DIRNAME}/notices.json"  # opened through memdir.safefs: never through a symlink
LOCK = f"{C.STATE_DIRNAME}/notices.lock"


def add_notice(memory_dir: str | os.PathLike, paths: list[str]) -> None:
    if not paths:
        return
    import json  # the background worker's: a hook only takes notices

    from memdir import safefs_write

    with safefs_write.locked(memory_dir, LOCK):
        current = safefs.read_json(memory_dir, NOTICES, [])
        current = current if isinstance(current, list) else []
        current.extend(p for p in paths if p not in current)
        safefs_write.write_text(memory_dir, NOTICES, json.dumps(current))


def take_notices(memory_dir: str | os.PathLike) -> list[str]:
    """The paths saved since the last call, each returned once."""
    if not safefs.exists(memory_dir, NOTICES):
        return []
    from memdir import safefs_write  # only now: the prompt hook with nothing saved never loads the writers (portalock)

    with safefs_write.locked(memory_dir, LOCK):
        current = safefs.read_json(memory_dir, NOTICES, [])
        safefs_write.unlink(memory_dir, NOTICES)
    return [p for p in current if isinstance(p, str)] if isinstance(current, list) else []
