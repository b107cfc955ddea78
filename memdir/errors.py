"""The one exception type users see: a single line that names the problem and the fix."""


class MemdirError(Exception):
    """A user-facing error. `str(err)` is one line, shown without a traceback."""
