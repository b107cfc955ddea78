"""Claude Code's settings.json as `memdir install|uninstall` edits it: read, written, restored.

Read bounded and strictly: a file that is not a regular UTF-8 JSON object, or whose `hooks` are not shaped as Claude
Code expects, is a one-line error, so memdir never rewrites what it cannot read. Every write keeps a timestamped
backup, and the first write keeps `settings.json.memdir-original`, the file as it was before memdir ever touched it,
which uninstall restores byte for byte. A symlinked settings.json (a dotfiles repo) is written at its target, and the
file keeps its permissions. Which hooks go in the file is memdir.entry.install's job, not this one's.

An edit is read, change, write: `edit_settings` runs it under one lock for every memdir install and uninstall, and
the file is written only while it still holds what was read; an edit made in between (Claude Code's own, or one by
hand) makes the edit start again from a fresh read instead of being overwritten.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.fsio import atomic_write_text, read_text
from memdir.paths import config_home

T = TypeVar("T")

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


class _Unwritable(ValueError):
    """A value json reads but could not write back as JSON."""


def _not_json(word: str) -> float:
    raise _Unwritable(f"{word} is not JSON (Claude Code cannot read it either)")


def _finite(text: str) -> float:
    """A JSON number as json reads it, refused when it overflows: `1e999` would be written back as `Infinity`,
    which is not JSON, and Claude Code could then read no setting of the file at all."""
    value = float(text)
    if not math.isfinite(value):
        raise _Unwritable(f"the number {text[:40]} is too large to write back as JSON")
    return value


def load_settings(path: Path) -> tuple[dict, str | None]:
    """(the settings as a dict, the file's text or None when there is no file), or a one-line error."""
    text = _read_settings_text(path)
    if text is None:
        return {}, None
    try:
        data = json.loads(text, parse_constant=_not_json, parse_float=_finite) if text.strip() else {}
    except _Unwritable as exc:
        raise MemdirError(f"{path}: {exc}; fix it by hand, memdir will not rewrite it") from None
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


class SettingsChanged(Exception):
    """The settings file no longer holds the text its edit was made from: start again from a fresh read."""


def _still(path: Path, original: str | None) -> None:
    """Raise SettingsChanged unless the file still holds `original` (None: still no file)."""
    if _read_settings_text(path) != original:
        raise SettingsChanged


def edit_settings(path: Path, edit: Callable[[], T], dry_run: bool = False) -> T:
    """Run `edit` (read `path`, change it, write it) under the settings lock, again from a fresh read each time
    the file changed between its read and its write; one clear line when it keeps changing."""
    if dry_run:
        return edit()  # writes nothing, so it cannot overwrite anyone's edit
    load_settings(path)  # a file memdir refuses is refused before the lock is made
    _mode_of(path)
    with _settings_lock():
        for _ in range(C.SETTINGS_EDIT_ATTEMPTS):
            try:
                return edit()
            except SettingsChanged:
                continue
    raise MemdirError(f"{path}: changed {C.SETTINGS_EDIT_ATTEMPTS} times while memdir was editing it (Claude Code "
                      "or another program is writing it); nothing was changed, run the command again when it is idle")


@contextlib.contextmanager
def _settings_lock() -> Iterator[None]:
    """The lock every install and uninstall edits settings under: `<config home>/memdir/settings-edit.lock`, made
    and opened without following a link (a planted link had it made wherever it pointed); one line when refused."""
    from memdir.safefs_write import hold_lock, open_created

    home = config_home()
    lock = home / C.MEMDIR_HOME_DIRNAME / C.SETTINGS_LOCK_NAME
    try:
        fd = open_created(home, f"{C.MEMDIR_HOME_DIRNAME}/{C.SETTINGS_LOCK_NAME}")
    except OSError as exc:  # safefs' refusals are OSErrors too
        raise MemdirError(_lock_refusal(lock, exc)) from None
    with hold_lock(fd, str(lock)):
        yield


def _lock_refusal(lock: Path, exc: OSError) -> str:
    for where, wanted in ((lock.parent, stat.S_ISDIR), (lock, stat.S_ISREG)):
        try:
            mode = os.lstat(where).st_mode
        except OSError:
            break
        if not wanted(mode):
            kind = ("a symlink" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
                    else "a file" if stat.S_ISREG(mode) else "a special file")
            return (f"{where} is {kind}, where memdir keeps its settings lock (never followed or replaced); "
                    "remove it and run the command again; nothing was changed")
    return f"{lock}: cannot open the settings lock ({exc.strerror or exc}); nothing was changed"


def _write_target(path: Path) -> Path:
    """Where to write `path`: a symlinked settings.json (dotfiles) is updated at its target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _pristine_path(path: Path) -> Path:
    """Where the settings file as it was before memdir ever touched it is kept."""
    return path.with_name(path.name + ".memdir-original")


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


def write_settings(path: Path, data: dict, original: str | None, dry_run: bool) -> str | None:
    """Write `data` over the settings whose text was `original` (None: no file); the backup kept, if any."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        return None
    backup = None
    mode = _mode_of(path)
    pristine = _pristine_path(path)
    if not pristine.exists():
        atomic_write_text(pristine, original or "", mode=0o600)  # "" records that there was no file at all
    if original is not None:
        backup = _keep_backup(path, original)
    _still(path, original)  # read again just before the write: an edit made since is never overwritten
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


def restore_pristine(path: Path, original: str, before: str) -> str:
    """Put back the settings as they were before memdir (`before`, from pristine_text; "" for no file at all),
    keeping a backup of the current `original` text, and drop the kept original; the backup's path."""
    mode = _mode_of(path)
    backup = _keep_backup(path, original)
    _still(path, original)
    if before:
        atomic_write_text(_write_target(path), before, mode=mode)  # byte-identical to the file before memdir
    elif path.is_symlink():
        atomic_write_text(_write_target(path), "{}\n", mode=mode)  # keep the user's link; empty settings
    else:
        path.unlink()  # there was no settings file before memdir created it
    _pristine_path(path).unlink()
    return str(backup)


def pristine_text(path: Path) -> str | None:
    """The settings file `path`'s saved original text, or None when absent or unusable (then it is not restored)."""
    pristine = _pristine_path(path)
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


def pristine(path: Path, default: dict) -> dict:
    """The settings file `path`'s saved original as load_settings reads it; `default` when there is none."""
    text = pristine_text(path)
    if text is None:
        return default
    data = json.loads(text or "{}")
    return {k: v for k, v in data.items() if not (k == "hooks" and v is None)}  # as load_settings reads it
