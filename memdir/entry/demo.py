"""`memdir demo`: the whole loop on an embedded sample session, offline, in a throwaway folder.

Extraction reads the sample Claude Code transcript shipped with memdir, saves typed memories, and
recall then picks the ones that matter for a new prompt — no API key, nothing outside the folder.
Without `--dir` the throwaway folder is removed at the end; a `--dir` that already holds memories
is refused, so the demo never writes over anyone's own memory.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from memdir.errors import MemdirError

SAMPLE = Path(__file__).with_name("samples") / "demo_session.jsonl"
DEMO_PROMPT = "write an integration test for the refund ledger"


def _refuse_if_used(folder: Path) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise MemdirError(f"{folder}: not a folder; give `memdir demo --dir` an empty or new folder")
    used = [p.name for p in folder.iterdir() if p.name != ".memdir"]
    if used:
        raise MemdirError(
            f"{folder} already holds {len(used)} file(s) (e.g. {sorted(used)[0]}); the demo only writes into an "
            "empty or new folder. Run `memdir demo` without --dir to use a throwaway one"
        )


def run_demo(folder: Path | None = None) -> int:
    from memdir.config import Settings
    from memdir.stages.extractor.run import extract_transcript
    from memdir.stages.recall.api import recall
    from memdir.store import MemoryStore

    throwaway = None
    if folder is None:
        throwaway = Path(tempfile.mkdtemp(prefix="memdir-demo-"))
        root = throwaway / "memory"
    else:
        _refuse_if_used(folder)
        root = folder
    try:
        settings = Settings(engine="offline")
        where = "throwaway memory folder (removed at the end)" if throwaway else "memory folder"
        print(f"memdir demo: offline engines, {where} {root}\n")
        print(f"$ memdir extract {SAMPLE.name}   (a sample Claude Code session)")
        result = extract_transcript(SAMPLE, root, settings=settings)
        for line in result.report_lines():
            print(f"  {line}")
        store = MemoryStore(root)
        print(f"\n$ cat {store.index_path.name}")
        print(store.index(), end="")
        print(f'\n$ memdir recall "{DEMO_PROMPT}"')
        recalled = recall(root, DEMO_PROMPT, settings=settings, record=False)
        print(recalled.context or "(nothing clearly applies)")
        if throwaway:
            print("\nEverything is plain markdown. Keep a copy with: memdir demo --dir ./memdir-demo")
        else:
            print(f"\nEverything is plain markdown: ls {root}")
    finally:
        if throwaway:
            shutil.rmtree(throwaway, ignore_errors=True)
    return 0
