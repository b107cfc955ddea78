"""Manifest lines (SPEC §4): how a memory is listed for a model choosing or updating memories.

Core, because both stages list memories: recall's selector and the extraction agent (which must
see what exists to update rather than duplicate).
"""

from __future__ import annotations

import time

from memdir import inert
from memdir.scan import Header


def shown_time(h: Header) -> str:
    """The memory's time as a manifest line shows it: `2026-03-28T10:30:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(h.mtime))


def manifest_line(h: Header) -> str:
    """`- [type] path.md (2026-03-28T10:30:00Z): description`, type and description omitted when missing."""
    stamp = shown_time(h)
    line = "- "
    if h.type:
        line += f"[{h.type}] "
    line += f"{inert.one_line(h.rel_path)} ({stamp})"
    if h.description:
        line += f": {h.description}"
    return line


def manifest(headers: list[Header], quotes: dict[str, str] | None = None) -> str:
    """One line per memory; under a memory `quotes` has, `  its text: "..."` (recall/llm_mentions.py)."""
    if not quotes:
        return "\n".join(manifest_line(h) for h in headers)
    return "\n".join(manifest_line(h) + (f'\n  its text: "{inert.one_line(quotes[h.rel_path])}"'
                                         if h.rel_path in quotes else "") for h in headers)
