"""`memdir install|uninstall`: register memdir's hooks in Claude Code's settings, idempotently.

Foreign hooks are never touched. Install keeps a timestamped backup of the file it changes, and the
first one (`settings.json.memdir-original`) is the file as it was before memdir ever touched it:
when uninstall leaves exactly that content, it restores those bytes, so the file is byte-identical.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
import time
from pathlib import Path

from memdir.errors import MemdirError
from memdir.fsio import atomic_write_text, read_text
from memdir.paths import config_home, project_root
from memdir.record import Record

EVENTS = {"Stop": "stop", "UserPromptSubmit": "prompt", "SessionStart": "session-start"}
TIMEOUT = {"Stop": 10, "UserPromptSubmit": 15, "SessionStart": 15}
OURS = re.compile(r"(?:^|[/\\\s\"'])memdir(?:\.exe)?[\"']? hook (?:stop|prompt|session-start)(?: --[\w-]+)*$")


class InstallResult(Record):
    __slots__ = ("settings_path", "changed", "added", "removed", "backup", "text")
    _defaults = {"added": list, "removed": list, "backup": None, "text": ""}


def memdir_executable() -> str:
    """The absolute path of the installed `memdir` (hooks run without the user's PATH)."""
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


def _load(path: Path) -> tuple[dict, str | None]:
    if not path.exists():
        return {}, None
    text = read_text(path)
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise MemdirError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); fix it by hand, memdir will not rewrite it"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise MemdirError(f"{path}: expected a JSON object with an object under 'hooks'; fix it by hand")
    return data, text


def _command(executable: str, event: str, extra: str) -> str:
    quoted = f'"{executable}"' if " " in executable else executable
    return f"{quoted} hook {EVENTS[event]}{extra if event == 'SessionStart' else ''}"


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(OURS.search(hook["command"]))


def _write(path: Path, data: dict, original: str | None, dry_run: bool) -> str | None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        return None
    backup = None
    pristine = path.with_name(path.name + ".memdir-original")
    if not pristine.exists():
        atomic_write_text(pristine, original or "")  # "" records that there was no file at all
    if original is not None:
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        atomic_write_text(backup, original)
    atomic_write_text(path, text)
    return str(backup) if backup else None


def install(scope: str = "user", *, dry_run: bool = False, cwd: Path | None = None, no_index: bool = False,
            executable: str | None = None) -> InstallResult:
    path = settings_path(scope, cwd)
    data, original = _load(path)
    updated = copy.deepcopy(data)
    hooks = updated.setdefault("hooks", {})
    exe = executable or memdir_executable()
    extra = " --no-index" if no_index else ""
    result = InstallResult(str(path), False)
    for event in EVENTS:
        wanted = _command(exe, event, extra)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MemdirError(f"{path}: hooks.{event} is not a list; fix it by hand")
        ours = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _is_ours(h)]
        if any(h.get("command") == wanted for h in ours):
            continue
        # A stale memdir entry (other path or flags) is replaced rather than duplicated.
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                group["hooks"] = [h for h in group["hooks"] if not _is_ours(h)]
        groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [] and "matcher" not in g)]
        groups.append({"hooks": [{"type": "command", "command": wanted, "timeout": TIMEOUT[event]}]})
        result.added.append(event)
    if result.added:
        result.changed = True
        result.backup = _write(path, updated, original, dry_run)
    result.text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    return result


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
    if not hooks and "hooks" not in _pristine(path, default={"hooks": None}):
        updated.pop("hooks", None)
    result.changed = True
    pristine_path = path.with_name(path.name + ".memdir-original")
    if pristine_path.exists() and json.loads(read_text(pristine_path) or "{}") == updated:
        if not dry_run:
            backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
            atomic_write_text(backup, original)
            before = read_text(pristine_path)
            if before:
                atomic_write_text(path, before)  # byte-identical to the file before memdir was installed
            else:
                path.unlink()  # there was no settings file before memdir created it
            pristine_path.unlink()
            result.backup = str(backup)
    else:
        result.backup = _write(path, updated, original, dry_run)
    result.text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    return result


def _pristine(path: Path, default: dict) -> dict:
    pristine = path.with_name(path.name + ".memdir-original")
    try:
        return json.loads(read_text(pristine) or "{}")
    except (OSError, ValueError):
        return default
