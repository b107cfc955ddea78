"""Living beside Claude Code's native auto memory (SPEC §9): who else writes, and which form.

Claude Code 2.1.x loads MEMORY.md itself, tells its model how to save memories, and may run its
own background extractor. memdir must not do any of that twice. This module answers three
questions for the hooks, the worker, `install` and `doctor`:
- which Claude Code version wrote this project's transcripts (so memdir writes the same form);
- which parts run natively and which memdir adds (one plain sentence each);
- did someone other than memdir change the memory folder during a window of messages.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from memdir import constants as C
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

_VERSION = re.compile(rb'"version"\s*:\s*"(\d+\.\d+\.\d+[^"]*)"')
_TAIL_BYTES = 64 * 1024


def transcript_version(transcript: Path) -> str | None:
    """The Claude Code version in the last lines of a transcript (every line carries `version`)."""
    try:
        import stat

        fd = os.open(transcript, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not hang a hook
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with open(fd, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read(_TAIL_BYTES)
    except OSError:
        return None
    found = _VERSION.findall(tail)
    return found[-1].decode() if found else None


def installed_version(timeout: float = 5.0) -> str | None:
    """`claude --version` of the Claude Code on PATH, or None (not installed, hung, odd output)."""
    import shutil
    import subprocess

    binary = shutil.which("claude")
    if not binary:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"\s*(\d+\.\d+\.\d+)", out)
    return match.group(1) if match else None


_cached_form: dict[str, str] = {}


def preferred_form(memory_dir: Path) -> str:
    """The frontmatter form for NEW memory files here: what this project's Claude Code writes.

    `$MEMDIR_MEMORY_FORM` (current|legacy) wins; else the version in the newest transcript beside
    the folder; else `claude --version`; else the newest form. Existing files keep their own form.
    """
    from memdir.model import form_for_version

    forced = os.environ.get("MEMDIR_MEMORY_FORM", "").strip().lower()
    if forced in ("current", "legacy"):
        return forced
    key = str(memory_dir)
    if key not in _cached_form:
        version = None
        project = memory_dir.parent
        try:
            transcripts = sorted(project.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            transcripts = []
        for transcript in transcripts[:3]:
            version = transcript_version(transcript)
            if version:
                break
        _cached_form[key] = form_for_version(version or installed_version())
    return _cached_form[key]


class Coexistence(FrozenRecord):
    """native: Claude Code's auto memory on; memdir: memdir on; *_why: the reasons, for people."""

    native: bool
    native_why: str
    memdir: bool
    memdir_why: str

    def lines(self) -> list[str]:
        """Which parts run natively and which memdir adds, in plain words (install and doctor)."""
        if not self.memdir:
            return [f"memdir is off ({self.memdir_why}): its hooks do nothing here."]
        if self.native:
            return [
                f"Claude Code's auto memory is on ({self.native_why}): it loads MEMORY.md and tells the model "
                "how to save memories; memdir does not repeat either.",
                "memdir adds: the memories relevant to each prompt (with age and path), background extraction "
                "after each turn (skipped when Claude Code or the agent already wrote memory in that turn), "
                "version history, doctor and evals.",
            ]
        return [
            f"Claude Code's auto memory is off ({self.native_why}): memdir does all of it.",
            "memdir adds: memory instructions and MEMORY.md at session start, the memories relevant to each "
            "prompt, background extraction after each turn, version history, doctor and evals.",
        ]


def coexistence(cwd: Path | None = None, memory_dir: Path | None = None,
                env: Mapping[str, str] | None = None) -> Coexistence:
    from memdir.paths import memdir_enabled, memory_enabled

    native = memory_enabled(cwd, env)
    own = memdir_enabled(memory_dir, env)
    return Coexistence(native.enabled, native.reason, own.enabled, own.reason)


def _iso_seconds(stamp: object) -> float | None:
    """Epoch seconds of a transcript timestamp ("2026-11-22T17:07:10.123Z") or None."""
    if not isinstance(stamp, str) or not stamp:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _own_writes_since(memory_dir: Path, since: float) -> set[str]:
    """Files memdir's own extraction runs saved or deleted since `since` (from `.memdir/runs.jsonl`)."""
    own: set[str] = set()
    from memdir import safefs

    try:
        fd = safefs.open_file(memory_dir, f"{C.STATE_DIRNAME}/runs.jsonl")  # no symlink, no FIFO
        with open(fd, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 256 * 1024))
            lines = handle.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return own
    for line in lines:
        try:
            entry = json.loads(line)
            at = time.mktime(time.strptime(entry["at"], "%Y-%m-%dT%H:%M:%S"))
        except (ValueError, KeyError, TypeError):
            continue
        if at + 1 >= since:
            own.update(p for p in (entry.get("saved") or []) + (entry.get("deleted") or []) if isinstance(p, str))
    return own


def changed_by_others(memory_dir: Path, since: float, until: float | None = None) -> list[str]:
    """Memory files changed within [since, until] (epoch seconds) that memdir's own runs did not write."""
    from memdir.scan import iter_memory_files

    if not memory_dir.is_dir():
        return []
    changed = []
    prefix = len(str(memory_dir)) + 1
    for path in iter_memory_files(memory_dir):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if mtime >= since and (until is None or mtime <= until):
            changed.append(path[prefix:].replace(os.sep, "/"))
    own = _own_writes_since(memory_dir, since) if changed else set()
    return sorted(p for p in changed if p not in own)


def other_writer_in_window(memory_dir: Path, messages: list, cwd: Path | None) -> str | None:
    """Why to skip extracting `messages`, or None.

    With native auto memory on, a memory file that someone other than memdir (Claude Code's own
    background extractor, the agent through a tool memdir cannot see, the user) changed between the
    window's first message and shortly after its last one means the window was already covered.
    The upper bound keeps back-filling old transcripts (batch) from counting later edits.
    """
    if cwd is None or not cwd.is_dir() or not memory_enabled_for(cwd):
        return None
    stamps = [t for t in (_iso_seconds(getattr(m, "timestamp", None)) for m in messages) if t]
    if not stamps:
        return None
    changed = changed_by_others(memory_dir, min(stamps), max(stamps) + C.OTHER_WRITER_SLACK_SECONDS)
    if not changed:
        return None
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f"another writer (Claude Code's auto memory, the agent or the user) changed {shown} during these messages"


def memory_enabled_for(cwd: Path) -> bool:
    from memdir.paths import memory_enabled

    return memory_enabled(cwd).enabled
