"""Rendering recalled memories for the agent's context (SPEC §4): capped reads, age headers."""

from __future__ import annotations

from pathlib import Path

from memdir.ages import days_old
from memdir.scan import Header

MAX_LINES = 200
MAX_BYTES = 4096


def read_capped(path: Path, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES,
                rel_path: str | None = None) -> tuple[str, bool]:
    """The first `max_lines` lines / `max_bytes` bytes (cut at a character boundary), and whether cut.

    With `rel_path` (the file relative to its memory folder) the read never follows a symlink at any
    component below the folder, and a FIFO or device is refused rather than read.
    """
    from memdir import safefs

    path_s = str(path)
    rel = rel_path or path_s.rsplit("/", 1)[-1]
    root = path_s[: len(path_s) - len(rel) - 1] if path_s.endswith("/" + rel) else path_s.rsplit("/", 1)[0]
    try:
        data = safefs.read_bytes(root, rel, max_bytes + 1, prefix=True)
    except OSError as exc:
        return f"[memdir: not shown: {exc}]", True
    truncated = len(data) > max_bytes
    text = data[:max_bytes].decode("utf-8-sig", errors="ignore")
    lines = text.split("\n")
    if len(lines) > max_lines:
        text, truncated = "\n".join(lines[:max_lines]), True
    return text.rstrip("\n"), truncated


def render_memory(header: Header, now: float | None = None, cache_dir: Path | None = None) -> str:
    from prompts import render_slotted

    content, truncated = read_capped(header.path, rel_path=header.rel_path)
    return render_slotted(
        "recall_memory.j2",
        slots={"path": header.abs_path, "content": content},
        cache_dir=cache_dir,
        days=days_old(header.mtime, now),
        truncated=truncated,
        max_lines=MAX_LINES,
        max_bytes=MAX_BYTES,
    )


def render_all(headers: list[Header], now: float | None = None, cache_dir: Path | None = None) -> str:
    return "\n\n".join(render_memory(h, now, cache_dir) for h in headers)
