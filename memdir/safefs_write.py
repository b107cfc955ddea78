"""Changing a memory folder without following a symlink (issue 9: least privilege): files replaced atomically, log
lines appended, entries removed and moved, folders made, and the inter-process locks writers hold around those
changes. Opening and reading are memdir.safefs's, whose rule this module keeps: the folder's own path is trusted as
configured, everything inside it is walked from the folder's descriptor with O_NOFOLLOW.

Stdlib only and no pathlib: the hooks write their state and logs through this. Where descriptors cannot do that
(safefs.BY_DESCRIPTOR false: native Windows) each change is made by path instead, every component lstat-checked
first (memdir.safefs_pathwrite), never through a followed link.
"""

from __future__ import annotations

import contextlib
import os
import stat

from memdir import constants as C, portalock, safefs
from memdir.errors import FolderBusy

TYPE_CHECKING = False  # typing's import (~2.5 ms) is on the prompt hook's path (memdir.notices imports this module)
if TYPE_CHECKING:
    from typing import BinaryIO

TEMP_MARKER = C.TEMP_MARKER  # the same marker fsio uses, so doctor finds stale temps from either


def by_path() -> bool:
    """Are changes made by path (memdir.safefs_pathwrite)? Looked up at each call: tests switch it."""
    return not safefs.BY_DESCRIPTOR


def temp_name(name: str) -> str:
    """The temp file a replacement of `name` is written to beside it (fsio's marker: doctor finds stale ones)."""
    return f".{name}{TEMP_MARKER}{os.getpid()}-{os.urandom(4).hex()}"


def fill(fd: int, data: bytes | bytearray, durable: bool) -> None:
    """Write `data` to the new file `fd` and close it; fsynced when `durable`."""
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())


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
    if by_path():
        from memdir import safefs_pathwrite

        with _failures_named(root, rel):
            safefs_pathwrite.write_bytes(root, rel, data, durable=durable)
        return
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
        temp = temp_name(name)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | safefs.NOFOLLOW | safefs.CLOEXEC, 0o644, dir_fd=dfd)
        try:
            fill(fd, data, durable)
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dfd)
            raise
        if durable:
            _fsync_dir_fd(dfd)


def write_text(root: str | os.PathLike, rel: str, text: str, *, durable: bool = True) -> None:
    write_bytes(root, rel, text.encode("utf-8"), durable=durable)


def append_text(root: str | os.PathLike, rel: str, text: str, *, rotate_at: int | None = None) -> None:
    """Append to a log file (created when missing), never through a symlink. `rotate_at`: once the file is past
    this many bytes, it becomes `<rel>.1` (replacing the one before) and the next line starts a new file: a log
    written on every prompt stays within twice that, and nothing a process is still appending is lost (an append
    through a descriptor opened before the move lands in the moved file)."""
    data = text.encode("utf-8")
    with _failures_named(root, rel), os.fdopen(_log_descriptor(root, rel), "ab") as handle:
        handle.write(data)
        handle.flush()
        if rotate_at is not None and os.fstat(handle.fileno()).st_size > rotate_at:
            _move_aside(root, rel, handle)


def _log_descriptor(root: str | os.PathLike, rel: str) -> int:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    if by_path():
        from memdir import safefs_pathwrite

        return safefs.only_name(safefs_pathwrite.open_file(root, rel, flags), rel)
    parent, name = safefs.parent_and_name(rel)
    with safefs.open_dir(root, parent, create=True) as dfd:
        return safefs.only_name(safefs.open_file_at(dfd, name, rel, flags), rel)


def _move_aside(root: str | os.PathLike, rel: str, handle: BinaryIO) -> None:
    """`rel` renamed to `<rel>.1`, once: under the lock on the file this process appended to, and only while `rel`
    still names that file. Two processes past the cap at once both renamed: the second found no file (an error
    after its line was written), or moved the new file the first had just started over the full one it moved
    aside, losing that one's lines."""
    written = os.fstat(handle.fileno())
    if portalock.fcntl is None:  # native Windows cannot rename a file open here: closed first, checked, not locked
        handle.close()
        _rename_if(root, rel, written)
    elif portalock.try_lock(handle.fileno()):  # taken: another process holding this file is moving it now
        try:
            _rename_if(root, rel, written)
        finally:
            portalock.unlock(handle.fileno())


def _rename_if(root: str | os.PathLike, rel: str, written: os.stat_result) -> None:
    now = safefs.lstat(root, rel)
    if now is not None and (now.st_ino, now.st_dev) == (written.st_ino, written.st_dev):
        # A link, folder or FIFO planted at <rel>.1 is left as it is (doctor names a link) and so is the log: the
        # line is written, and refusing the move is no failure of the run that wrote it (every extraction past the
        # cap ended in "runs.jsonl.1 is a folder; memdir will not replace it" after saving its memories).
        with contextlib.suppress(safefs.UnsafePath):
            rename(root, rel, rel + ".1")


def unlink(root: str | os.PathLike, rel: str, missing_ok: bool = True) -> None:
    """Remove one entry (a symlink itself is removed, never its target)."""
    parent, name = safefs.parent_and_name(rel)
    try:
        if by_path():
            from memdir import safefs_pathwrite

            safefs_pathwrite.unlink(root, rel)
            return
        with safefs.open_dir(root, parent) as dfd:
            os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        if not missing_ok:
            raise


def rename(root: str | os.PathLike, src_rel: str, dst_rel: str, *, create_dst_dir: bool = False) -> None:
    """Move an entry within the folder; refused when the source is not a regular file."""
    if by_path():
        from memdir import safefs_pathwrite

        safefs_pathwrite.rename(root, src_rel, dst_rel, create_dst_dir=create_dst_dir)
        return
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


def rmdir(root: str | os.PathLike, rel_dir: str) -> None:
    """Remove one empty folder (OSError when it is not empty, or not a folder)."""
    if by_path():
        from memdir import safefs_pathwrite

        safefs_pathwrite.rmdir(root, rel_dir)
        return
    parent, name = safefs.parent_and_name(rel_dir)
    with safefs.open_dir(root, parent) as dfd:
        os.rmdir(name, dir_fd=dfd)


def move_folder(root: str | os.PathLike, src_rel: str, dst_name: str) -> None:
    """Rename folder `src_rel` to `dst_name` beside it (refused when the source is a link; the target must not be
    a folder with entries)."""
    parent, name = safefs.parent_and_name(src_rel)
    if by_path():
        from memdir import safefs_pathwrite

        safefs_pathwrite.move_folder(root, src_rel, f"{parent}/{dst_name}" if parent else dst_name)
        return
    with safefs.open_dir(root, parent) as dfd:
        os.rename(name, dst_name, src_dir_fd=dfd, dst_dir_fd=dfd)


def folder_now(root: str | os.PathLike, rel_dir: str) -> float:
    """Now on the clock of the file system holding folder `rel_dir` (memdir.fsio.folder_now), on either backend."""
    if by_path():
        from memdir import safefs_paths

        path = safefs_paths.folder(root, rel_dir)
        os.utime(path)
        return os.lstat(path).st_mtime
    from memdir.fsio import folder_now as now_at

    with safefs.open_dir(root, rel_dir) as dfd:
        return now_at(dfd)


def mkdirs(root: str | os.PathLike, rel_dir: str) -> None:
    if by_path():
        from memdir import safefs_pathwrite

        safefs_pathwrite.mkdirs(root, rel_dir)
        return
    with safefs.open_dir(root, rel_dir, create=True):
        pass


@contextlib.contextmanager
def hold_lock(fd: int, shown: str, timeout: float = 30.0):
    """Hold the exclusive lock (memdir.portalock) on the open descriptor `fd`, waiting up to `timeout`; closes `fd`.

    The one lock loop: `locked` below opens without following symlinks, `memdir.fsio.locked` by path."""
    import time

    try:
        deadline = time.monotonic() + timeout
        while not portalock.try_lock(fd):
            if time.monotonic() > deadline:
                raise FolderBusy(f"{shown}: still locked after {timeout:.0f}s by another memdir process; retry later")
            time.sleep(0.005)
        try:
            yield
        finally:
            portalock.unlock(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_hold_lock(fd: int):
    """Non-blocking `hold_lock`: yields True while holding the lock, False when another process holds it."""
    try:
        if not portalock.try_lock(fd):
            yield False
            return
        try:
            yield True
        finally:
            portalock.unlock(fd)
    finally:
        os.close(fd)


def open_created(root: str | os.PathLike, rel: str) -> int:
    """The regular file `rel` (made when missing, with its folders) opened read-write, never through a link: a lock
    file, a cache appended to in place. The caller closes it."""
    if by_path():
        from memdir import safefs_pathwrite

        return safefs_pathwrite.open_file(root, rel, os.O_RDWR | os.O_CREAT)
    parent, name = safefs.parent_and_name(rel)
    with safefs.open_dir(root, parent, create=True) as dfd:
        return safefs.open_file_at(dfd, name, rel, os.O_RDWR | os.O_CREAT)


@contextlib.contextmanager
def locked(root: str | os.PathLike, rel: str, timeout: float = 30.0):
    """An exclusive inter-process lock on a lock file inside the folder, opened without following symlinks."""
    with hold_lock(open_created(root, rel), rel, timeout):
        yield


@contextlib.contextmanager
def try_locked(root: str | os.PathLike, rel: str):
    """Non-blocking: yields True while holding the lock, False when another process holds it."""
    with try_hold_lock(open_created(root, rel)) as got:
        yield got
