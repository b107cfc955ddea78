"""`memdir demo`: a first run on a fresh machine, in a throwaway folder, with no API key."""

from __future__ import annotations

import tempfile
from pathlib import Path

from memdir.manual import remember
from memdir.store import MemoryStore


def run_demo(folder: Path | None = None) -> int:
    root = folder or Path(tempfile.mkdtemp(prefix="memdir-demo-")) / "memory"
    store = MemoryStore(root)
    print(f"memdir demo: throwaway memory folder {root}\n")
    saved = [
        remember(
            store,
            "Do not summarise completed work at the end of a reply.",
            type_="feedback",
            name="Terse replies",
            description="User does not want a recap at the end of each reply",
            why="the user reads the diff themselves",
            how="end replies when the work is done; no recap",
        ),
        remember(
            store,
            "Alice is a backend engineer, new to the React side of this repo.",
            type_="user",
            name="Alice's background",
        ),
    ]
    for result in saved:
        print(f"saved {result.rel_path}")
    print("\n$ memdir list")
    for h in store.scan().headers:
        print(f"{h.type:<9} {h.rel_path:<34} {h.description}")
    print(f"\n$ cat {store.index_path}")
    print(store.index(), end="")
    print(f"\n$ cat {saved[0].path}")
    print(saved[0].path.read_text(encoding="utf-8"), end="")
    return 0
