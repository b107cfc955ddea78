"""`memdir install|uninstall`: register memdir's hooks in Claude Code's settings, idempotently.

Foreign hooks are never touched. This module decides which hook commands the settings hold (the command each event
runs, an older memdir's entry rewritten in place or removed) and which registered ones doctor should call outdated;
reading and writing the file itself (backups, the pre-memdir original restored byte-identical, a symlinked
settings.json updated at its target, one-line errors for what memdir cannot read) is memdir.entry.settings_file's.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from memdir import constants as C
from memdir.entry.settings_file import (
    edit_settings,
    load_settings,
    pristine,
    pristine_text,
    restore_pristine,
    write_settings,
)
from memdir.errors import MemdirError
from memdir.locate import project_settings_paths
from memdir.paths import config_home
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
        return Path(project_settings_paths(str(cwd or Path.cwd()))[0])
    raise MemdirError(f"--scope {scope!r} is unknown; use user or project")


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
    project's settings. Claude Code runs every matching hook at once and merges only identical commands: both run.
    Two prompt hooks each recall (only one says each memory: memdir.entry.prompt_claim), two Stop workers start,
    and two SessionStart hooks run (only one gives the session its start: memdir.entry.start_claim)."""
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
            hooks = load_settings(path)[0].get("hooks")
        except (MemdirError, OSError):
            continue
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                found += [(str(path), h["command"]) for h in _hooks_of(group) if _is_ours(h)]
    return found


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(OURS.search(hook["command"]))


def install(scope: str = "user", *, dry_run: bool = False, cwd: Path | None = None, no_index: bool = False,
            python: str | None = None) -> InstallResult:
    """Register the hooks; `python`: the interpreter they run in (default: this one, memdir's own)."""
    path = settings_path(scope, cwd)
    return edit_settings(path, lambda: _install(path, dry_run=dry_run, no_index=no_index, python=python), dry_run)


def _install(path: Path, *, dry_run: bool, no_index: bool, python: str | None) -> InstallResult:
    data, original = load_settings(path)
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
        result.backup = write_settings(path, updated, original, dry_run)
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
    return edit_settings(path, lambda: _uninstall(path, dry_run=dry_run), dry_run)


def _uninstall(path: Path, *, dry_run: bool) -> InstallResult:
    data, original = load_settings(path)
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
    if not hooks and pristine(path, default={"hooks": {}}).get("hooks") is None:
        updated.pop("hooks", None)
    result.changed = True
    before = pristine_text(path)
    if before is not None and pristine(path, default={"hooks": None}) == updated:
        if not dry_run:
            result.backup = restore_pristine(path, original, before)
    else:
        result.backup = write_settings(path, updated, original, dry_run)
    result.text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    return result
