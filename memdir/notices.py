""""Memory saved: ..." notices: written by the background worker, shown once by the next hook."""

from __future__ import annotations

import json
from pathlib import Path

from memdir import constants as C
from memdir.fsio import atomic_write_text, locked


def _files(memory_dir: Path) -> tuple[Path, Path]:
    folder = memory_dir / C.STATE_DIRNAME
    return folder / "notices.json", folder / "notices.lock"


def add_notice(memory_dir: Path, paths: list[str]) -> None:
    if not paths:
        return
    target, lock = _files(memory_dir)
    with locked(lock):
        try:
            current = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            current = []
        current.extend(p for p in paths if p not in current)
        atomic_write_text(target, json.dumps(current))


def take_notices(memory_dir: Path) -> list[str]:
    """The paths saved since the last call, each returned once."""
    target, lock = _files(memory_dir)
    if not target.exists():
        return []
    with locked(lock):
        try:
            current = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            current = []
        target.unlink(missing_ok=True)
    return current if isinstance(current, list) else []
