"""Memory folders memdir chose for a project before it keyed them as Claude Code does (2026-11-27), still holding
memories it no longer reads, for `memdir doctor`.

Three rules changed (memdir.locate): a linked worktree of a bare repository was keyed by its own folder, now by the
repository; a project folder named in decomposed Unicode (NFD, as macOS's HFS+ stores names) was keyed in that
spelling, now in NFC; `$CLAUDE_CONFIG_DIR` or `$HOME` was read with its `..` kept (past a symlink, another folder)
and not in NFC. Memories saved under an old key stay where they were, unseen: they are not lost, but nothing read
them. This module spells the old keys again, only for doctor: no hook imports it. A `.git` file naming another
repository's common dir (the forged case) is not followed back: that key was the other project's.
"""

from __future__ import annotations

import os
import shlex
import unicodedata
from collections.abc import Mapping

from memdir import constants as C, locate
from memdir.record import FrozenRecord
from memdir.scan import iter_memory_files


class OldFolder(FrozenRecord):
    path: str  # the folder memdir used to choose
    current: str  # the folder it chooses now
    missing: int  # its memories with no file of the same name in `current`
    differing: int  # its memories whose file of the same name in `current` holds other text
    why: str  # which rule changed, in words
    team: bool  # whether any of them is a team memory (team/, with its own MEMORY.md)

    def advice(self) -> str:
        """One line: how many memories, why memdir no longer reads them, and the command that brings them over."""
        if self.missing:
            old, new = shlex.quote(self.path), shlex.quote(self.current)
            fix = (f"copy them into {self.current} without overwriting anything: `mkdir -p {new} && cp -Rn {old}/* "
                   f"{new}/`, then run `memdir index --rebuild --dir {new}`")
            if self.team:
                fix += f" and `memdir index --rebuild --team --dir {new}`"
            if self.differing:
                fix += f" ({self.differing} more have a file of the same name there with other text: merge those by hand)"
            count = self.missing
        else:
            fix = f"a file of the same name in {self.current} holds other text for each: merge them by hand"
            count = self.differing
        return f"{count} {'memory' if count == 1 else 'memories'} memdir no longer reads: {self.why}; {fix}"


def old_folders(cwd: str, env: Mapping[str, str] | None = None) -> list[OldFolder]:
    """The folders the old rules chose for `cwd` that exist apart from today's and hold memories it lacks. None
    where a configured folder ($MEMDIR_PATH, autoMemoryDirectory) is used: no key chose it, then or now."""
    env = os.environ if env is None else env
    located = locate.resolve(cwd, env)
    if located.project_root is None:
        return []
    homes = [(locate.config_home(env), "")]
    old_home = _old_config_home(env)
    if old_home is not None and old_home != homes[0][0]:
        homes.append((old_home, f"the config home was read as {old_home}, {_home_change(old_home)}, where Claude "
                      f"Code reads {homes[0][0]}"))
    keys = _old_keys(cwd, located.project_root)
    current = os.path.realpath(located.path)
    seen = {current}
    found = []
    for home, home_why in homes:
        for key, key_why in keys:
            why = " and ".join(w for w in (home_why, key_why) if w)
            path = locate.join(home, "projects", key, "memory")
            real = os.path.realpath(path)
            if not why or real in seen or not os.path.isdir(path):
                continue
            seen.add(real)
            missing, differing, team = _compare(path, located.path)
            if missing or differing:
                found.append(OldFolder(path, located.path, missing, differing, why, team))
    return found


def _old_config_home(env: Mapping[str, str]) -> str | None:
    """The config home as memdir spelled it before: `..` kept, not in NFC."""
    override = env.get(C.CONFIG_HOME_ENV, "").strip()
    try:
        return locate.expanduser(override) if override else locate.join(locate.home(), ".claude")
    except RuntimeError:  # no home folder at all: today's rule raised first
        return None


def _home_change(old_home: str) -> str:
    kept = "with its `..` kept" if os.path.normpath(old_home) != old_home else ""
    nfd = "not in composed Unicode (NFC)" if locate.nfc(old_home) != old_home else ""
    return " and ".join(w for w in (kept, nfd) if w) or "spelled otherwise"


def _old_keys(cwd: str, root: str) -> list[tuple[str, str]]:
    """(project key, why memdir used it) for every key the old rules gave this project, today's first (why "")."""
    roots = [(root, "")]
    own = _bare_worktree_root(cwd)
    if own is not None and own != root:
        roots.append((own, f"this worktree of the bare repository {root} was keyed by its own folder {own}, where "
                      "Claude Code keys every worktree by the repository"))
    keys: list[tuple[str, str]] = []
    for path, why in roots:
        keys.append((locate.sanitize(locate.nfc(path)), why))
        for spelling in {path, unicodedata.normalize("NFD", path)}:
            if locate.sanitize(spelling) != locate.sanitize(locate.nfc(path)):
                nfd = (f"the project folder {locate.nfc(path)} was keyed in its decomposed spelling (NFD, as macOS "
                       "stores names), where Claude Code keys it in NFC")
                keys.append((locate.sanitize(spelling), " and ".join(w for w in (why, nfd) if w)))
    return keys


def _bare_worktree_root(cwd: str) -> str | None:
    """The worktree's own folder when `cwd` is in a linked worktree of a bare repository (the old key), else None."""
    candidate = locate.git_folder(cwd)
    if candidate is None or not os.path.isfile(os.path.join(candidate, ".git")):
        return None
    common = locate.worktree_repository(candidate)  # today's rule, the one place that reads a worktree's files
    return candidate if common is not None and os.path.basename(common) != ".git" else None


def _compare(old: str, new: str) -> tuple[int, int, bool]:
    """(memories in `old` with no file of that name in `new`, those whose file there holds other bytes, whether
    any of either is a team memory)."""
    missing = differing = 0
    team = False
    for path in iter_memory_files(old):
        rel = os.path.relpath(path, old)
        there = os.path.join(new, rel)
        if not os.path.lexists(there):
            missing += 1
        elif (mine := _bytes(path)) is None or _bytes(there) != mine:
            differing += 1
        else:
            continue
        team = team or rel.split(os.sep, 1)[0] == C.TEAM_DIRNAME
    return missing, differing, team


def _bytes(path: str) -> bytes | None:
    """A memory file's bytes, bounded, never through a symlink; None when it cannot be read."""
    if os.path.islink(path):
        return None
    try:
        return locate.read_small_file(path)
    except OSError:
        return None
