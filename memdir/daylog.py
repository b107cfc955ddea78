"""Daily-log mode (SPEC §1, Claude Code's KAIROS): extraction appends to `logs/YYYY/MM/YYYY-MM-DD.md`
instead of keeping topic files live; `memdir dream` later distills the logs into typed memories.

Entry lines look like `- 14:05 [feedback] Don't mock the database — why: mocks hid a migration`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime
from pathlib import Path

from memdir import constants as C, safefs, safefs_write
from memdir.record import Record

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

MODE_ENV = "MEMDIR_MEMORY_MODE"
MODES = ("topics", "daily-log")
ENTRY = re.compile(r"^- (?:(?P<time>\d{2}:\d{2}) )?\[(?P<type>user|feedback|project|reference|forget)\] (?P<text>.+?)"
                   r"(?: — why: (?P<why>.+))?$")


def memory_mode(memory_dir: Path, env: Mapping[str, str] | None = None) -> str:
    """`$MEMDIR_MEMORY_MODE`, else `memory_mode` in `<memory>/.memdir/config.json`, else topics."""
    env = os.environ if env is None else env
    mode = env.get(MODE_ENV)
    if not mode:
        try:
            mode = json.loads(safefs.read_bytes(memory_dir, f"{C.STATE_DIRNAME}/config.json")).get("memory_mode")
        except (OSError, ValueError, AttributeError, TypeError):
            mode = None
    mode = (mode if isinstance(mode, str) and mode else "topics").strip().lower()
    return mode if mode in MODES else "topics"


def log_path(memory_dir: Path, day: date) -> Path:
    return memory_dir / C.LOGS_DIRNAME / f"{day:%Y}" / f"{day:%m}" / f"{day.isoformat()}.md"


def entry_line(kind: str, text: str, why: str | None = None, when: datetime | None = None) -> str:
    flat = " ".join(text.split())
    line = f"- {(when or datetime.now()):%H:%M} [{kind}] {flat}"
    return line + (f" — why: {' '.join(why.split())}" if why else "")


def append(memory_dir: Path, day: date, lines: list[str]) -> Path:
    """Append entry lines to the day's log (created with a heading), under the folder lock. A read-only
    write mode refuses (the log is in the memory folder)."""
    from memdir.write_mode import check_writable

    check_writable(memory_dir)
    path = log_path(memory_dir, day)
    rel = safefs.rel_to(memory_dir, path)
    with safefs_write.locked(memory_dir, f"{C.STATE_DIRNAME}/{C.LOCK_NAME}"):
        current = safefs.read_text_or(memory_dir, rel, f"# {day.isoformat()}\n\n")
        if not current.endswith("\n"):
            current += "\n"
        safefs_write.write_text(memory_dir, rel, current + "".join(line + "\n" for line in lines))
    return path


class LogEntry(Record):
    file: str
    line_no: int
    type: str
    text: str
    why: str | None


def entries(memory_dir: Path) -> list[LogEntry]:
    """Every parsable entry in every daily log, oldest first."""
    out: list[LogEntry] = []
    if not memory_dir.is_dir():
        return out
    logs = sorted(rel for rel, kind in safefs.walk(memory_dir, C.LOGS_DIRNAME) if kind == "file" and rel.endswith(".md"))
    for rel in logs:
        try:
            text = safefs.read_text(memory_dir, rel)
        except OSError:
            continue  # a symlinked, huge or non-UTF-8 log is skipped (and reported by `memdir doctor`)
        for n, line in enumerate(text.splitlines(), 1):
            match = ENTRY.match(line.strip())
            if match:
                out.append(LogEntry(rel, n, match.group("type"), match.group("text"), match.group("why")))
    return out
