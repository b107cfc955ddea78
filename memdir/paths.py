"""Where memory lives (SPEC §1): config home, project key, the resolution chain, enablement, as `Path`s.

The resolution itself is memdir.locate's, in plain strings, which the hooks call without `pathlib`;
this module gives it to everything else as `Path`, and says where the rest of memdir's places are.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memdir import constants as C, enablement, locate
from memdir.enablement import Enablement
from memdir.errors import MemdirError
from memdir.locate import SETTINGS_MAX_BYTES as SETTINGS_MAX_BYTES, sanitize as sanitize
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

def config_home(env: Mapping[str, str] | None = None) -> Path:
    return Path(locate.config_home(env))


def canonical_git_root(start: Path) -> Path | None:
    """The main worktree's root for `start` (memdir.locate.canonical_git_root)."""
    root = locate.canonical_git_root(os.fspath(start))
    return Path(root) if root is not None else None


def project_root(cwd: Path) -> Path:
    """The canonical git root, or the directory itself outside git."""
    return Path(locate.project_root(os.fspath(cwd)))


def validate_configured_path(raw: str, source: str) -> Path:
    """Accept an absolute folder (only a leading `~/` is expanded); anything else is a one-line error."""
    return Path(locate.validate_configured_path(raw, source))


def read_settings(path: Path) -> dict:
    """A Claude Code settings file, or {} when absent. Invalid JSON is a clear error, not a guess."""
    return locate.read_settings(os.fspath(path))


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    return Path(locate.user_settings_path(env))


class Resolution(FrozenRecord):
    path: Path
    rule: str  # which rule chose the folder, for `memdir path`
    project_root: Path | None


def resolve_memory_dir(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Resolution:
    """SPEC §1 order: env override, then the USER settings' autoMemoryDirectory, then the default
    (memdir.locate.resolve, as a `Path`)."""
    found = locate.resolve(None if cwd is None else os.fspath(cwd), env)
    return Resolution(Path(found.path), found.rule, None if found.project_root is None else Path(found.project_root))


def memory_enabled(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Is Claude Code's NATIVE auto memory on for this project (as Claude Code decides it)? See
    memdir.enablement.memory_enabled."""
    return enablement.memory_enabled(None if cwd is None else os.fspath(cwd), env)


native_auto_memory = memory_enabled  # the name says what it answers; memory_enabled stays for callers


def memdir_enabled(memory_dir: Path | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Does memdir itself run? Its own switch, independent of Claude Code's native auto memory (see
    memdir.enablement.memdir_enabled)."""
    return enablement.memdir_enabled(None if memory_dir is None else os.fspath(memory_dir), env)


def config_value(config_file: Path, key: str) -> object:
    """One key of a memdir config.json, or None when the file is absent, unreadable or lacks it
    (bounded, non-blocking read: never hangs on a FIFO)."""
    return enablement.config_value(os.fspath(config_file), key)


def orchestkit_compat(memory_dir: Path | None, project_root: Path | None = None,
                      env: Mapping[str, str] | None = None) -> Enablement:
    """Has the user opted in to OrchestKit's layout? See memdir.enablement.orchestkit_compat."""
    return enablement.orchestkit_compat(_str(memory_dir), _str(project_root), env)


def orchestkit_setting(memory_dir: Path | None, project_root: Path | None = None,
                       env: Mapping[str, str] | None = None) -> Enablement | None:
    """The user's own choice about OrchestKit's layout, or None when they made none (memdir.enablement)."""
    return enablement.orchestkit_setting(_str(memory_dir), _str(project_root), env)


def orchestkit_config_files(memory_dir: Path | None, project_root: Path | None = None,
                            env: Mapping[str, str] | None = None) -> list[Path]:
    """The config files that may hold `orchestkit_compat`, most specific first."""
    return [Path(f) for f in enablement.orchestkit_config_files(_str(memory_dir), _str(project_root), env)]


def _str(path: Path | str | None) -> str | None:
    return None if path is None else os.fspath(path)


def decisions_dir(memory_dir: Path, project_root: Path, *, compat: bool) -> Path:
    """Where the decision journal, graph, graph queue and their locks live (memdir.locate.decisions_dir)."""
    return Path(locate.decisions_dir(memory_dir, project_root, compat=compat))


def orchestkit_journal(project_root: Path) -> Path:
    """Where OrchestKit's layout keeps the journal in a repository (read only when the user opts in)."""
    return Path(locate.orchestkit_journal(project_root))


def team_dir(memory_dir: Path) -> Path:
    return memory_dir / C.TEAM_DIRNAME


def safe_team_path(memory_dir: Path, key: str) -> Path:
    """A path inside team memory for `key`, refusing anything that could escape it."""
    import unicodedata
    from urllib.parse import unquote

    base = team_dir(memory_dir)

    def reject(why: str) -> MemdirError:
        return MemdirError(f"team memory key {key!r} {why}; use a plain relative name like notes/deploys.md")

    if "\x00" in key:
        raise reject("contains a NUL byte")
    decoded = key
    for _ in range(3):  # catch %252e%252e-style double encoding too
        decoded = unquote(decoded)
    for form in {key, decoded, unicodedata.normalize("NFKC", decoded)}:
        if "\\" in form:
            raise reject("contains a backslash")
        if form.startswith("/") or re.match(r"^[A-Za-z]:", form):
            raise reject("is an absolute path")
        if ".." in form.split("/"):
            raise reject("climbs out of the team folder with '..'")
    candidate = base / key
    real_base = base.resolve()
    real = candidate.resolve()
    if real != real_base and real_base not in real.parents:
        raise reject("resolves outside the team folder (symlink?)")
    return candidate


def agent_memory_dir(agent_type: str, scope: str, repo_root: Path, env: Mapping[str, str] | None = None) -> Path:
    """Per-agent memory (SPEC §1): scope user | project | local; `:` in the type becomes `-`."""
    safe_type = agent_type.replace(":", "-")
    if not re.fullmatch(r"[A-Za-z0-9._-]+", safe_type) or safe_type in (".", ".."):
        raise MemdirError(f"agent type {agent_type!r} is not a plain name; use letters, digits, '-', '_' or ':'")
    if scope == "user":
        return config_home(env) / "agent-memory" / safe_type
    if scope == "project":
        return repo_root / ".claude" / "agent-memory" / safe_type
    if scope == "local":
        return repo_root / ".claude" / "agent-memory-local" / safe_type
    raise MemdirError(f"agent memory scope {scope!r} is unknown; use user, project or local")
