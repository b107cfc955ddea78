"""The memory tool's paths: `/memories/a/b.md` as a plain name inside the memory folder, or a refusal.

Hidden names and memdir's own `.memdir/` are never reachable; MEMORY.md (kept in sync by memdir),
team/ and logs/ are readable but not writable through the tool, in any case (`memory.md`, `Team/`: the same files
on a case-insensitive disk).
"""

from __future__ import annotations

from anthropic.lib.tools import ToolError

from memdir import constants as C
from memdir.naming import on_disk

ROOT = C.MEMORY_TOOL_ROOT
# Compared as a case-insensitive disk compares names (macOS): `memory.md` and `Team/` are these there.
_INDEX = on_disk(C.INDEX_NAME)
_READ_ONLY = {on_disk(name): name for name in (C.TEAM_DIRNAME, C.LOGS_DIRNAME)}


def tool_rel(path: str, *, write: bool = False, new: bool = False) -> str:
    """`/memories/a/b.md` -> `a/b.md`, refusing anything that is not a plain in-folder name. `new`: a name the
    tool is about to give a file (create, a rename's destination), which must also read as what it is."""
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise ToolError(f"Path must start with {ROOT}, got: {path}")
    parts = [p for p in path[len(ROOT):].split("/") if p]
    for part in parts:
        if part in (".", "..") or "\x00" in part or "\\" in part:
            raise ToolError(f"{path}: use plain names inside {ROOT}; '.', '..' and backslashes are refused")
    if parts and parts[0] == C.STATE_DIRNAME:
        raise ToolError(f"{path}: {C.STATE_DIRNAME}/ holds memdir's own state (history, locks) and is off limits")
    if any(p.startswith(".") for p in parts):
        raise ToolError(f"{path}: hidden names are reserved for memdir's own state")
    if write:
        if not parts:
            raise ToolError(f"{ROOT} itself cannot be changed; name a file inside it")
        if on_disk(parts[-1]) == _INDEX:
            raise ToolError(f"{path}: {C.INDEX_NAME} is the index memdir keeps in sync itself; edit the memories")
        if on_disk(parts[0]) in _READ_ONLY:
            raise ToolError(f"{path}: {_READ_ONLY[on_disk(parts[0])]}/ is read-only here (team memory and daily logs "
                            "have their own commands)")
    if new and not all(part.isprintable() for part in parts):
        # A line break, ESC, U+202E or a zero-width character in a file name: listings, MEMORY.md and terminals show
        # it escaped or reversed, so the index links a name that is not the file's and the user reads another one.
        raise ToolError(f"{shown(path)}: control, invisible and direction-changing characters are refused "
                        "in a memory's file name; use letters, digits, '-' and '_'")
    return "/".join(parts)


def shown(text: str) -> str:
    """`text` with every control, invisible and direction-changing character written out (`\\n`, `\\x1b`,
    `\\u202e`): seen, and inert."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _cut(line: str, cap: int) -> str:
    return line if len(line) <= cap else line[: cap - 1] + "…"


def shown_path(path: str) -> str:
    """A path as a success reply echoes it: escaped as a refusal is (`shown`) and bounded
    (C.MEMORY_TOOL_PATH_SHOWN_MAX_CHARS), so a planted name with a line break forges no line of the reply."""
    return _cut(shown(path), C.MEMORY_TOOL_PATH_SHOWN_MAX_CHARS)


def refusal_line(error: ToolError) -> str:
    """A refusal as the model gets it: one line, shown (a path may carry a line break and a forged instruction, or
    ESC sequences for whoever reads the transcript), and bounded (C.MEMORY_TOOL_REFUSAL_MAX_CHARS)."""
    return _cut(shown(str(error)), C.MEMORY_TOOL_REFUSAL_MAX_CHARS)
