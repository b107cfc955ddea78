"""What is turned on, in plain strings (SPEC §1): Claude Code's native auto memory, memdir itself, and
OrchestKit's layout for the decision journal. Where memory lives is memdir.locate; like it, this module runs
in every hook and uses `os.path` only (no pathlib: issue 26).
"""

from __future__ import annotations

import os

from memdir import constants as C, light_json
from memdir.errors import MemdirError
from memdir.locate import (
    clean,
    config_home,
    join,
    project_settings_paths,
    read_settings,
    read_small_file,
    user_settings_path,
)
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping


class Enablement(FrozenRecord):
    enabled: bool
    reason: str


def memory_enabled(cwd: str | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Is Claude Code's NATIVE auto memory on for this project (as Claude Code decides it)?

    Off for a truthy CLAUDE_CODE_DISABLE_AUTO_MEMORY, bare mode, or autoMemoryEnabled: false. A
    defined falsy CLAUDE_CODE_DISABLE_AUTO_MEMORY forces it ON over every setting. Settings may
    come from the user or the repo: turning memory off is safe for a repo to ask for. Whether
    memdir itself runs is `memdir_enabled`: a user may turn native memory off to use memdir instead.
    """
    env = os.environ if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    forced = forced_by_env(env, C.DISABLE_ENV, "memory")
    if forced is not None:
        return forced
    if env.get(C.BARE_MODE_ENV, "").strip().lower() in C.TRUTHY:
        return Enablement(False, f"bare mode ({C.BARE_MODE_ENV})")
    for settings_file in (user_settings_path(env), *project_settings_paths(cwd, env)):
        try:
            settings = read_settings(settings_file)
        except MemdirError:
            continue  # unreadable settings must not silently disable memory
        if settings.get(C.SETTINGS_ENABLED_KEY) is False:
            return Enablement(False, f"{C.SETTINGS_ENABLED_KEY}: false in {settings_file}")
    return Enablement(True, "enabled by default")


def forced_by_env(env, variable: str, what: str) -> Enablement | None:
    """A *_DISABLE variable decides alone when set: truthy turns `what` off, defined falsy forces it on. Set but
    empty is unset: Claude Code 2.1.328 leaves auto memory off with CLAUDE_CODE_DISABLE_AUTO_MEMORY= and
    `autoMemoryEnabled: false` (tests/realclient checks it)."""
    if variable not in env:
        return None
    value = env[variable].strip().lower()
    if value in C.TRUTHY:
        return Enablement(False, f"{variable}={env[variable]}")
    if value in C.FALSY:
        return Enablement(True, f"{variable}={env[variable]} forces {what} on")
    return None


def memdir_enabled(memory_dir: str | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Does memdir itself run? Its own switch, independent of Claude Code's native auto memory.

    Off for a truthy MEMDIR_DISABLE, or `{"enabled": false}` in `<config-home>/memdir/config.json`
    (every project) or `<memory>/.memdir/config.json` (this folder). A defined falsy MEMDIR_DISABLE
    forces it on. Unreadable config files are ignored here (doctor reports them).
    """
    env = os.environ if env is None else env
    forced = forced_by_env(env, C.MEMDIR_DISABLE_ENV, "memdir")
    if forced is not None:
        return forced
    candidates = [join(config_home(env), "memdir", C.MEMDIR_CONFIG_NAME)]
    if memory_dir is not None:
        candidates.append(os.path.join(memory_dir, C.STATE_DIRNAME, C.MEMDIR_CONFIG_NAME))
    for config_file in candidates:
        if config_value(config_file, "enabled") is False:
            return Enablement(False, f"enabled: false in {config_file}")
    return Enablement(True, "memdir's default")


def config_value(config_file: str, key: str) -> object:
    """One key of a memdir config.json, or None when the file is absent, unreadable or lacks it
    (bounded, non-blocking read: never hangs on a FIFO)."""
    try:
        config = light_json.loads(read_small_file(config_file).decode("utf-8-sig"))
    except (OSError, ValueError):
        return None
    return config.get(key) if isinstance(config, dict) else None


def orchestkit_compat(memory_dir: str | None, project_root: str | None = None,
                      env: Mapping[str, str] | None = None) -> Enablement:
    """Has the user opted in to OrchestKit's layout (decision journal and graph in the repository's
    `.claude/memory/`)? Off by default: then nothing is written to, or read from, the repository."""
    return orchestkit_setting(memory_dir, project_root, env) or Enablement(False, "memdir's default")


def orchestkit_setting(memory_dir: str | None, project_root: str | None = None,
                       env: Mapping[str, str] | None = None) -> Enablement | None:
    """The user's own choice about OrchestKit's layout, or None when they made none.

    MEMDIR_ORCHESTKIT_COMPAT decides when set; else `orchestkit_compat` in `<memory>/.memdir/config.json`
    (this project's folder), else in `<config-home>/memdir/config.json` (every project). A folder
    config inside the repository itself is ignored: a cloned repository cannot opt itself in.
    """
    env = os.environ if env is None else env
    raw = env.get(C.ORCHESTKIT_COMPAT_ENV, "").strip().lower()
    if raw in C.TRUTHY:
        return Enablement(True, f"{C.ORCHESTKIT_COMPAT_ENV}={env[C.ORCHESTKIT_COMPAT_ENV]}")
    if raw:
        return Enablement(False, f"{C.ORCHESTKIT_COMPAT_ENV}={env[C.ORCHESTKIT_COMPAT_ENV]}")
    for config_file in orchestkit_config_files(memory_dir, project_root, env):
        value = config_value(config_file, C.ORCHESTKIT_COMPAT_KEY)
        if isinstance(value, bool):
            return Enablement(value, f"{C.ORCHESTKIT_COMPAT_KEY}: {str(value).lower()} in {config_file}")
    return None


def orchestkit_config_files(memory_dir: str | None, project_root: str | None = None,
                            env: Mapping[str, str] | None = None) -> list[str]:
    """The config files that may hold `orchestkit_compat`, most specific first."""
    candidates = [join(config_home(env), "memdir", C.MEMDIR_CONFIG_NAME)]
    if memory_dir is not None and folder_config_counts(memory_dir, project_root, env):
        candidates.insert(0, os.path.join(clean(memory_dir), C.STATE_DIRNAME, C.MEMDIR_CONFIG_NAME))
    return candidates


def folder_config_counts(memory_dir: str, project_root: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether `<memory>/.memdir/config.json` may choose for the user (OrchestKit's layout, the sync remote).
    Not in a memory folder inside the project's repository: a cloned repository must not opt itself in or aim
    sync at a remote of its choosing. A folder under the user's own config home (~/.claude/projects/...) came
    from no repository, though, even when memdir runs in a folder above it (the home, a dotfiles repository
    or none): its config was ignored there for OrchestKit's layout and read for sync."""
    return not _inside(memory_dir, project_root) or _inside(memory_dir, config_home(env))


def _inside(path: str, folder: str | None) -> bool:
    if folder is None:
        return False
    real, real_folder = os.path.realpath(path), os.path.realpath(folder)
    return real == real_folder or real.startswith(os.path.join(real_folder, ""))
