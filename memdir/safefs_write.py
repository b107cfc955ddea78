"""Changing a memory folder without following a symlink (issue 9: least privilege): files replaced atomically, log
lines appended, entries removed and moved, folders made, and the inter-process locks writers hold around those
changes. Opening and reading are memdir.safefs's, whose rule this module keeps: the folder's own path is trusted as
configured, everything inside it is walked from the folder's descriptor with O_NOFOLLOW.

Stdlib only and no pathlib: the hooks write their state and logs through this. Where descriptors cannot do that
(safefs.BY_DESCRIPTOR false: native Windows) every change is refused with one line (safefs.NO_WRITES), never made
through a followed link.
"""

from __future__ import annotations

import contextlib
import os
import stat

from memdir import constants as C, safefs
from memdir.errors import FolderBusy

TEMP_MARKER = C.TEMP_MARKER  # the same marker fsio uses, so doctor finds stale temps from either


def _writable() -> None:
    if not safefs.BY_DESCRIPTOR:  # looked up at each call: tests switch it off
        raise safefs.UnsafePath(safefs.NO_WRITES)


def _fsync_dir_fd(dfd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(dfd)


@contextlib.contextmanager
def _failures_named(root: str | os.PathLike, rel: str):
    """An OSError from a write names the file the user knows (`MEMORY.md`), not the temp file or
    descriptor-relative name the system call saw, so a disk-full or read-only error is one clear line."""
    try:
        yield
    except safefs.UnsafePath:
        raise
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.path.join(os.fspath(root), rel)) from exc


def write_bytes(root: str | os.PathLike, rel: str, data: bytes | bytearray, *, durable: bool = True) -> None:
    """Replace the file atomically (temp + fsync + rename), creating folders on the way.

    An existing symlink, FIFO or folder at the target is refused, never replaced or followed. A
    failure (disk full, read-only) leaves the old file whole and no temp file behind.
    """
    _writable()
    parent, name = safefs.parent_and_name(rel)
    with _failures_named(root, rel), safefs.open_dir(root, parent, create=True) as dfd:
        try:
            current = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current is not None and not stat.S_ISREG(current.st_mode):
            kind = safefs.kind_of(current.st_mode)
            if kind == "a symlink":
                raise safefs.symlink_refusal(rel)
            raise safefs.UnsafePath(f"{rel} is {kind}; memdir only writes regular files")
        temp = f".{name}{TEMP_MARKER}{os.getpid()}-{os.urandom(4).hex()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | safefs.NOFOLLOW | safefs.CLOEXEC, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dfd)
            raise
        if durable:
            _fsync_dir_fd(dfd)


def write_text(root: str | os.PathLike, rel: str, text: str, *, durable: bool = True) -> None:
    write_bytes(root, rel, text.encode("utf-8"), durable=durable)


def append_text(root: str | os.PathLike, rel: str, text: str) -> None:
    """Append to a log file (created when missing), never through a symlink."""
    _writable()
    parent, name = safefs.parent_and_name(rel)
    with _failures_named(root, rel):
        with safefs.open_dir(root, parent, create=True) as dfd:
            fd = safefs.open_file_at(dfd, name, rel, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "ab") as handle:
            handle.write(text.encode("utf-8"))


def unlink(root: str | os.PathLike, rel: str, missing_ok: bool = True) -> None:
    """Remove one entry (a symlink itself is removed, never its target)."""
    _writable()
    parent, name = safefs.parent_and_name(rel)
    try:
        with safefs.open_dir(root, parent) as dfd:
            os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        if not missing_ok:
            raise


def rename(root: str | os.PathLike, src_rel: str, dst_rel: str, *, create_dst_dir: bool = False) -> None:
    """Move an entry within the folder; refused when the source is not a regular file."""
    _writable()
    src_parent, src_name = safefs.parent_and_name(src_rel)
    dst_parent, dst_name = safefs.parent_and_name(dst_rel)
    with safefs.open_dir(root, src_parent) as sfd, safefs.open_dir(root, dst_parent, create=create_dst_dir) as dfd:
        mode = os.stat(src_name, dir_fd=sfd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):
            raise safefs.UnsafePath(f"{src_rel} is {safefs.kind_of(mode)}; memdir only moves regular files")
        try:
            target = os.stat(dst_name, dir_fd=dfd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            target = None
        if target is not None and not stat.S_ISREG(target):
            raise safefs.UnsafePath(f"{dst_rel} is {safefs.kind_of(target)}; memdir will not replace it")
        os.replace(src_name, dst_name, src_dir_fd=sfd, dst_dir_fd=dfd)


def mkdirs(root: str | os.PathLike, rel_dir: str) -> None:
    with safefs.open_dir(root, rel_dir, create=True):
        pass


@contextlib.contextmanager
def hold_lock(fd: int, shown: str, timeout: float = 30.0):
    """Hold an exclusive flock on the open descriptor `fd` (POSIX), waiting up to `timeout`; closes `fd`.

    The one lock loop: `locked` below opens without following symlinks, `memdir.fsio.locked` by path."""
    import fcntl
    import time

    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise FolderBusy(
                        f"{shown}: still locked after {timeout:.0f}s by another memdir process; retry later"
                    ) from None
                time.sleep(0.005)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_hold_lock(fd: int):
    """Non-blocking `hold_lock`: yields True while holding the lock, False when another process holds it."""
    import fcntl

    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(root: str | os.PathLike, rel: str, timeout: float = 30.0):
    """An exclusive inter-process lock on a lock file inside the folder, opened without following symlinks."""
    if os.name != "posix":  # Windows: no symlink attacks of this kind to defend against in the same way
        from pathlib import Path

        from memdir.fsio import locked as plain_locked

        with plain_locked(Path(os.fspath(root), *safefs.split_rel(rel)), timeout):
            yield
        return
    parent, name = safefs.parent_and_name(rel)
    with safefs.open_dir(root, parent, create=True) as dfd:
        fd = safefs.open_file_at(dfd, name, rel, os.O_RDWR | os.O_CREAT)
    with hold_lock(fd, rel, timeout):
        yield


@contextlib.contextmanager
def try_locked(root: str | os.PathLike, rel: str):
    """Non-blocking: yields True while holding the lock, False when another process holds it."""
    if os.name != "posix":  # Windows
        from pathlib import Path

        from memdir.fsio import try_locked as plain_try_locked

        with plain_try_locked(Path(os.fspath(root), *safefs.split_rel(rel))) as got:
            yield got
        return
    parent, name = safefs.parent_and_name(rel)
    with safefs.open_dir(root, parent, create=True) as dfd:
        fd = safefs.open_file_at(dfd, name, rel, os.O_RDWR | os.O_CREAT)
    with try_hold_lock(fd) as got:
        yield got
