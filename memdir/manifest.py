"""Manifest lines (SPEC §4): how a memory is listed for a model choosing or updating memories.

Core, because both stages list memories: recall's selector and the extraction agent (which must
see what exists to update rather than duplicate).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from memdir import inert
from memdir.scan import Header

SHOWN = "%Y-%m-%dT%H:%M:%SZ"


def shown_time(h: Header) -> str:
    """The memory's time as a manifest line shows it: `2026-03-28T10:30:00Z`."""
    return time.strftime(SHOWN, time.gmtime(h.mtime))


def own_times(headers: list[Header]) -> dict[str, str]:
    """The time each memory says it was saved (its frontmatter's `modified` stamp, frontmatter_io.modified_of), as
    a manifest line shows a time, by rel_path; a memory with no readable stamp is not in it (its file's time shows).
    The file's time is the machine's clock: an eval replaying a March session stamps its memories in March
    (memdir.model.stamped_at), and a later chunk's list said "saved 2026-11-27" of one the session made."""
    from memdir import safefs
    from memdir.frontmatter_io import modified_of, parse_header
    from memdir.scan import HEAD_BYTES

    found = {}
    for h in headers:
        root = h.abs_path[: len(h.abs_path) - len(h.rel_path) - 1]
        try:
            head = safefs.read_bytes(root, h.rel_path, HEAD_BYTES, prefix=True).decode("utf-8-sig", errors="replace")
        except OSError:
            continue
        stamp = modified_of(parse_header(head).fields)
        if stamp is not None:
            found[h.rel_path] = stamp
    return found


def manifest_line(h: Header, when: str | None = None) -> str:
    """`- [type] path.md (2026-03-28T10:30:00Z): description`, type and description omitted when missing; the time
    is `when` (the memory's own, own_times) or else its file's."""
    stamp = when or shown_time(h)
    line = "- "
    if h.type:
        line += f"[{h.type}] "
    line += f"{inert.one_line(h.rel_path)} ({stamp})"
    if h.description:
        line += f": {h.description}"
    return line


def manifest(headers: list[Header], quotes: dict[str, str] | None = None, times: Mapping[str, str] | None = None) -> str:
    """One line per memory; under a memory `quotes` has, `  its text: "..."` (recall/llm_mentions.py). `times`: the
    memories' own saved times (own_times), shown in place of their files'."""
    times = times or {}
    if not quotes:
        return "\n".join(manifest_line(h, times.get(h.rel_path)) for h in headers)
    return "\n".join(manifest_line(h, times.get(h.rel_path)) + (f'\n  its text: "{inert.one_line(quotes[h.rel_path])}"'
                                                                if h.rel_path in quotes else "") for h in headers)
