"""The prompt hook run in-process, prompt after prompt, as the recall-cache tests need it."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from itertools import count


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
