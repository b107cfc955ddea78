"""Where memory lives (SPEC §1): config home, project key, the resolution chain, enablement.

Stdlib only: every hook resolves the folder, so this module must import in a few milliseconds
(git is read from disk rather than by spawning `git`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memdir import constants as C, light_json
from memdir.errors import MemdirError
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def config_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get(C.CONFIG_HOME_ENV, "").strip()
    return Path(override).expanduser() if override else Path.home() / ".claude"


def _djb2_base36(text: str) -> str:
    """Claude Code's `simpleHash`: djb2 over UTF-16 code units as a signed 32-bit int, |h| in base 36.

    Matching it exactly keeps over-long project keys identical to Claude Code's, so both tools
    share one folder.
    """
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    n = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def sanitize(path: str) -> str:
    """`/Users/alice/my-app` -> `-Users-alice-my-app`; over 200 chars: truncated plus a stable hash."""
    key = _NON_ALNUM.sub("-", path)
    if len(key) <= C.MAX_SANITIZED_LENGTH:
        return key
    return f"{key[: C.MAX_SANITIZED_LENGTH]}-{_djb2_base36(path)}"


def canonical_git_root(start: Path) -> Path | None:
    """The main worktree's root for `start`, so every `git worktree` of a repo maps to one folder.

    Reads `.git` directly: a directory means a normal checkout; a file (`gitdir: ...`) means a
    linked worktree or a submodule, told apart by the `commondir` file only worktrees have.
    """
    here = start.resolve()
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate
        if dot_git.is_file():
            try:
                first = dot_git.read_text(encoding="utf-8").splitlines()[0]
            except (OSError, IndexError, UnicodeDecodeError):
                return candidate
            if not first.startswith("gitdir:"):
                return candidate
            gitdir = Path(first.split(":", 1)[1].strip())
            if not gitdir.is_absolute():
                gitdir = (candidate / gitdir).resolve()
            commondir_file = gitdir / "commondir"
            if not commondir_file.is_file():
                return candidate  # a submodule: its own repository
            try:
                common = Path(commondir_file.read_text(encoding="utf-8").strip())
            except OSError:
                return candidate
            if not common.is_absolute():
                common = (gitdir / common).resolve()
            return common.parent if common.name == ".git" else candidate
    return None


def project_root(cwd: Path) -> Path:
    """The canonical git root, or the directory itself outside git."""
    return canonical_git_root(cwd) or cwd.resolve()


def validate_configured_path(raw: str, source: str) -> Path:
    """Accept an absolute folder (only a leading `~/` is expanded); anything else is a one-line error."""

    def reject(why: str) -> MemdirError:
        return MemdirError(f"{source}: {raw!r} {why}; set it to an absolute folder such as ~/notes/memory")

    if "\x00" in raw:
        raise reject("contains a NUL byte")
    value = raw.strip()
    if value in ("~", "~/") or value.startswith("~/..") or value == "~/.":
        raise reject("points at your home folder or above it")
    if value.startswith(("\\\\", "//")):
        raise reject("is a UNC/network path")
    if re.fullmatch(r"[A-Za-z]:[\\/]?", value):
        raise reject("is a bare drive root")
    if len(value) < 3:
        raise reject("is too short to be a memory folder")
    if value.startswith("~/"):
        value = str(Path.home() / value[2:])
    if not os.path.isabs(value):
        raise reject("is not an absolute path")
    resolved = Path(os.path.normpath(value))
    home = Path.home()
    if resolved == Path(resolved.anchor) or resolved in (home, *home.parents):
        raise reject("points at your home folder or a folder above it")
    return resolved


SETTINGS_MAX_BYTES = 1024 * 1024


def _read_small_file(path: Path) -> bytes:
    """A settings file's bytes: a regular file, opened non-blocking, read bounded. A repository's
    `.claude/settings.json` is untrusted: as a symlink to /dev/zero or a FIFO it must not hang a hook."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        os.set_blocking(fd, True)
        data = handle.read(SETTINGS_MAX_BYTES + 1)
    if len(data) > SETTINGS_MAX_BYTES:
        raise OSError(0, f"over {SETTINGS_MAX_BYTES:,} bytes")
    return data


def read_settings(path: Path) -> dict:
    """A Claude Code settings file, or {} when absent. Invalid JSON is a clear error, not a guess."""
    try:
        text = _read_small_file(path).decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise MemdirError(f"{path}: settings are not UTF-8 text; fix or remove the file") from None
    except OSError as exc:
        raise MemdirError(f"{path}: cannot read settings ({exc.strerror or exc}); check the file") from None
    try:
        data = light_json.loads(text) if text.strip() else {}  # json's C scanner: no `json` import for a hook
    except ValueError:
        import json  # only to say where the JSON breaks

        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise MemdirError(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg}); fix or remove it") from None
        raise MemdirError(f"{path}: invalid JSON; fix or remove it") from None
    if not isinstance(data, dict):
        raise MemdirError(f"{path}: settings must be a JSON object; fix or remove it")
    return data


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    return config_home(env) / "settings.json"


class Resolution(FrozenRecord):
    path: Path
    rule: str  # which rule chose the folder, for `memdir path`
    project_root: Path | None


def resolve_memory_dir(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Resolution:
    """SPEC §1 order: env override, then the USER settings' autoMemoryDirectory, then the default.

    A repo's own `.claude/settings.json` is never consulted for the location: a hostile repository
    could otherwise aim memory writes at ~/.ssh.
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    for name in C.PATH_OVERRIDE_ENVS:
        raw = env.get(name)
        if raw:
            return Resolution(validate_configured_path(raw, f"${name}"), f"environment variable {name}", None)
    settings_file = user_settings_path(env)
    configured = read_settings(settings_file).get(C.SETTINGS_DIR_KEY)
    if configured:
        if not isinstance(configured, str):
            raise MemdirError(f"{settings_file}: {C.SETTINGS_DIR_KEY} must be a string path")
        path = validate_configured_path(configured, f"{settings_file} {C.SETTINGS_DIR_KEY}")
        return Resolution(path, f"{C.SETTINGS_DIR_KEY} in {settings_file}", None)
    root = project_root(cwd)
    path = config_home(env) / "projects" / sanitize(str(root)) / "memory"
    in_git = canonical_git_root(cwd) is not None
    rule = f"default for {'git root' if in_git else 'folder'} {root}"
    return Resolution(path, rule, root)


class Enablement(FrozenRecord):
    enabled: bool
    reason: str


def memory_enabled(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Is Claude Code's NATIVE auto memory on for this project (as Claude Code decides it)?

    Off for a truthy CLAUDE_CODE_DISABLE_AUTO_MEMORY, bare mode, or autoMemoryEnabled: false. A
    defined falsy CLAUDE_CODE_DISABLE_AUTO_MEMORY forces it ON over every setting. Settings may
    come from the user or the repo: turning memory off is safe for a repo to ask for. Whether
    memdir itself runs is `memdir_enabled`: a user may turn native memory off to use memdir instead.
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    forced = _forced_by_env(env, C.DISABLE_ENV, "memory")
    if forced is not None:
        return forced
    if env.get(C.BARE_MODE_ENV, "").strip().lower() in C.TRUTHY:
        return Enablement(False, f"bare mode ({C.BARE_MODE_ENV})")
    root = project_root(cwd)
    for settings_file in (
        user_settings_path(env),
        root / ".claude" / "settings.json",
        root / ".claude" / "settings.local.json",
    ):
        try:
            settings = read_settings(settings_file)
        except MemdirError:
            continue  # unreadable settings must not silently disable memory
        if settings.get(C.SETTINGS_ENABLED_KEY) is False:
            return Enablement(False, f"{C.SETTINGS_ENABLED_KEY}: false in {settings_file}")
    return Enablement(True, "enabled by default")


def _forced_by_env(env, variable: str, what: str) -> Enablement | None:
    """A *_DISABLE variable decides alone when set: truthy turns `what` off, defined falsy forces it on."""
    if variable not in env:
        return None
    value = env[variable].strip().lower()
    if value in C.TRUTHY:
        return Enablement(False, f"{variable}={env[variable]}")
    if value in C.FALSY:
        return Enablement(True, f"{variable}={env[variable]} forces {what} on")
    return None


native_auto_memory = memory_enabled  # the name says what it answers; memory_enabled stays for callers


def memdir_enabled(memory_dir: Path | None = None, env: Mapping[str, str] | None = None) -> Enablement:
    """Does memdir itself run? Its own switch, independent of Claude Code's native auto memory.

    Off for a truthy MEMDIR_DISABLE, or `{"enabled": false}` in `<config-home>/memdir/config.json`
    (every project) or `<memory>/.memdir/config.json` (this folder). A defined falsy MEMDIR_DISABLE
    forces it on. Unreadable config files are ignored here (doctor reports them).
    """
    env = os.environ if env is None else env
    forced = _forced_by_env(env, C.MEMDIR_DISABLE_ENV, "memdir")
    if forced is not None:
        return forced
    candidates = [config_home(env) / "memdir" / C.MEMDIR_CONFIG_NAME]
    if memory_dir is not None:
        candidates.append(memory_dir / C.STATE_DIRNAME / C.MEMDIR_CONFIG_NAME)
    for config_file in candidates:
        try:
            config = light_json.loads(_read_small_file(config_file).decode("utf-8-sig"))
        except (OSError, ValueError):
            continue
        if isinstance(config, dict) and config.get("enabled") is False:
            return Enablement(False, f"enabled: false in {config_file}")
    return Enablement(True, "on (memdir's default)")


def config_value(config_file: Path, key: str) -> object:
    """One key of a memdir config.json, or None when the file is absent, unreadable or lacks it
    (bounded, non-blocking read: never hangs on a FIFO)."""
    try:
        config = light_json.loads(_read_small_file(config_file).decode("utf-8-sig"))
    except (OSError, ValueError):
        return None
    return config.get(key) if isinstance(config, dict) else None


def orchestkit_compat(memory_dir: Path | None, project_root: Path | None = None,
                      env: Mapping[str, str] | None = None) -> Enablement:
    """Has the user opted in to OrchestKit's layout (decision journal and graph in the repository's
    `.claude/memory/`)? Off by default: then nothing is written to, or read from, the repository."""
    return orchestkit_setting(memory_dir, project_root, env) or Enablement(False, "off (memdir's default)")


def orchestkit_setting(memory_dir: Path | None, project_root: Path | None = None,
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


def orchestkit_config_files(memory_dir: Path | None, project_root: Path | None = None,
                            env: Mapping[str, str] | None = None) -> list[Path]:
    """The config files that may hold `orchestkit_compat`, most specific first."""
    candidates = [config_home(env) / "memdir" / C.MEMDIR_CONFIG_NAME]
    if memory_dir is not None and not _inside(memory_dir, project_root):
        candidates.insert(0, memory_dir / C.STATE_DIRNAME / C.MEMDIR_CONFIG_NAME)
    return candidates


def _inside(path: Path, folder: Path | None) -> bool:
    if folder is None:
        return False
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def decisions_dir(memory_dir: Path, project_root: Path, *, compat: bool) -> Path:
    """The ONE place that says where the decision journal, graph, graph queue and their locks live:
    the memory folder's state dir, or with `compat` (OrchestKit's layout) the repository's `.claude/memory/`."""
    if compat:
        return Path(project_root) / C.ORCHESTKIT_DECISIONS_DIR
    return Path(memory_dir) / C.STATE_DIRNAME / C.DECISIONS_DIRNAME


def orchestkit_journal(project_root: Path) -> Path:
    """Where OrchestKit's layout keeps the journal in a repository (read only when the user opts in)."""
    return Path(project_root) / C.ORCHESTKIT_DECISIONS_DIR / C.DECISIONS_JOURNAL


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
