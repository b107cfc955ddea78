"""No-loss edits: the previous bytes of a memory file or MEMORY.md, kept before any change.

`.memdir/history/<file key>/<UTC time>-<n>-<action>.md` holds one version each. The file key is the
relative path with `/` turned into `__`, so a deleted memory's history is still found by its name.
Names are made unique with an exclusive create (two forgets in the same microsecond keep two copies).

Every read and write goes through `memdir.safefs` (issue 9): a symlink planted anywhere inside the
memory folder, `.memdir/history/` included, is refused, never followed.

The module also remembers which bytes memdir's extractor wrote (`authored.json`), so the extractor
can tell its own memories from ones a person wrote or edited by hand: those are theirs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from memdir import constants as C
from memdir import safefs
from memdir.errors import MemdirError

_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _base(state_dir: Path) -> tuple[Path, str]:
    """(the memory folder every open walks from, the state folder relative to it)."""
    state_dir = Path(state_dir)
    return state_dir.parent, state_dir.name


@dataclass(frozen=True)
class Version:
    """One kept version. `number` 1 is the newest."""

    number: int
    path: Path
    stamp: str
    action: str
    base: Path
    rel: str  # relative to `base`, for symlink-proof reads

    @property
    def name(self) -> str:
        return self.path.name

    def read(self) -> bytes:
        return safefs.read_bytes(self.base, self.rel)


def history_root(state_dir: Path) -> Path:
    return Path(state_dir) / C.HISTORY_DIRNAME


def file_key(rel_path: str) -> str:
    """The history folder name for `rel_path`; a name that looks like a secret is replaced by its
    hash, so no secret (or slug of one) ever becomes a file name under .memdir/ (issue 9)."""
    from memdir.secrets import looks_secret

    flat = rel_path.replace("/", "__")
    if looks_secret(flat) or looks_secret(flat.replace("_", "-")):
        return f"memory-{hashlib.sha256(flat.encode()).hexdigest()[:12]}.md"
    return flat


def _folder_rel(state_rel: str, rel_path: str) -> str:
    return f"{state_rel}/{C.HISTORY_DIRNAME}/{file_key(rel_path)}"


def _now_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def keep_bytes(state_dir: Path, rel_path: str, data: bytes, action: str) -> Path:
    """Store `data` as a version of `rel_path`; returns the kept file. Never overwrites a version."""
    base, state_rel = _base(state_dir)
    folder = _folder_rel(state_rel, rel_path)
    action = re.sub(r"[^a-z-]", "", action.lower()) or "changed"
    stamp = _now_stamp()
    with safefs.open_dir(base, folder, create=True) as dfd:
        for n in range(1, 10_000):
            name = f"{stamp}-{n:04d}-{action}.md"  # the counter keeps same-instant copies in order
            try:
                fd = os.open(name, _CREATE_NEW, 0o600, dir_fd=dfd)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(OSError):
                os.fsync(dfd)
            _prune(dfd)
            return base / folder / name
    raise MemdirError(f"{base / folder}: too many versions kept at the same instant")


def keep(state_dir: Path, root: Path, rel_path: str, action: str) -> Path | None:
    """Keep the current bytes of `root/rel_path` before it changes; None when there is no file."""
    base, _ = _base(state_dir)
    try:
        data = safefs.read_bytes(base, safefs.rel_to(base, Path(root) / rel_path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return keep_bytes(state_dir, rel_path, data, action)


def _prune(dfd: int) -> None:
    """Bound the history, but never drop the oldest version: for a file a person wrote, that is the
    original they wrote (MEMORY.md gets a version on every save, and could otherwise lose it)."""
    names = sorted(n for n in os.listdir(dfd) if n.endswith(".md"))
    excess = max(0, len(names) - C.HISTORY_KEEP_PER_FILE)
    for old in names[1 : 1 + excess]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old, dir_fd=dfd)


def versions(state_dir: Path, rel_path: str) -> list[Version]:
    """Kept versions of `rel_path`, newest first."""
    base, state_rel = _base(state_dir)
    folder = _folder_rel(state_rel, rel_path)
    try:
        entries = safefs.listdir(base, folder)
    except safefs.UnsafePath:
        return []
    files = sorted((name for name, kind in entries if kind == "file"), reverse=True)
    out = []
    for i, name in enumerate(files, 1):
        stamp, _, rest = name.removesuffix(".md").partition("-")
        action = rest.partition("-")[2] or "changed"
        out.append(Version(i, base / folder / name, stamp, action, base, f"{folder}/{name}"))
    return out


def known_files(state_dir: Path) -> list[str]:
    """Relative paths that have history (including deleted memories)."""
    base, state_rel = _base(state_dir)
    try:
        entries = safefs.listdir(base, f"{state_rel}/{C.HISTORY_DIRNAME}")
    except safefs.UnsafePath:
        return []
    return sorted(name.replace("__", "/") for name, kind in entries if kind == "dir")


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
def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_authored(state_dir: Path) -> dict:
    base, state_rel = _base(state_dir)
    data = safefs.read_json(base, f"{state_rel}/{C.AUTHORED_NAME}", {})
    return data if isinstance(data, dict) else {}


def record_authored(state_dir: Path, rel_path: str, text: str) -> None:
    """Note that memdir's extractor wrote exactly `text` to `rel_path` (call under the folder lock)."""
    base, state_rel = _base(state_dir)
    data = _load_authored(state_dir)
    data[rel_path] = _digest(text.encode("utf-8"))
    safefs.write_text(base, f"{state_rel}/{C.AUTHORED_NAME}", json.dumps(data, indent=0, sort_keys=True))


def written_by_extractor(state_dir: Path, root: Path, rel_path: str) -> bool:
    """True when the file still holds the bytes memdir's extractor wrote (nobody edited it since)."""
    digest = _load_authored(state_dir).get(rel_path)
    if not digest:
        return False
    base, _ = _base(state_dir)
    try:
        return _digest(safefs.read_bytes(base, safefs.rel_to(base, Path(root) / rel_path))) == digest
    except OSError:
        return False
