"""MEMORY.md (SPEC §3): one `- [Title](file.md) — hook` line per memory, and its load cap.

Pure text functions; the store does the locking and writing. Lines that are not memory entries
(headings, notes a person wrote, OrchestKit's decision section) are kept as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir import constants as C, inert

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


def upsert(text: str, rel_file: str, line: str) -> str:
    """Replace the entry for `rel_file` in place, or append it."""
    lines = text.splitlines()
    for i, existing in enumerate(lines):
        if entry_file(existing) == rel_file:
            lines[i] = line
            break
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        lines.append(line)
    return "\n".join(lines) + "\n"


def remove(text: str, rel_file: str) -> str:
    lines = [line for line in text.splitlines() if entry_file(line) != rel_file]
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True)
class Merged:
    text: str
    added: list[str]
    removed: list[str]


def _inside(rel_file: str) -> bool:
    return not (rel_file.startswith(("/", "~")) or "://" in rel_file or ".." in rel_file.split("/"))


def merge(text: str, entries: list[tuple[str, str]], exists) -> Merged:
    """`index --rebuild` without loss: every line a person wrote stays where it is (headings, notes,
    their own titles and hooks); entries whose in-folder file is gone (`exists(rel) is False`) are
    removed; the given `(rel_file, line)` entries missing from the index are appended in order."""
    lines = text.splitlines()
    kept: list[str] = []
    removed: list[str] = []
    present: set[str] = set()
    for line in lines:
        rel = entry_file(line)
        if rel is not None and _inside(rel) and not exists(rel):
            removed.append(rel)
            continue
        if rel is not None:
            present.add(rel)
        kept.append(line)
    missing = [(rel, line) for rel, line in entries if rel not in present]
    if missing:
        while kept and not kept[-1].strip():
            kept.pop()
        if kept and entry_file(kept[-1]) is None:
            kept.append("")
        kept.extend(line for _, line in missing)
    out = "\n".join(kept) + "\n" if kept else ""
    return Merged(out, [rel for rel, _ in missing], removed)


@dataclass(frozen=True)
class CappedIndex:
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


def load_for_context(text: str, max_lines: int = C.INDEX_MAX_LINES, max_chars: int = C.INDEX_MAX_CHARS) -> str:
    """The capped index, followed by the truncation warning when a limit was hit."""
    capped = cap(text, max_lines, max_chars)
    if not capped.truncated:
        return capped.text
    from memdir.prompts import render

    warning = render(
        "index_truncated.j2",
        index_name=C.INDEX_NAME,
        by_lines=capped.by_lines,
        by_size=capped.by_size,
        lines=capped.lines,
        chars=capped.chars,
        max_lines=max_lines,
        max_chars=max_chars,
    )
    return f"{capped.text}\n\n{warning}"
