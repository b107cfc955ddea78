"""Each eval run's own folder under --out: named from the second the run starts and what it runs, created
exclusively, with "-2", "-3", ... when another run took the name in the same second. Two runs of the same engine
started in one second shared one folder: the later one's misses, results and summary overwrote the earlier's."""

from __future__ import annotations

import time
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
