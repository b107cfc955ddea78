"""Each eval run's own folder under --out: named from the second the run starts and what it runs, created
exclusively, with "-2", "-3", ... when another run took the name in the same second. Two runs of the same engine
started in one second shared one folder: the later one's misses, results and summary overwrote the earlier's.
A run that ends having written nothing there (it failed, or was stopped, before its first miss or summary) takes its
empty folder away again, so --out lists only runs with something to read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RUN_STAMP = "%Y%m%d-%H%M%S"  # local time, as the user reads it; sorts in order
_MOST_IN_ONE_SECOND = 1000  # runs of one name in one second before giving up: far more than any machine starts


def new_run_folder(parent: Path, label: str) -> Path:
    """A new, empty folder `parent/<stamp>-<label>[-N]` that no other run has: made here, never reused."""
    stamp = time.strftime(RUN_STAMP)
    parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, _MOST_IN_ONE_SECOND + 1):
        folder = parent / (f"{stamp}-{label}" + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir()  # exclusive: of two runs making the same name at once, one gets it, the other the next
        except FileExistsError:  # another run's folder (or anything else there: a file, a link, left alone)
            continue
        return folder
    raise FileExistsError(f"{parent}: {_MOST_IN_ONE_SECOND} runs named {stamp}-{label} already; pass another --out")


@contextmanager
def own_run_folder(parent: Path, label: str) -> Iterator[Path]:
    """`new_run_folder`, removed again on the way out if the run left it empty, however it ended. Only an empty
    folder goes (rmdir): a run's misses, or anything another hand put there, are kept."""
    folder = new_run_folder(parent, label)
    try:
        yield folder
    finally:
        try:
            folder.rmdir()  # fails, and keeps the folder, when anything is in it
        except OSError:
            pass
