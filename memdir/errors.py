"""The one exception type users see: a single line that names the problem and the fix."""


class MemdirError(Exception):
    """A user-facing error. `str(err)` is one line, shown without a traceback."""


class FolderBusy(MemdirError):
    """Another memdir process held the folder's lock past the timeout. Nothing was written: a caller that
    keeps a cursor must not advance it, so the same messages are read again by the next run."""


def os_error_line(exc: OSError) -> str:
    """One line for a failed read or write the user can act on: what happened, to which file, the fix.

    Disk full, read-only file systems and permissions are the machine's state, not memdir's bug: they
    get words and a next step instead of a traceback. (A failed write leaves the old file whole:
    writes go to a temp file renamed into place.)
    """
    import errno
    import os

    where = f" ({os.fsdecode(exc.filename)})" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk is full{where}; free some space and run the command again"
    if exc.errno == errno.EROFS:
        return (f"the file system is read-only{where}; point memdir at a writable folder (--dir or MEMDIR_PATH) "
                "or remount it read-write")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied{where}; check the owner and mode of the memory folder (`ls -ld` it)"
    if exc.errno == errno.EFBIG:
        return f"the file size limit was reached{where} (ulimit -f); raise it and run the command again"
    reason = exc.strerror or type(exc).__name__
    return f"{reason}{where}"
