"""Which memory folders the warm recall server serves: its user's own, and no other (issue 22 #9).

A request names the folder to recall from. The server scans and embeds whatever it serves, so a
request naming `/`, a home folder or a folder of another user must be refused, not walked. A folder
is served when it is one of this user's memory folders as memdir itself resolves them:
- under `<Claude config home>/projects/` (the default, one per project), or
- exactly the folder configured by MEMDIR_PATH / CLAUDE_COWORK_MEMORY_PATH_OVERRIDE (sent with the
  request) or by `autoMemoryDirectory` in the user's settings;
and, followed through any symlinks, a folder owned by this uid that is not a root or home folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.paths import config_home, read_settings, user_settings_path, validate_configured_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class OutOfScope(ValueError):
    pass


def servable_folder(raw: object, env: Mapping[str, str]) -> Path:
    """The request's memory folder when this server may serve it; OutOfScope (one line) otherwise."""
    if not isinstance(raw, str) or not raw or "\x00" in raw or not os.path.isabs(raw):
        raise OutOfScope("'memory_dir' must be an absolute path")
    folder = Path(os.path.normpath(raw))
    if not (_under_projects(folder, env) or folder in configured_folders(env)):
        raise OutOfScope(f"{folder} is not a memory folder of this user's projects; the recall server serves only those")
    real = Path(os.path.realpath(folder))
    home = Path(env.get("HOME") or Path.home())
    if real == Path(real.anchor) or real in (home, *home.parents):
        raise OutOfScope(f"{folder} leads to {real}, a root or home folder; the recall server does not scan it")
    try:
        info = os.stat(real)
    except OSError as exc:
        raise OutOfScope(f"{folder} cannot be read ({exc.strerror})") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OutOfScope(f"{folder} is not a folder owned by this user; the recall server serves only those")
    return folder


def _under_projects(folder: Path, env: Mapping[str, str]) -> bool:
    projects = Path(os.path.normpath(config_home(env) / "projects"))
    return projects.is_absolute() and folder != projects and folder.is_relative_to(projects)


def configured_folders(env: Mapping[str, str]) -> set[Path]:
    """The memory folders the user configured, as memdir's own resolution reads them (SPEC §1)."""
    raws = [(env.get(name) or "", f"${name}") for name in C.PATH_OVERRIDE_ENVS]
    try:
        configured = read_settings(user_settings_path(env)).get(C.SETTINGS_DIR_KEY)
    except MemdirError:
        configured = None
    if isinstance(configured, str):
        raws.append((configured, C.SETTINGS_DIR_KEY))
    folders = set()
    for raw, source in raws:
        if raw:
            try:
                folders.add(validate_configured_path(raw, source))
            except MemdirError:
                continue  # refused by memdir's own rules: never a folder to serve
    return folders
