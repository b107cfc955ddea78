"""Real user sentences for the decision-capture tests, as the transcript reader (memdir/transcript.py)
gives them: it, not these tests, decides what the user's own words are. The folder comes from the
`realdata` fixture (evals/realdata_path.py is the one locator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.transcript import read_transcript


def user_words_containing(realdata: Path, needle: str) -> str:
    """The user's words of the first message in the real main-session transcripts that contains `needle`."""
    for path in sorted((realdata / "claude-code-log").glob("*/*.jsonl")):
        if path.name.startswith("agent-") or needle not in path.read_text(encoding="utf-8", errors="replace"):
            continue
        for message in read_transcript(path).messages:
            words = message.user_text()
            if needle in words:
                return words
    pytest.fail(f"the transcript reader gives no user words containing {needle!r}")
