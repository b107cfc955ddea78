"""OrchestKit compatibility: the `## Recent Project Decisions` section of MEMORY.md (SPEC §8, seed 000).

Pure text functions; the caller holds the store lock and writes atomically. Entries are added newest
first right under the heading, skipped when the first 50 characters of the decision already appear in
MEMORY.md, and capped at 50 with the `_...older decisions archived..._` marker (the archived ones stay
in the journal and the graph). Every other line of MEMORY.md is left exactly where it was.
"""

from __future__ import annotations

from memdir import constants as C

LABELS = {"decision": "Decision", "preference": "Preference", "pattern": "Pattern"}


def entry_lines(kind: str, what: str, why: str | None, entities: list[str]) -> list[str]:
    lines = [f"- **[{LABELS.get(kind, 'Note')}]** {what.strip()}"]
    if why:
        lines.append(f"_(because: {why.strip()})_")
    if entities:
        lines.append(", ".join(f"`{e}`" for e in entities))
    return lines


def _is_entry_start(line: str) -> bool:
    return line.startswith("- **[") and "]**" in line


def _section_bounds(lines: list[str]) -> tuple[int, int] | None:
    """(heading index, end index exclusive) of the section, or None when MEMORY.md has none."""
    try:
        start = lines.index(C.RECENT_DECISIONS_HEADING)
    except ValueError:
        return None
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if line.startswith("#") or not line.strip():
            break
        if not (_is_entry_start(line) or line.startswith("_(because:") or line.startswith("`")
                or line == C.COMPAT_ARCHIVED_MARKER):
            break
        end += 1
    return start, end


def _split_entries(body: list[str]) -> tuple[list[list[str]], bool]:
    entries: list[list[str]] = []
    archived = False
    for line in body:
        if line == C.COMPAT_ARCHIVED_MARKER:
            archived = True
        elif _is_entry_start(line) or not entries:
            entries.append([line])
        else:
            entries[-1].append(line)
    return entries, archived


def add_entry(index_text: str, kind: str, what: str, why: str | None, entities: list[str]) -> tuple[str, bool]:
    """(new MEMORY.md text, whether it changed). The dedup looks at the first 50 chars within the section."""
    lines = index_text.splitlines()
    bounds = _section_bounds(lines)
    key = " ".join(what.split())[: C.COMPAT_DEDUP_CHARS]
    # Only the section is searched: memdir's own index line for the promoted memory carries the same words.
    if bounds and key and key in "\n".join(lines[bounds[0] : bounds[1]]):
        return index_text, False
    if bounds is None:
        while lines and not lines[-1].strip():
            lines.pop()
        prefix = [*lines, ""] if lines else []
        body, suffix = [], []
    else:
        section_start, end = bounds
        body, suffix = lines[section_start + 1 : end], lines[end:]
        prefix = lines[:section_start]
    entries, archived = _split_entries(body)
    entries.insert(0, entry_lines(kind, what, why, entities))
    if len(entries) > C.COMPAT_MAX_ENTRIES:
        entries = entries[: C.COMPAT_MAX_ENTRIES]
        archived = True
    section = [C.RECENT_DECISIONS_HEADING, *(line for entry in entries for line in entry)]
    if archived:
        section.append(C.COMPAT_ARCHIVED_MARKER)
    if suffix and suffix[0].strip():
        section.append("")  # keep the section apart from whatever followed it
    out = prefix + section + suffix
    return "\n".join(out) + "\n", True


def section_entries(index_text: str) -> list[str]:
    """The first line of each entry, newest first (for status and tests)."""
    lines = index_text.splitlines()
    bounds = _section_bounds(lines)
    if bounds is None:
        return []
    return [line for line in lines[bounds[0] + 1 : bounds[1]] if _is_entry_start(line)]
