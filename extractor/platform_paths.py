"""A `file_path` from a transcript, read under the path rules of the machine that wrote it.

A transcript written on Windows holds `C:\\Users\\x\\.claude\\plans\\plan.md`; on Linux or macOS
that string is a relative path, and joining it under the memory folder would make it look like a
memory write (and skip the whole session). So a drive or UNC path is read with `ntpath`, a relative
path is joined to the session's own `cwd` (itself read under that cwd's rules), and a Windows path
reaches a POSIX memory folder only through WSL's `/mnt/<drive>/` mount.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from memdir import constants as C

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def is_windows_path(path: str) -> bool:
    """A drive (`C:\\`, `c:/`) or UNC (`\\\\server\\share`) path."""
    return bool(_DRIVE.match(path)) or path.startswith("\\\\")


def absolute_target(target: str, cwd: str | None) -> tuple[str, str] | None:
    """("nt" | "posix", the absolute normalised path) the transcript means, or None when it cannot be
    told (a relative path in a session without a `cwd`)."""
    if is_windows_path(target):
        return "nt", ntpath.normpath(target)
    if target.startswith(("/", "~")):
        return "posix", posixpath.normpath(os.path.expanduser(target))
    if not cwd:
        return None
    if is_windows_path(cwd):
        return "nt", ntpath.normpath(ntpath.join(cwd, target))
    return ("posix", posixpath.normpath(posixpath.join(cwd, target))) if cwd.startswith("/") else None


def _as_local(flavour: str, path: str) -> str | None:
    """The path as this machine spells it: a Windows path on a POSIX machine only via WSL's mount."""
    if flavour == ("nt" if os.name == "nt" else "posix"):
        return path
    if flavour == "nt" and _DRIVE.match(path):
        return "/mnt/" + path[0].lower() + "/" + path[3:].replace("\\", "/")
    return None


def local_path(target: str, cwd: str | None) -> str | None:
    """`target` as an absolute path on this machine, or None when it cannot be told."""
    found = absolute_target(target, cwd)
    return _as_local(*found) if found else None


def inside(target: str, cwd: str | None, root: Path) -> bool:
    """Does `target`, as the transcript's platform means it, name `root` or a file below it?"""
    found = absolute_target(target, cwd)
    local = _as_local(*found) if found else None
    if local is None:
        return False
    real_root, resolved = root.resolve(), Path(local).resolve()
    return resolved == real_root or real_root in resolved.parents


def folder_name(cwd: str | None) -> str | None:
    """A session's `cwd` as the extraction request names it: its last two parts under its own platform's
    rules, `~/` in front when they sit right below the home folder and `…/` when more is left out
    (`C:\\Users\\x\\.local\\bin` -> `~/.local/bin`, `/srv/www/shop/api` -> `…/shop/api`). Not the full path,
    which would tell the model the user's login for nothing; not the last part alone, which misled when it was
    generic (`bin`, `src`: found by a model reading the requests). None for no folder or the home folder."""
    if not cwd:
        return None
    flavour = ntpath if is_windows_path(cwd) else posixpath
    trimmed = flavour.normpath(cwd).rstrip("\\/")
    if _HOME.match(trimmed.replace("\\", "/")):  # the home folder's name is the user's login, not a project
        return None
    home = home_of(trimmed)
    drive, below = ("", trimmed[len(home):]) if home else flavour.splitdrive(trimmed)
    parts = ["".join(ch for ch in part if _shown(ch)) for part in re.split(r"[\\/]", below) if part]
    if not parts or parts[-1] in ("", ".", "..", "~"):
        return None
    if len(parts) > 2 or drive.startswith(("\\", "//")):  # a UNC share's server is left out with the rest
        lead = "…/"
    else:
        lead = "~/" if home else drive + "/" if below.startswith(("/", "\\")) else ""
    return (lead + "/".join(p for p in parts[-2:] if p))[-C.FOLDER_NAME_MAX:]


def session_folder(messages) -> str | None:
    """The folder the session works in (its latest message's `cwd`), by name as the request shows it: a model
    reading only the messages could not tell which project "the project" is (found by a model reading the
    requests). None for a system folder (session_system_folder), which is no project's."""
    cwd = _latest_cwd(messages)
    return None if cwd is None or _SYSTEM.match(_slashed(cwd)) else folder_name(cwd)


def session_system_folder(messages) -> str | None:
    """The system folder the session works in (`C:/WINDOWS/system32`, `/`, `/tmp`), by name, or None: the request
    called it "the project this memory folder belongs to" (relay19 and relay19b, a session started from
    system32)."""
    cwd = _latest_cwd(messages)
    if cwd is None or not _SYSTEM.match(_slashed(cwd)):
        return None
    return folder_name(cwd) or _slashed(cwd).rstrip("/") + "/"


def _latest_cwd(messages) -> str | None:
    """The latest `cwd`, its `.` and `..` parts taken out under its own platform's rules: `C:\\Windows\\..\\Users\\ana\\shop`
    is a project in the home folder, not Windows' own folder, and `/tmp/../home/ana` the home folder (hostile27: called
    a system folder, and named by the login). Only the characters a folder's name is shown with (`_shown`): a line
    break in it made the system-folder line two (`/\\n` was shown as "`/` newline "/`")."""
    cwd = "".join(ch for ch in next((m.cwd for m in reversed(messages) if m.cwd), "") if _shown(ch))
    return (ntpath if is_windows_path(cwd) else posixpath).normpath(cwd) if cwd else None


def _slashed(cwd: str) -> str:
    return cwd.replace("\\", "/").rstrip("/") or "/"


# Folders no project lives in: Windows' own folder and those below it, the file system's or a drive's root (`C:`, and
# `/mnt/c` as WSL shows it: hostile27), the temporary folder.
_SYSTEM = re.compile(r"^(?:(?:[A-Za-z]:|/mnt/[A-Za-z])(?:/Windows(?:/.*)?)?|/|(?:/private)?/(?:var/)?tmp)$", re.I)


def session_at_home(messages) -> bool:
    """Whether the session works in the user's home folder (its latest `cwd`), which folder_name leaves unnamed: the
    request then says so, as a model reading it found no folder line and could not tell why (relay16)."""
    cwd = _latest_cwd(messages)
    return bool(cwd and _HOME.match(cwd.rstrip("\\/").replace("\\", "/")))


# A home folder (Linux, macOS, Windows, WSL's view of Windows) or root's: a session there has no project.
_HOMES = r"(?:/root|/home/[^/]+|/Users/[^/]+|(?:[A-Za-z]:|/mnt/[A-Za-z])/Users/[^/]+)"
_HOME = re.compile(rf"^(?:~|{_HOMES})$", re.I)


def _shown(ch: str) -> bool:
    """Kept in the folder's name, which the request shows in backticks on one line: not a backtick, not a
    control, format (bidi override, zero-width) or line/paragraph separator character (U+0085, U+2028)."""
    return ch != "`" and unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


# --- the home folder, shown as `~` ------------------------------------------------------------------------------
# The request to the model names the memory folder and quotes the agent's tool calls and output: the user's home
# folder in them (/home/alice, /Users/alice, C:\\Users\\alice) tells the model the login for nothing. Shown as `~`;
# the tools expand a `~/` path back (tools_read.ReadTools._rel) and confine it to the memory folder as any other.
_HOME_PREFIX = re.compile(rf"^{_HOMES}(?=/|$)", re.I)


def local_home() -> str | None:
    """This machine's home folder, None when there is none worth hiding (no HOME, or `/`)."""
    home = os.path.normpath(os.path.expanduser("~"))
    return None if home.startswith("~") or home in ("/", "\\", ".") else home


def home_of(cwd: str | None) -> str | None:
    """The home folder a session's `cwd` sits in, as the transcript spells it, or None."""
    found = _HOME_PREFIX.match(cwd.replace("\\", "/")) if cwd else None
    return cwd[: found.end()] if cwd and found else None


def tilde(text: str, homes: Iterable[str | None]) -> str:
    """`text` with each of `homes` that starts a path written `~` (as is, and as JSON escapes a Windows path)."""
    for home in sorted({h for h in homes if h}, key=len, reverse=True):
        for spelled in {home, home.replace("\\", "\\\\")}:
            text = re.sub(r"(?<![\w./\\-])" + re.escape(spelled) + r"(?![\w.-])", "~", text)
    return text


def shown_path(path: Path | str) -> str:
    """A local path (the memory folder, a daily log) as the model is shown it: under the home folder, `~/...`."""
    return tilde(str(path), [local_home()])
