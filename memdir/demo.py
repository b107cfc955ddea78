"""`memdir demo`: the whole loop on an embedded sample session, offline, in a throwaway folder.

Extraction reads the sample Claude Code transcript shipped with memdir, saves typed memories, and
recall then picks the ones that matter for a new prompt — no API key, nothing outside the folder.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

SAMPLE = Path(__file__).with_name("samples") / "demo_session.jsonl"
DEMO_PROMPT = "write an integration test for the refund ledger"


def run_demo(folder: Path | None = None) -> int:
    from extractor.run import extract_transcript
    from memdir.config import Settings
    from memdir.store import MemoryStore
    from recall.api import recall

    root = folder or Path(tempfile.mkdtemp(prefix="memdir-demo-")) / "memory"
    settings = Settings(engine="offline")
    print(f"memdir demo: offline engines, throwaway memory folder {root}\n")
    print(f"$ memdir extract {SAMPLE.name}   (a sample Claude Code session)")
    result = extract_transcript(SAMPLE, root, settings=settings)
    for rel in result.saved:
        print(f"  saved {rel}")
    store = MemoryStore(root)
    print(f"\n$ cat {store.index_path.name}")
    print(store.index(), end="")
    print(f'\n$ memdir recall "{DEMO_PROMPT}"')
    recalled = recall(root, DEMO_PROMPT, settings=settings, record=False)
    print(recalled.context or "(nothing clearly applies)")
    print(f"\nEverything is plain markdown: ls {root}")
    return 0
