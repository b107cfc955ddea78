"""Which memory files memdir's extractor wrote: `.memdir/authored.json`, the sha256 of the bytes it last wrote.

The extractor updates only its own memories: a file that still holds exactly the bytes it wrote is its own; one a
person wrote, or edited by hand since, is theirs. Every read and write goes through `memdir.safefs`, as history's do.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from memdir import constants as C, safefs, safefs_write


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record(state_dir: Path) -> tuple[Path, str]:
    """(the memory folder every open walks from, authored.json relative to it)."""
    state_dir = Path(state_dir)
    return state_dir.parent, f"{state_dir.name}/{C.AUTHORED_NAME}"


def _load_authored(state_dir: Path) -> dict:
    base, rel = _record(state_dir)
    data = safefs.read_json(base, rel, {})
    return data if isinstance(data, dict) else {}


def record_authored(state_dir: Path, rel_path: str, text: str) -> None:
    """Note that memdir's extractor wrote exactly `text` to `rel_path` (call under the folder lock)."""
    base, rel = _record(state_dir)
    data = _load_authored(state_dir)
    data[rel_path] = _digest(text.encode("utf-8"))
    safefs_write.write_text(base, rel, json.dumps(data, indent=0, sort_keys=True))


def written_by_extractor(state_dir: Path, root: Path, rel_path: str) -> bool:
    """True when the file still holds the bytes memdir's extractor wrote (nobody edited it since)."""
    digest = _load_authored(state_dir).get(rel_path)
    if not digest:
        return False
    base, _ = _record(state_dir)
    try:
        return _digest(safefs.read_bytes(base, safefs.rel_to(base, Path(root) / rel_path))) == digest
    except OSError:
        return False
