"""The one inter-process lock on an open file, on POSIX and on native Windows.

POSIX: `fcntl.flock`, exclusive, on the whole file (as before). Native Windows has no fcntl: `msvcrt.locking` on one
byte at LOCK_OFFSET, far past anything a lock file holds. Windows' byte-range locks are mandatory, so a lock on
byte 0 would make a reader of the lock file's own bytes (the token store keeps a marker there) fail. Both are
released by the holder explicitly and by the system when the process dies, never left behind by a crash.

Stdlib only: the hooks take these locks.
"""

from __future__ import annotations

import errno
import os

LOCK_OFFSET = 1 << 30  # Windows: the byte locked; lock files never grow this far

try:
    import fcntl
except ImportError:  # native Windows
    fcntl = None  # type: ignore[assignment]


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on the open file `fd` without waiting: False when another holder has it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    return _windows_locking(fd, unlock=False)


def unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return
    _windows_locking(fd, unlock=True)


def _windows_locking(fd: int, *, unlock: bool) -> bool:
    import msvcrt

    where = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, LOCK_OFFSET, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_UNLCK if unlock else msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    except OSError as exc:
        if unlock or exc.errno not in (errno.EACCES, errno.EDEADLK):  # EDEADLOCK there: another handle holds it
            raise
        return False
    finally:
        os.lseek(fd, where, os.SEEK_SET)
    return True
