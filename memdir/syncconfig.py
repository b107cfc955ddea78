"""memdir sync's settings: which remote, which project, which branch, and the config keys that hold them.

A project is named across machines by its own git remote URL, normalised (`normalize_remote_url`), and its
memory is one branch of the sync remote (`branch_for`; team memory has its own branch prefix). The remote
and the switches live in memdir's config files (`<memory>/.memdir/config.json`, else the user's
`~/.claude/memdir/config.json`); a folder config inside the project's own repository is never read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from memdir import constants as C, gitrepo, safefs, safefs_write
from memdir.enablement import folder_config_counts
from memdir.errors import MemdirError
from memdir.paths import config_home, config_value

AUTO_SYNC_ENV = "MEMDIR_AUTO_SYNC"
REMOTE_KEY, PROJECT_KEY, AUTO_KEY = "sync_remote", "sync_project", "sync_auto"
TEAM_REMOTE_KEY = "team_sync_remote"
_FOLDER_CONFIG = f"{C.STATE_DIRNAME}/{C.MEMDIR_CONFIG_NAME}"

class SyncError(MemdirError):
    """Sync could not run: one line naming the reason and the fix; nothing was changed."""


# --- which remote, which project -----------------------------------------------------------------
def normalize_remote_url(url: str) -> str:
    """A project's git remote URL as one identity: no scheme, user or `.git`, host in lower case.
    `git@GitHub.com:me/app.git`, `https://github.com/me/app` and `ssh://git@github.com/me/app.git/`
    are all `github.com/me/app`. A local path stays an absolute path."""
    text = url.strip()
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if scheme and scheme.group(1).lower() == "file":
        return os.path.normpath(text[scheme.end():])
    if scheme:
        authority, _, path = text[scheme.end():].partition("/")
    elif re.match(r"^[^/\\]{2,}:", text):  # scp-like `user@host:path` (a drive letter has one character)
        authority, _, path = text.partition(":")
    else:
        return os.path.normpath(os.path.abspath(os.path.expanduser(text)))
    host = authority.rsplit("@", 1)[-1].lower()
    host = re.sub(r":(22|80|443|9418)$", "", host)  # default ports name the same server
    path = re.sub(r"/+", "/", path).strip("/")
    path = re.sub(r"\.git$", "", path).rstrip("/")
    return f"{host}/{path}"


def project_remote(project_root: Path) -> str | None:
    """The project's own git remote URL (`origin`, else the first), read from its config file: no git
    command runs inside the (possibly hostile) repository."""
    config = Path(project_root) / ".git" / "config"
    if not config.is_file():
        return None
    done = gitrepo.run(project_root, "config", "--file", str(config), "--get-regexp", r"^remote\..*\.url$",
                       check=False)
    urls = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        urls[key[len("remote."):-len(".url")]] = value.strip()
    return urls.get("origin") or next((urls[name] for name in sorted(urls)), None)


def project_id(project_root: Path | None, configured: str | None = None) -> str:
    """The project's identity across machines: the configured one, else its normalised remote URL."""
    if configured:
        return configured
    url = project_remote(project_root) if project_root else None
    if url:
        return normalize_remote_url(url)
    if project_root is None or not os.path.lexists(Path(project_root) / ".git"):
        # Not `git remote add` there: in a folder with no repository of its own (a project in a dotfiles home) it
        # would add the remote to the repository above it, the home's.
        raise SyncError(f"{project_root or 'this memory folder'} has no git repository of its own, so no git remote "
                        "to identify the project across machines; name it: memdir sync --project NAME (the same "
                        "name on each machine)")
    raise SyncError(f"{project_root} has no git remote to identify the project across machines; add one "
                    "(git remote add origin URL) or name it: memdir sync --project NAME")


def branch_for(project: str, *, team: bool = False) -> str:
    """The remote branch of one project: readable, ref-safe, and unique (a hash of the whole identity);
    team memory has its own (`memdir-team/`), so one repository can hold both."""
    slug = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "-", project)).strip("-.")[:80] or "project"
    return f"{'memdir-team' if team else 'memdir'}/{slug}-{hashlib.sha256(project.encode()).hexdigest()[:10]}"


def check_remote_url(url: str) -> str:
    url = url.strip()
    if not url or "\x00" in url or "\n" in url or url.startswith("-"):
        raise SyncError(f"remote {url!r} is not a git URL; use one like git@github.com:me/memory.git")
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@", url):
        raise SyncError("the remote URL holds a password; memdir never stores one: use an ssh URL or a git "
                        "credential helper")
    return url


# --- memdir's config ------------------------------------------------------------------------------
def config_files(memory_dir: Path, project_root: Path | None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folder's config, then the user's. A folder config inside the project's repository is ignored
    (memdir.enablement.folder_config_counts): a cloned repository must never aim memory at a remote of its choosing."""
    files = [config_home(env) / "memdir" / C.MEMDIR_CONFIG_NAME]
    root = None if project_root is None else os.fspath(project_root)
    counts = folder_config_counts(os.fspath(memory_dir), root, env)
    return [Path(memory_dir) / _FOLDER_CONFIG, *files] if counts else files


def configured(memory_dir: Path, project_root: Path | None, key: str) -> object:
    for config_file in config_files(memory_dir, project_root):
        value = config_value(config_file, key)
        if value is not None:
            return value
    return None


def save_config(memory_dir: Path, values: Mapping[str, object]) -> None:
    """Set keys in the folder's `.memdir/config.json`, keeping every other key."""
    try:
        current = json.loads(safefs.read_bytes(memory_dir, _FOLDER_CONFIG).decode("utf-8-sig") or "{}")
    except FileNotFoundError:
        current = {}
    except (ValueError, UnicodeDecodeError):
        raise SyncError(f"{Path(memory_dir) / _FOLDER_CONFIG}: not valid JSON; fix or remove it") from None
    if not isinstance(current, dict):
        raise SyncError(f"{Path(memory_dir) / _FOLDER_CONFIG}: must be a JSON object; fix or remove it")
    safefs_write.write_text(memory_dir, _FOLDER_CONFIG, json.dumps({**current, **values}, indent=2) + "\n")


def auto_sync(memory_dir: Path, project_root: Path | None, env: Mapping[str, str] | None = None) -> bool:
    """Does the Stop worker sync in the background? MEMDIR_AUTO_SYNC when set, else `sync_auto` in config;
    off by default. Nothing is ever pushed unless the user turned this on or ran `memdir sync`."""
    env = os.environ if env is None else env
    raw = env.get(AUTO_SYNC_ENV, "").strip() or None  # set but empty: unset
    if raw is not None and raw.strip().lower() in C.TRUTHY | C.FALSY:
        return raw.strip().lower() in C.TRUTHY
    if raw is not None:
        raise MemdirError(f"${AUTO_SYNC_ENV}={raw!r} is not on or off; set it to 1 or 0")
    return configured(memory_dir, project_root, AUTO_KEY) is True


@dataclasses.dataclass(frozen=True)
class Target:
    """Where one sync goes: the remote URL and branch, the git work tree, and the personal memory folder
    (which holds the config and the folder lock, for team memory too)."""

    url: str
    branch: str
    folder: Path
    base: Path


def settings(memory_dir: Path, project_root: Path | None, remote: str | None = None, project: str | None = None,
             *, team: bool = False) -> Target:
    """The sync target of a memory folder (or of its team memory): the given remote, else the configured one."""
    key = TEAM_REMOTE_KEY if team else REMOTE_KEY
    url = remote or configured(memory_dir, project_root, key)
    if not isinstance(url, str) or not url.strip():
        if team:
            raise SyncError("no team sync remote set; run `memdir sync --team --remote URL` once (a repository "
                            "your team shares)")
        raise SyncError("no sync remote set; run `memdir sync --remote URL` once (a private git repository you "
                        "own, e.g. git@github.com:me/memory.git)")
    name = project or configured(memory_dir, project_root, PROJECT_KEY)
    branch = branch_for(project_id(project_root, name if isinstance(name, str) else None), team=team)
    folder = Path(memory_dir) / C.TEAM_DIRNAME if team else Path(memory_dir)
    return Target(check_remote_url(url), branch, folder, Path(memory_dir))
