"""`memdir install|uninstall`: register memdir's hooks in Claude Code's settings, idempotently.

Foreign hooks are never touched. Install keeps a timestamped backup of the file it changes, and the
first one (`settings.json.memdir-original`) is the file as it was before memdir ever touched it:
when uninstall leaves exactly that content, it restores those bytes, so the file is byte-identical.

A settings.json that is a symlink (a dotfiles repo) is updated at its target: the link stays a link.
Settings that are not a regular UTF-8 JSON object, or whose `hooks` are not shaped as Claude Code
expects, are one-line errors; memdir never rewrites what it cannot read.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import stat
import sys
from datetime import datetime
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.fsio import atomic_write_text, read_text
from memdir.paths import config_home, project_root
from memdir.record import Record, field

EVENTS = {"Stop": "stop", "UserPromptSubmit": "prompt", "SessionStart": "session-start"}
TIMEOUT = {"Stop": 10, "UserPromptSubmit": 15, "SessionStart": 15}
# What a hook runs in the Python memdir is installed in. Not pip's `memdir` console script: it imports `re`
# before memdir runs (26 M instructions, two thirds of a bare start), which the Stop hook never needs and
# which delays the prompt hook's question to the warm server. `-P`: the session's cwd (its project) is never
# put on sys.path, so a project's own `memdir/` folder is not what runs, as with the console script. `-E`: nor
# through the user's PYTHONPATH, which Claude Code passes on: an empty entry (`:/x`, `/x:`) or `.` put the project
# first, and its `enum.py` or `encodings/` ran in the hook, the latter while Python started, before any line of the
# command could take the entry out again. The hook needs none of the PYTHON* variables (its children get the
# environment, PYTHONPATH sanitised, from memdir.prompt_scope.child_env). `-X utf8`: see C.PYTHON_UTF8_MODE.
ISOLATION = [*C.PYTHON_UTF8_MODE, "-E", "-P"]
LAUNCH = "from memdir.entry.main import launch; launch()"
# The console-script form (still written on Windows) and the launch form are both recognised as ours, so an
# older install is replaced, never duplicated.
OURS = re.compile(r"(?:(?:^|[/\\\s\"'])memdir(?:\.exe)?[\"']?|-P -c '(?:.*; )?" + re.escape(LAUNCH) + "')"
                  r" hook (?:stop|prompt|session-start)(?: --[\w-]+)*$")


class InstallResult(Record):
    settings_path: str
    changed: bool
    added: list[str] = field(default_factory=list)  # hook events
    removed: list[str] = field(default_factory=list)
    backup: str | None = None
    text: str = ""


def memdir_executable() -> str:
    """The absolute path of the installed `memdir` (hooks run without the user's PATH)."""
    if sys.executable:  # "" where Python cannot tell its own path: then only PATH can say
        beside = Path(sys.executable).with_name("memdir.exe" if sys.platform == "win32" else "memdir")
        if beside.exists():
            return str(beside)
    found = shutil.which("memdir")
    if found:
        return str(Path(found).resolve())
    raise MemdirError("cannot find the installed `memdir` executable; install memdir with pip first")


def settings_path(scope: str, cwd: Path | None = None) -> Path:
    if scope == "user":
        return config_home() / "settings.json"
    if scope == "project":
        return project_root(cwd or Path.cwd()) / ".claude" / "settings.json"
    raise MemdirError(f"--scope {scope!r} is unknown; use user or project")


MAX_SETTINGS_BYTES = 4 * 1024 * 1024


def _read_settings_text(path: Path) -> str | None:
    """The file's text (None when absent): a regular UTF-8 file, read bounded, or a one-line error."""
    if not path.exists():
        if path.is_symlink():
            raise MemdirError(f"{path}: a symlink to a missing file; fix the link or remove it")
        return None
    if not path.is_file():
        raise MemdirError(f"{path}: not a regular file; memdir only edits a settings.json file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise MemdirError(f"{path}: cannot read ({exc.strerror}); check its permissions") from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise MemdirError(f"{path}: over {MAX_SETTINGS_BYTES:,} bytes; not a settings file memdir will edit")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise MemdirError(f"{path}: not UTF-8 text; fix it by hand, memdir will not rewrite it") from None


def _load(path: Path) -> tuple[dict, str | None]:
    text = _read_settings_text(path)
    if text is None:
        return {}, None
    try:
        data = json.loads(text) if text.strip() else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" (line {exc.lineno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
        raise MemdirError(f"{path}: not valid JSON{where}; fix it by hand, memdir will not rewrite it") from None
    if not isinstance(data, dict):
        raise MemdirError(f"{path}: expected a JSON object at the top level; fix it by hand")
    if data.get("hooks") is None and "hooks" in data:
        data = {k: v for k, v in data.items() if k != "hooks"}  # "hooks": null holds nothing
    if not isinstance(data.get("hooks", {}), dict):
        kind = type(data["hooks"]).__name__
        raise MemdirError(f"{path}: 'hooks' is a {kind}, expected an object like "
                          '{"Stop": [...]}; fix it by hand')
    return data, text


def _write_target(path: Path) -> Path:
    """Where to write `path`: a symlinked settings.json (dotfiles) is updated at its target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _hooks_of(group: object) -> list:
    return group["hooks"] if isinstance(group, dict) and isinstance(group.get("hooks"), list) else []


def hook_argv(event_arg: str, python: str | None = None) -> list[str]:
    """What runs for `memdir hook <event_arg>` (prompt, stop, session-start), as an argument list.

    In this Python, without `site` (-S): reading the environment's .pth files and importing what they name
    took ~5 ms of every hook, a third of a bare start, to put two known folders on sys.path. The command
    puts them there itself: memdir's own (an editable install's project) and the site-packages its
    dependencies are in. Another Python (`python`) keeps `site`: its folders are not known here."""
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        paths = import_paths()
        if paths:
            # A folder gone (the environment made again for another Python, the project moved): `site` after all,
            # as the command without -S had it, rather than every event failing on `import memdir` until reinstalled.
            code = f"import os, sys; p = {paths!r}; sys.path += p; all(map(os.path.isdir, p)) or __import__('site').main(); "
            return [python or sys.executable, "-S", *ISOLATION, "-c", code + LAUNCH, "hook", event_arg]
    return [python or sys.executable, *ISOLATION, "-c", LAUNCH, "hook", event_arg]


def import_paths() -> list[str]:
    """The folders a hook needs on sys.path besides the standard library's: memdir's, then the
    site-packages this process has (where memdir's dependencies are), as `site` would have added them."""
    import site

    import memdir

    own = os.path.dirname(os.path.dirname(os.path.abspath(memdir.__file__)))
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    found = [own, *(p for p in (*site.getsitepackages(), user) if p and p in sys.path and os.path.isdir(p))]
    return list(dict.fromkeys(found))


def _command(python: str | None, event: str, extra: str) -> str:
    flags = extra if event == "SessionStart" else ""
    if sys.platform == "win32" or not (python or sys.executable):
        executable = memdir_executable()  # pip's .exe launcher: no POSIX shell quoting to rely on
        quoted = f'"{executable}"' if " " in executable else executable
        return f"{quoted} hook {EVENTS[event]}{flags}"
    return shlex.join(hook_argv(EVENTS[event], python)) + flags


def older_hooks(cwd: Path | None = None) -> list[tuple[str, str]]:
    """(settings file, command) of each memdir hook an older memdir registered through pip's `memdir` script:
    it still works, but pays for that script's imports on every event until `memdir install` runs again
    (doctor says so). Settings memdir cannot read are left to install's own one-line errors."""
    if sys.platform == "win32":
        return []  # where the script form is the current one
    return [(path, command) for path, command in _our_commands(cwd) if LAUNCH not in command]


def site_hooks(cwd: Path | None = None) -> list[tuple[str, str]]:
    """(settings file, command) of each memdir hook in the launch form for this very Python that still runs
    `site` (registered before hooks ran without it): it works, and pays ~3 ms per event that `memdir install`
    would save. A hook registered for another Python (--python) keeps `site` on purpose, and is not listed."""
    if sys.platform == "win32" or not sys.executable or not import_paths():
        return []
    mine = shlex.join([sys.executable, "-P", "-c", LAUNCH])
    return [(path, command) for path, command in _our_commands(cwd) if command.startswith(mine + " hook ")]


def exposed_hooks(cwd: Path | None = None) -> list[tuple[str, str]]:
    """(settings file, command) of each memdir hook in the launch form whose Python reads the PYTHON* variables (no -E:
    registered before 2026-11-27): a PYTHONPATH with an empty entry or `.` runs the project's own modules in it."""
    if sys.platform == "win32":
        return []
    return [(path, command) for path, command in _our_commands(cwd)
            if LAUNCH in command and " -E " not in command.split(" -c ", 1)[0] + " "]


def locale_hooks(cwd: Path | None = None) -> list[tuple[str, str]]:
    """(settings file, command) of each memdir hook in the launch form with -E but not UTF-8 mode (registered on
    2026-11-27): under a locale that is not UTF-8 it reads Claude Code's payload and file names as other letters, and
    -E ignores the PYTHONUTF8=1 that fixed it. One without -E is `exposed_hooks`' and says so already."""
    if sys.platform == "win32":
        return []
    flags = [(path, command, command.split(" -c ", 1)[0] + " ") for path, command in _our_commands(cwd)]
    return [(path, command) for path, command, head in flags
            if LAUNCH in command and " -E " in head and " -X utf8 " not in head]


def twice_registered(cwd: Path | None = None) -> list[tuple[str, list[str]]]:
    """(event, settings files) for each memdir event registered with different commands in the user's and the
    project's settings. Claude Code runs every matching hook at once and merges only identical commands: two
    prompt hooks each read the session's state before either writes it, and inject the same memories twice."""
    commands: dict[str, dict[str, str]] = {}  # event -> command -> settings file
    for path, command in _our_commands(cwd):
        event = re.search(r" hook (stop|prompt|session-start)\b", command)
        if event:
            commands.setdefault(event.group(1), {}).setdefault(command, path)
    return [(event, sorted(set(found.values()))) for event, found in commands.items()
            if len(set(found.values())) > 1]


def reinstall_command(path: str, cwd: Path | None = None) -> str:
    """The `memdir install` that registers the memdir hooks of the settings file `path` again as they are: its scope,
    and --no-index where its SessionStart hook has it (plain `memdir install` registers that hook without)."""
    scope = "" if path == str(settings_path("user")) else " --scope project"
    no_index = any(where == path and re.search(r" hook session-start(?: --[\w-]+)* --no-index\b", command)
                   for where, command in _our_commands(cwd))
    return f"memdir install{scope}{' --no-index' if no_index else ''}"


def _our_commands(cwd: Path | None) -> list[tuple[str, str]]:
    """(settings file, command) of every memdir hook in the user's and the project's settings."""
    found: list[tuple[str, str]] = []
    for scope in ("user", "project"):
        try:
            path = settings_path(scope, cwd)
            hooks = _load(path)[0].get("hooks")
        except (MemdirError, OSError):
            continue
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                found += [(str(path), h["command"]) for h in _hooks_of(group) if _is_ours(h)]
    return found


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(OURS.search(hook["command"]))


def _mode_of(path: Path) -> int | None:
    """The permissions the settings file keeps when memdir rewrites it (None: no file yet). A settings.json kept
    0600 (its `env` may hold an API key) stays private; a read-only one is refused, never replaced behind its mode."""
    try:
        mode = stat.S_IMODE(os.stat(_write_target(path)).st_mode)
    except FileNotFoundError:
        return None
    if os.name == "posix" and not mode & stat.S_IWUSR:
        raise MemdirError(f"{path}: read-only; make it writable (chmod u+w) or add the hooks by hand, "
                          "nothing was changed")
    return mode


def _write(path: Path, data: dict, original: str | None, dry_run: bool) -> str | None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        return None
    backup = None
    mode = _mode_of(path)
    pristine = path.with_name(path.name + ".memdir-original")
    if not pristine.exists():
        atomic_write_text(pristine, original or "", mode=0o600)  # "" records that there was no file at all
    if original is not None:
        backup = _keep_backup(path, original)
    atomic_write_text(_write_target(path), text, mode=mode)
    return str(backup) if backup else None


def _backup_stamp() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-%f")  # local time, as the user reads it


def _keep_backup(path: Path, original: str) -> Path:
    """Keep `original` as `settings.json.bak-<time>` under a name nobody has: the exclusive create
    never replaces an earlier backup, even for two changes in the same instant."""
    stamp = _backup_stamp()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for n in range(1, 1000):
        backup = path.with_name(f"{path.name}.bak-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            fd = os.open(backup, flags, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise MemdirError(f"{backup}: cannot keep a backup of {path.name} ({exc.strerror}); "
                              "check the folder's permissions, nothing was changed") from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(original)
            handle.flush()
            os.fsync(handle.fileno())
        return backup
    raise MemdirError(f"{path.parent}: too many settings backups named {path.name}.bak-{stamp}; "
                      "remove old ones, nothing was changed")


def install(scope: str = "user", *, dry_run: bool = False, cwd: Path | None = None, no_index: bool = False,
            python: str | None = None) -> InstallResult:
    """Register the hooks; `python`: the interpreter they run in (default: this one, memdir's own)."""
    path = settings_path(scope, cwd)
    data, original = _load(path)
    updated = copy.deepcopy(data)
    hooks = updated.setdefault("hooks", {})
    extra = " --no-index" if no_index else ""
    result = InstallResult(str(path), False)
    for event in EVENTS:
        wanted = _command(python, event, extra)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MemdirError(f"{path}: hooks.{event} is not a list; fix it by hand")
        ours = [h for g in groups for h in _hooks_of(g) if _is_ours(h)]
        if len(ours) == 1 and ours[0].get("command") == wanted:
            continue
        _register(groups, ours, wanted, TIMEOUT[event])
        result.added.append(event)
    if result.added:
        result.changed = True
        result.backup = _write(path, updated, original, dry_run)
    result.text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    return result


def _register(groups: list, ours: list[dict], wanted: str, timeout: int) -> None:
    """Register `wanted` for one event. An older memdir entry is rewritten where it is, so the user's own matcher (a
    SessionStart hook kept to `startup`) and a longer timeout stay; any other memdir entry (other path, flags or
    form) is removed rather than left to run as well: two memdir hooks would recall, and extract, twice per event."""
    kept = ours[0] if ours else None
    if kept is not None:
        kept.update(type="command", command=wanted)
        given = kept.get("timeout")
        longer = isinstance(given, (int, float)) and not isinstance(given, bool) and given > timeout
        kept["timeout"] = given if longer else timeout
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            group["hooks"] = [h for h in group["hooks"] if h is kept or not _is_ours(h)]
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [] and "matcher" not in g)]
    if kept is None:
        groups.append({"hooks": [{"type": "command", "command": wanted, "timeout": timeout}]})


def uninstall(scope: str = "user", *, dry_run: bool = False, cwd: Path | None = None) -> InstallResult:
    path = settings_path(scope, cwd)
    data, original = _load(path)
    result = InstallResult(str(path), False)
    if original is None:
        return result
    updated = copy.deepcopy(data)
    hooks = updated.get("hooks", {})
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                remaining = [h for h in group["hooks"] if not _is_ours(h)]
                if len(remaining) != len(group["hooks"]):
                    result.removed.append(event)
                    if not remaining:
                        continue  # the group held only memdir's hook: it was ours
                    group = {**group, "hooks": remaining}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not result.removed:
        return result
    if not hooks and _pristine(path, default={"hooks": {}}).get("hooks") is None:
        updated.pop("hooks", None)
    result.changed = True
    pristine_path = path.with_name(path.name + ".memdir-original")
    before = _pristine_text(pristine_path)
    if before is not None and _pristine(path, default={"hooks": None}) == updated:
        if not dry_run:
            mode = _mode_of(path)
            backup = _keep_backup(path, original)
            if before:
                atomic_write_text(_write_target(path), before, mode=mode)  # byte-identical to the file before memdir
            elif path.is_symlink():
                atomic_write_text(_write_target(path), "{}\n", mode=mode)  # keep the user's link; empty settings
            else:
                path.unlink()  # there was no settings file before memdir created it
            pristine_path.unlink()
            result.backup = str(backup)
    else:
        result.backup = _write(path, updated, original, dry_run)
    result.text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    return result


def _pristine_text(pristine: Path) -> str | None:
    """The saved original settings text, or None when absent or unusable (then it is not restored)."""
    try:
        text = read_text(pristine) if pristine.is_file() else None
    except (OSError, ValueError):
        return None
    if text:
        try:
            if not isinstance(json.loads(text), dict):
                return None
        except (ValueError, RecursionError):
            return None  # a corrupt backup is never restored over the live settings
    return text


def _pristine(path: Path, default: dict) -> dict:
    text = _pristine_text(path.with_name(path.name + ".memdir-original"))
    if text is None:
        return default
    data = json.loads(text or "{}")
    return {k: v for k, v in data.items() if not (k == "hooks" and v is None)}  # as _load reads it
