"""The one exception type users see: a single line that names the problem and the fix."""


class MemdirError(Exception):
    """A user-facing error. `str(err)` is one line, shown without a traceback."""


class FolderBusy(MemdirError):
    """Another memdir process held the folder's lock past the timeout. Nothing was written: a caller that
    keeps a cursor must not advance it, so the same messages are read again by the next run."""
