"""Crash-safe file primitives: atomic writes and an inter-process lock.

A crash at any point leaves either the old file or the new one, never a torn mix: content goes to
a temp file in the same folder, is fsynced, then renamed over the target. The lock is memdir.portalock's
(`fcntl` on POSIX, `msvcrt` on Windows; `filelock` cost ~50 ms to import, a third of the prompt hook's budget).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from memdir.constants import SAFE_READ_MAX_BYTES, TEMP_MARKER  # one place knows them


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically. `durable=False` skips the fsyncs: for caches and
    bookkeeping whose loss in a power cut costs nothing but a repeat (the rename stays atomic).
    `mode`: the new file's permissions, set before it takes the name (default 0644 less the umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}{TEMP_MARKER}{os.getpid()}-{os.urandom(4).hex()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode & 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None and hasattr(os, "fchmod"):  # exactly `mode`, whatever the umask (not on Windows)
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, durable: bool = True, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable, mode)


def is_temp_file(name: str) -> bool:
    """Is `name` (a file name, not a path) one of atomic_write_bytes' temp files?"""
    return name.startswith(".") and TEMP_MARKER in name


def folder_now(dfd: int) -> float:
    """Now on the clock of the file system holding the open folder `dfd`, which stamps the mtimes of the files in it:
    the folder's own mtime, set to the current time first (a network file system's server sets it by its clock, as
    it stamps files). A file's age read against this machine's clock is off by the two clocks' difference."""
    os.utime(dfd)
    return os.fstat(dfd).st_mtime


@contextlib.contextmanager
def locked(lock_path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive inter-process lock on `lock_path` (created if missing)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    from memdir.safefs_write import hold_lock

    with hold_lock(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644), str(lock_path), timeout):
        yield


@contextlib.contextmanager
def try_locked(lock_path: Path) -> Iterator[bool]:
    """Non-blocking variant: yields True while holding the lock, False when someone else holds it."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    from memdir.safefs_write import try_hold_lock

    with try_hold_lock(os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)) as got:
        yield got


def read_text(path: Path, max_bytes: int | None = None) -> str:
    """UTF-8 text with a BOM tolerated (editors on Windows add one). Bounded and FIFO-safe: only a
    regular file is read, never a symlink, and one over `max_bytes` (default: the safe read cap) is refused."""
    from memdir import safefs

    path = Path(path)
    data = safefs.read_bytes(path.parent, path.name, SAFE_READ_MAX_BYTES if max_bytes is None else max_bytes)
    return data.decode("utf-8-sig")
