"""What the recall-cache tests share: the prompt hook run in-process prompt after prompt, and an edit the caches' stamps
cannot see."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from itertools import count
from pathlib import Path


def prompt_hook(cwd, prompt: str) -> Callable[[], str]:
    """A function that runs `memdir hook prompt` for `prompt` (a new session each time, so recall is never cut
    short) and returns what it printed. Each run starts without the process's rankers, as a new hook process does."""
    from memdir.entry.hooks import main as hook_main
    from memdir.stages.recall import manifest

    runs = count()

    def run() -> str:
        manifest._rankers.clear()
        payload = {"session_id": f"s{next(runs)}", "transcript_path": "/nope.jsonl", "cwd": str(cwd),
                   "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        out = io.StringIO()
        assert hook_main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
        return out.getvalue()

    return run


def same_size_same_mtime_edit(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (as many bytes) in the file and put its mtime back: only the content (and ctime)
    changed, which a cache keyed on size and mtime alone would miss."""
    assert len(old.encode()) == len(new.encode())
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def deploys_memory(tmp_path: Path, monkeypatch) -> Path:
    """A memory folder holding one project memory (deploys go out on Tuesdays via the release train), made this
    process's folder for the offline engine, with Claude Code's own memory off (so the hook loads no index)."""
    from memdir.model import Memory
    from memdir.store import MemoryStore

    memory = tmp_path / "memory"
    MemoryStore(memory).save(Memory(name="Deploys", description="Deploys go out on Tuesdays via the release train",
                                    type="project"))
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    return memory
