"""MEMORY.md (SPEC §3): one `- [Title](file.md) — hook` line per memory, and its load cap.

Pure text functions; the store does the locking and writing. Lines that are not memory entries
(headings, notes a person wrote, OrchestKit's decision section) are kept as they are.
"""

from __future__ import annotations

import re

from memdir import constants as C, inert
from memdir.record import FrozenRecord  # not dataclasses: its import (inspect) is most of a session start

TYPE_CHECKING = False  # the session-start hook imports this module
if TYPE_CHECKING:
    from pathlib import Path

_ENTRY = re.compile(r"^\s*[-*]\s+\[(?P<title>[^\]]*)\]\((?P<file>[^)\s]+\.md)\)(?P<rest>.*)$")


def entry_line(title: str, rel_file: str, hook: str) -> str:
    """One index line, kept under INDEX_LINE_TARGET chars by shortening the hook, never the link."""
    title = inert.one_line(title).replace("[", "(").replace("]", ")")
    head = f"- [{title}]({inert.one_line(rel_file)})"  # a planted newline never starts a line of its own
    hook = " ".join(inert.one_line(hook).split())
    if not hook:
        return head
    room = C.INDEX_LINE_TARGET - len(head) - 3
    if room < 12:
        return head
    if len(hook) > room:
        hook = hook[: room - 1].rstrip() + "…"
    return f"{head} — {hook}"


def linkable(rel_file: str) -> bool:
    """Can MEMORY.md link this file? Not when its name holds a space, a `)`, a control character or
    bytes that are not UTF-8: its line would never be read back, and a fix would append it forever."""
    return inert.one_line(rel_file) == rel_file and entry_file(f"- [x]({rel_file})") == rel_file


def entry_file(line: str) -> str | None:
    match = _ENTRY.match(line)
    return match.group("file") if match else None


def linked_files(text: str) -> list[str]:
    return [f for f in (entry_file(line) for line in text.splitlines()) if f]


# The last line of an index that ran out of room: what Claude Code loads is the first INDEX_MAX_LINES lines and
# INDEX_MAX_CHARS characters, so a line past them is never seen; memdir stops adding lines there instead.
OVERFLOW_NOTE = (f"- More memories are not listed here: this index stays within what Claude Code loads "
                 f"({C.INDEX_MAX_LINES} lines, {C.INDEX_MAX_CHARS:,} characters). memdir recalls the others by "
                 "relevance; `memdir list` shows them all.")


def fits(lines: list[str]) -> bool:
    """Would Claude Code load all of these lines (SPEC §3)?"""
    return len(lines) <= C.INDEX_MAX_LINES and sum(len(line) + 1 for line in lines) - 1 <= C.INDEX_MAX_CHARS


def is_full(text: str) -> bool:
    """memdir has stopped adding entries: the overflow note is there."""
    return OVERFLOW_NOTE in text.splitlines()


def _without_note(lines: list[str]) -> list[str]:
    body = [line for line in lines if line != OVERFLOW_NOTE]
    while body and not body[-1].strip():
        body.pop()
    return body


def upsert(text: str, rel_file: str, line: str) -> str:
    """Replace the entry for `rel_file` in place, or append it while the index fits Claude Code's load
    cap (room is kept for the overflow note); past that, the note is added once and the entry is not."""
    lines = text.splitlines()
    for i, existing in enumerate(lines):
        if entry_file(existing) == rel_file:
            lines[i] = line
            return "\n".join(lines) + "\n"
    body = _without_note(lines)
    if fits([*body, line, OVERFLOW_NOTE]):
        grown = [*body, line, OVERFLOW_NOTE] if is_full(text) else [*body, line]
        return "\n".join(grown) + "\n"
    if not is_full(text) and fits([*body, OVERFLOW_NOTE]):
        return "\n".join([*body, OVERFLOW_NOTE]) + "\n"
    return text  # full already (or a hand-written index over the cap, which `doctor` reports)


def remove(text: str, rel_file: str) -> str:
    lines = [line for line in text.splitlines() if entry_file(line) != rel_file]
    return "\n".join(lines) + "\n" if lines else ""


class Merged(FrozenRecord):
    text: str
    added: list[str]
    removed: list[str]
    left_out: int = 0  # entries not listed (or no longer listed): past Claude Code's load cap


def _inside(rel_file: str) -> bool:
    return not (rel_file.startswith(("/", "~")) or "://" in rel_file or ".." in rel_file.split("/"))


def _trim_entries(lines: list[str]) -> tuple[list[str], int]:
    """`lines` with entry lines dropped from the end until they and the overflow note fit the load cap
    (a person's headings and notes are never dropped); how many were dropped."""
    count = len(lines) + 1
    chars = sum(len(line) + 1 for line in lines) + len(OVERFLOW_NOTE)
    drop: set[int] = set()
    for i in range(len(lines) - 1, -1, -1):
        if count <= C.INDEX_MAX_LINES and chars <= C.INDEX_MAX_CHARS:
            break
        if entry_file(lines[i]):
            drop.add(i)
            count, chars = count - 1, chars - len(lines[i]) - 1
    return [line for i, line in enumerate(lines) if i not in drop], len(drop)


def merge(text: str, entries: list[tuple[str, str]], exists) -> Merged:
    """`index --rebuild` without loss: every line a person wrote stays where it is (headings, notes,
    their own titles and hooks); entries whose in-folder file is gone (`exists(rel) is False`) are
    removed; the given `(rel_file, line)` entries missing from the index are appended in order.

    Within Claude Code's load cap: entry lines past it (an index an older memdir grew to one line per
    memory) are dropped from the end, missing entries are added while they fit, and the overflow
    note ends an index that could not list them all. The caller keeps the previous index in history.
    """
    kept: list[str] = []
    removed: list[str] = []
    present: set[str] = set()
    for line in _without_note(text.splitlines()):
        rel = entry_file(line)
        if rel is not None and _inside(rel) and not exists(rel):
            removed.append(rel)
            continue
        if rel is not None:
            present.add(rel)
        kept.append(line)
    kept, left_out = _trim_entries(kept)
    missing = [(rel, line) for rel, line in entries if rel not in present]
    if missing:
        while kept and not kept[-1].strip():
            kept.pop()
        if kept and entry_file(kept[-1]) is None:
            kept.append("")
    added: list[str] = []
    for rel, line in missing:
        if not fits([*kept, line, OVERFLOW_NOTE]):
            left_out += len(missing) - len(added)
            break
        kept.append(line)
        added.append(rel)
    if left_out and fits([*kept, OVERFLOW_NOTE]):
        kept.append(OVERFLOW_NOTE)
    out = "\n".join(kept) + "\n" if kept else ""
    return Merged(out, added, removed, left_out)


class CappedIndex(FrozenRecord):
    text: str
    by_lines: bool
    by_size: bool
    lines: int
    chars: int

    @property
    def truncated(self) -> bool:
        return self.by_lines or self.by_size


def cap(text: str, max_lines: int = C.INDEX_MAX_LINES, max_chars: int = C.INDEX_MAX_CHARS) -> CappedIndex:
    """What a session may load: the first `max_lines` lines, then at most `max_chars` cut at a newline."""
    all_lines = text.splitlines()
    kept = "\n".join(all_lines[:max_lines])
    by_lines = len(all_lines) > max_lines
    by_size = len(kept) > max_chars
    if by_size:
        cut = kept.rfind("\n", 0, max_chars)
        kept = kept[: cut if cut > 0 else max_chars]
    return CappedIndex(kept, by_lines, by_size, len(all_lines), len(text))


def load_for_context(text: str, max_lines: int = C.INDEX_MAX_LINES, max_chars: int = C.INDEX_MAX_CHARS, *,
                     cache_dir: Path | str | None = None) -> str:
    """The capped index, followed by the truncation warning when a limit was hit. `cache_dir`: where
    the rendered warning may be cached (memdir.template_cache), so a hook need not import jinja2."""
    capped = cap(text, max_lines, max_chars)
    if not capped.truncated:
        return capped.text
    from memdir.template_cache import render_slotted

    warning = render_slotted(
        "index_truncated.j2",
        slots={},
        cache_dir=cache_dir,
        index_name=C.INDEX_NAME,
        by_lines=capped.by_lines,
        by_size=capped.by_size,
        lines=capped.lines,
        chars=capped.chars,
        max_lines=max_lines,
        max_chars=max_chars,
    )
    return f"{capped.text}\n\n{warning}"
