"""The **Why:** and **How to apply:** sections of a memory body, edited in place.

A body memdir composed has each section on one line; a body a person wrote often has a section
that runs on for several lines (bullets under `**How to apply:**`) and other labelled sections
(`**What broke:**`). A section runs from its label to the next line that starts with a bold
`**Label:**`, or to the end; blank lines before the next label stay as the separator they were.
"""

from __future__ import annotations

import re

from memdir import constants as C

LABEL_LINE = re.compile(r"^\*\*[^*\n]{1,120}:\*\*")


def _span(lines: list[str], prefix: str) -> tuple[int, int] | None:
    """[start, end) of the section labelled `prefix`, without the blank lines that end it."""
    start = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if LABEL_LINE.match(lines[i])), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def section(body: str, prefix: str) -> str | None:
    """The whole section labelled `prefix` as written (label included), or None."""
    lines = body.splitlines()
    span = _span(lines, prefix)
    return "\n".join(lines[span[0] : span[1]]) if span else None


def without_sections(body: str, prefixes: tuple[str, ...] = (C.WHY_PREFIX, C.HOW_PREFIX)) -> str:
    """The body with the named sections cut out (what a memory's rule or fact is)."""
    lines = body.splitlines()
    for prefix in prefixes:
        span = _span(lines, prefix)
        if span:
            del lines[span[0] : span[1]]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def set_section(body: str, prefix: str, value: str) -> str:
    """`body` with the section labelled `prefix` replaced by `prefix value` (added when absent).

    An empty value is never written as an empty section: the body comes back unchanged.
    """
    if not value.strip():
        return body
    if value.lstrip(" \t").startswith("\n"):  # a label on its own line, bullets below: kept that way
        new = [prefix, *value.strip("\n").splitlines()]
    else:
        new = f"{prefix} {value.strip()}".splitlines()
    lines = body.rstrip("\n").splitlines()
    span = _span(lines, prefix)
    if span:
        lines[span[0] : span[1]] = new
    else:
        how = _span(lines, C.HOW_PREFIX) if prefix == C.WHY_PREFIX else None
        if how:  # Why reads before How
            lines[how[0] : how[0]] = new
        else:
            while lines and not lines[-1].strip():
                lines.pop()
            lines += ([""] if lines and not lines[-1].startswith(C.WHY_PREFIX) else []) + new
    return "\n".join(lines)
