"""Who wrote a memory, read from Claude Code's subagent transcripts (extractor/writers.py), when those
files are hostile: a FIFO named like a transcript must not block the Stop worker's commit forever."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hostile.conftest import TIMEOUT

SCRIPT = """
import sys
from pathlib import Path
from memdir.stages.extractor.writers import memory_writers
print(sorted(memory_writers(Path(sys.argv[1]), Path(sys.argv[2])).items()))
"""


def test_a_fifo_among_subagent_transcripts_is_skipped(memory, tmp_path, tally):
    session = tmp_path / "s1.jsonl"
    target = str(memory / "user_a.md")
    call = {"type": "tool_use", "name": "Write", "input": {"file_path": target, "content": "x"}}
    first = {"type": "user", "cwd": str(tmp_path), "message": {"role": "user", "content": "Save memories: extract them"}}
    second = {"type": "assistant", "cwd": str(tmp_path), "message": {"role": "assistant", "content": [call]}}
    session.write_text(json.dumps(first) + "\n")
    agents = tmp_path / "s1" / "subagents"
    agents.mkdir(parents=True)
    os.mkfifo(agents / "agent-0.jsonl")  # nobody ever writes to it: opening it for reading blocks
    (agents / "agent-1.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    tally.tried += 1
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(session), str(memory)], capture_output=True,
                              text=True, timeout=TIMEOUT / 3)
    except subprocess.TimeoutExpired:
        tally.hangs += 1
        tally.notes.append("hang: memory_writers opened a FIFO among the subagent transcripts")
        raise AssertionError("memory_writers hung on a FIFO") from None
    assert done.returncode == 0, done.stderr
    assert "user_a.md" in done.stdout and "memory extractor" in done.stdout  # the real one still read
    assert Path(agents / "agent-0.jsonl").exists()
