"""No-loss edits: the previous bytes of a memory file or MEMORY.md, kept before any change.

`.memdir/history/<file key>/<UTC time>-<action>.md` holds one version each. The file key is the
relative path with `/` turned into `__`, so a deleted memory's history is still found by its name.
Names are made unique with an exclusive create (two forgets in the same microsecond keep two copies).

The module also remembers which bytes memdir's extractor wrote (`authored.json`), so the extractor
can tell its own memories from ones a person wrote or edited by hand: those are theirs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.fsio import atomic_write_text


@dataclass(frozen=True)
class Version:
    """One kept version. `number` 1 is the newest."""

    number: int
    path: Path
    stamp: str
    action: str

    @property
    def name(self) -> str:
        return self.path.name


def history_root(state_dir: Path) -> Path:
    return Path(state_dir) / C.HISTORY_DIRNAME


def file_key(rel_path: str) -> str:
    return rel_path.replace("/", "__")


def _now_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def keep_bytes(state_dir: Path, rel_path: str, data: bytes, action: str) -> Path:
    """Store `data` as a version of `rel_path`; returns the kept file. Never overwrites a version."""
    folder = history_root(state_dir) / file_key(rel_path)
    folder.mkdir(parents=True, exist_ok=True)
    action = re.sub(r"[^a-z-]", "", action.lower()) or "changed"
    stamp = _now_stamp()
    for n in range(1, 10_000):
        candidate = folder / f"{stamp}-{n:04d}-{action}.md"  # the counter keeps same-instant copies in order
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _prune(folder)
        return candidate
    raise MemdirError(f"{folder}: too many versions kept at the same instant")


def keep(state_dir: Path, root: Path, rel_path: str, action: str) -> Path | None:
    """Keep the current bytes of `root/rel_path` before it changes; None when there is no file."""
    path = Path(root) / rel_path
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return keep_bytes(state_dir, rel_path, data, action)


def _prune(folder: Path) -> None:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    for old in files[: max(0, len(files) - C.HISTORY_KEEP_PER_FILE)]:
        old.unlink(missing_ok=True)


def versions(state_dir: Path, rel_path: str) -> list[Version]:
    """Kept versions of `rel_path`, newest first."""
    folder = history_root(state_dir) / file_key(rel_path)
    if not folder.is_dir():
        return []
    files = sorted((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.name, reverse=True)
    out = []
    for i, path in enumerate(files, 1):
        stamp, _, rest = path.stem.partition("-")
        action = rest.partition("-")[2] or "changed"
        out.append(Version(i, path, stamp, action))
    return out


def known_files(state_dir: Path) -> list[str]:
    """Relative paths that have history (including deleted memories)."""
    root = history_root(state_dir)
    if not root.is_dir():
        return []
    return sorted(p.name.replace("__", "/") for p in root.iterdir() if p.is_dir())


def pick(state_dir: Path, rel_path: str, version: str | None) -> Version:
    """A version by number (1 = newest), by file name, or the newest when `version` is None."""
    found = versions(state_dir, rel_path)
    if not found:
        raise MemdirError(f"no kept versions of {rel_path}; see `memdir history {rel_path}`")
    if version is None:
        return found[0]
    wanted = version.strip()
    for v in found:
        if wanted in (str(v.number), v.name, v.path.stem):
            return v
    raise MemdirError(f"{rel_path} has no version {version!r}; `memdir history {rel_path}` lists them (1 = newest)")


def display(root: Path, kept: Path | None) -> str:
    """A kept path as the user should read it: relative to the memory folder when inside it."""
    if kept is None:
        return ""
    try:
        return kept.relative_to(root).as_posix()
    except ValueError:
        return str(kept)


# --- which files memdir's extractor wrote ---------------------------------------------
def _authored_path(state_dir: Path) -> Path:
    return Path(state_dir) / C.AUTHORED_NAME


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_authored(state_dir: Path) -> dict:
    try:
        data = json.loads(_authored_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_authored(state_dir: Path, rel_path: str, text: str) -> None:
    """Note that memdir's extractor wrote exactly `text` to `rel_path` (call under the folder lock)."""
    data = _load_authored(state_dir)
    data[rel_path] = _digest(text.encode("utf-8"))
    atomic_write_text(_authored_path(state_dir), json.dumps(data, indent=0, sort_keys=True))


def written_by_extractor(state_dir: Path, root: Path, rel_path: str) -> bool:
    """True when the file still holds the bytes memdir's extractor wrote (nobody edited it since)."""
    digest = _load_authored(state_dir).get(rel_path)
    if not digest:
        return False
    try:
        return _digest((Path(root) / rel_path).read_bytes()) == digest
    except OSError:
        return False
