"""Which of Claude Code's writers changed which memory file, as its transcripts show it.

The git history commits changes nobody made through memdir as "another writer" (memdir/githistory.py).
When the session's transcript shows the write, the commit says who: a Write/Edit tool call on a memory
path in the main conversation is Claude Code's main agent; one in a subagent transcript
(`<session>/subagents/agent-*.jsonl`) is Claude Code's memory extractor or auto dream when the task it
was given says so, else "a Claude Code subagent". Nothing here is trusted for anything but the label.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.stages.extractor.platform_paths import local_path
from memdir.transcript import read_transcript

MAIN_AGENT = "Claude Code's main agent"
EXTRACTOR = "Claude Code's memory extractor"
DREAM = "Claude Code's auto dream"
SUBAGENT = "a Claude Code subagent"
_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
_MAX_SUBAGENT_FILES = 200
_MAX_LINE_BYTES = 4 * 1024 * 1024


def memory_writers(transcript: Path, memory_dir: Path) -> dict[str, str]:
    """memory-folder-relative path -> the writer the session's transcripts show wrote it (latest wins)."""
    found: dict[str, str] = {}
    try:
        read = read_transcript(transcript, max_bytes=C.TRANSCRIPT_READ_MAX_BYTES)  # what the Stop worker reads
    except (OSError, ValueError, MemdirError):
        return found
    root = memory_dir.resolve()
    for message in read.messages:
        for call in message.tool_uses():
            rel = _memory_path(call, message.cwd or read.cwd, root)
            if rel:
                found[rel] = MAIN_AGENT
    folder = transcript.with_suffix("") / "subagents"
    try:
        agents = sorted(folder.glob("agent-*.jsonl"))[:_MAX_SUBAGENT_FILES]
    except OSError:
        agents = []
    for agent in agents:
        found.update(_subagent_writes(agent, read.cwd, root))
    return found


def _memory_path(call: dict, cwd: str | None, root: Path) -> str | None:
    if call.get("name") not in _WRITE_TOOLS:
        return None
    arguments = call.get("input") or {}
    target = arguments.get("file_path") or arguments.get("notebook_path") if isinstance(arguments, dict) else None
    if not isinstance(target, str) or not target:
        return None
    local = local_path(target, cwd)
    if local is None:
        return None
    resolved = Path(local).resolve()
    if root not in resolved.parents:
        return None
    return resolved.relative_to(root).as_posix()


def _subagent_writes(agent: Path, cwd: str | None, root: Path) -> dict[str, str]:
    writes: dict[str, str] = {}
    who = SUBAGENT
    try:
        with _open_regular(agent) as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(_MAX_LINE_BYTES + 1), b"")):
                if len(raw) > _MAX_LINE_BYTES:  # an over-long line: skip the rest of it, never hold it
                    while raw and not raw.endswith(b"\n"):
                        raw = handle.readline(_MAX_LINE_BYTES)
                    continue
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                message = line.get("message") if isinstance(line, dict) else None
                if not isinstance(message, dict):
                    continue
                if number == 0:
                    who = _kind(message.get("content"))
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        rel = _memory_path(block, line.get("cwd") or cwd, root)
                        if rel:
                            writes[rel] = who
    except OSError:
        return {}
    return writes


def _open_regular(path: Path):
    """The file for reading, when it is a regular file: a FIFO opened plainly would block the worker."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return os.fdopen(fd, "rb")


def _kind(content: object) -> str:
    """What the subagent was asked to do, from its first message: a dream, a memory extraction, or other."""
    if isinstance(content, list):
        content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    text = str(content or "").lower()[:4000]
    if "dream" in text or "consolidat" in text:
        return DREAM
    if "memor" in text and ("extract" in text or "save" in text):
        return EXTRACTOR
    return SUBAGENT
