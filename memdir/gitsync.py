"""`memdir sync`: one project's memory on every machine, through a git remote the user owns.

Layout on the remote: ONE BRANCH PER PROJECT, `memdir/<project>-<hash>`, where the project is its git
remote URL normalised (`project_id`). One private repository then holds every project's memory (users
have one such repository, not one per project), each project's history stays separate (a fetch moves only
that branch), and two checkouts of one repository, at any path on any machine, name the same branch.
Each machine keeps its memory folder where its Claude Code reads it; only the branch is shared.

A sync, under a sync lock (one sync at a time per folder):
1. `git ls-remote` first: offline, a wrong URL or no project identity is one line and nothing changes
   (no repository, no config, no commit);
2. fetch the project's branch into `refs/memdir/sync/remote`;
3. under the folder lock: commit what changed on disk (the secret guard leaves secrets out), then take the
   remote's commits: a fast-forward, or a merge (memdir/gitmerge.py: no edit lost, MEMORY.md by line);
4. check every object about to be pushed for secrets, then push without force. A push rejected because
   the remote moved meanwhile goes back to 2 (three tries). History is never rewritten.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from memdir import constants as C, gitmerge, gitrepo, safefs
from memdir.errors import MemdirError
from memdir.paths import config_home, config_value
from memdir.secrets import find_secrets, redact

AUTO_SYNC_ENV = "MEMDIR_AUTO_SYNC"
REMOTE_KEY, PROJECT_KEY, AUTO_KEY = "sync_remote", "sync_project", "sync_auto"
TRACKING_REF = "refs/memdir/sync/remote"  # the remote branch as last fetched
_SYNC_LOCK = f"{C.STATE_DIRNAME}/sync.lock"
_FOLDER_CONFIG = f"{C.STATE_DIRNAME}/{C.MEMDIR_CONFIG_NAME}"
_FOLDER_LOCK = f"{C.STATE_DIRNAME}/{C.LOCK_NAME}"  # the store's folder lock (memdir/store.py)
_TRANSPORT = ("-c", "protocol.ext.allow=never")  # never a remote that runs a command (git's default too)
_PUSH_TRIES = 3


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
    if not url:
        where = project_root or "this memory folder"
        raise SyncError(f"{where} has no git remote to identify the project across machines; add one "
                        "(git remote add origin URL) or name it: memdir sync --project NAME")
    return normalize_remote_url(url)


def branch_for(project: str) -> str:
    """The remote branch of one project: readable, ref-safe, and unique (a hash of the whole identity)."""
    slug = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "-", project)).strip("-.")[:80] or "project"
    return f"memdir/{slug}-{hashlib.sha256(project.encode()).hexdigest()[:10]}"


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
    """The folder's config, then the user's. A folder config inside the project's repository is ignored:
    a cloned repository must never aim memory at a remote of its choosing."""
    files = [config_home(env) / "memdir" / C.MEMDIR_CONFIG_NAME]
    folder = Path(memory_dir) / _FOLDER_CONFIG
    inside = project_root is not None and Path(os.path.realpath(memory_dir)).is_relative_to(
        os.path.realpath(project_root))
    return files if inside else [folder, *files]


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
    safefs.write_text(memory_dir, _FOLDER_CONFIG, json.dumps({**current, **values}, indent=2) + "\n")


def auto_sync(memory_dir: Path, project_root: Path | None, env: Mapping[str, str] | None = None) -> bool:
    """Does the Stop worker sync in the background? MEMDIR_AUTO_SYNC when set, else `sync_auto` in config;
    off by default. Nothing is ever pushed unless the user turned this on or ran `memdir sync`."""
    env = os.environ if env is None else env
    raw = env.get(AUTO_SYNC_ENV)
    if raw is not None and raw.strip().lower() in C.TRUTHY | C.FALSY:
        return raw.strip().lower() in C.TRUTHY
    if raw is not None:
        raise MemdirError(f"${AUTO_SYNC_ENV}={raw!r} is not on or off; set it to 1 or 0")
    return configured(memory_dir, project_root, AUTO_KEY) is True


# --- talking to the remote -------------------------------------------------------------------------
def _remote_env(memory_dir: Path) -> dict[str, str]:
    env = gitrepo._env(memory_dir)
    for key in ("GIT_DIR", "GIT_WORK_TREE"):
        env.pop(key, None)
    return env


def remote_tip(memory_dir: Path, url: str, branch: str) -> str | None:
    """The remote branch's commit (None: no such branch yet), without touching the folder.
    Raises SyncError when the remote cannot be reached."""
    import subprocess

    try:
        done = subprocess.run(["git", *gitrepo._OPTIONS, *_TRANSPORT, "ls-remote", "--", url, f"refs/heads/{branch}"],
                              capture_output=True, env=_remote_env(memory_dir), cwd="/", timeout=120, check=False)
    except FileNotFoundError:
        raise SyncError("git is not installed (or not on PATH); sync needs it") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SyncError(f"cannot reach {redact(url)}: {exc}; nothing changed") from None
    if done.returncode != 0:
        raise SyncError(f"cannot reach {redact(url)} ({gitrepo._first_line(done.stderr)}); nothing changed")
    line = done.stdout.decode().split("\n", 1)[0]
    return line.split()[0] if line.strip() else None


def _fetch(memory_dir: Path, url: str, branch: str) -> str:
    try:
        with safefs.locked(memory_dir, _FOLDER_LOCK, 30.0):
            gitrepo.ensure(memory_dir)
        gitrepo.run(memory_dir, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--", url,
                    f"+refs/heads/{branch}:{TRACKING_REF}", timeout=600)
    except gitrepo.GitError as exc:
        raise SyncError(f"fetch from {redact(url)} failed: {exc}") from None
    return gitrepo.run(memory_dir, "rev-parse", "--verify", f"{TRACKING_REF}^{{commit}}").stdout.decode().strip()


def _push(memory_dir: Path, url: str, branch: str, commit: str) -> bool:
    """Push `commit` to the branch, never forced. False when the remote moved (rejected as non-fast-forward)."""
    done = gitrepo.run(memory_dir, "push", "--porcelain", "--no-verify", "--", url,
                       f"{commit}:refs/heads/{branch}", check=False, timeout=600)
    if done.returncode == 0:
        gitrepo.run(memory_dir, "update-ref", TRACKING_REF, commit)
        return True
    if b"[rejected]" in done.stdout:  # non-fast-forward: someone pushed since our fetch
        return False
    raise SyncError(f"push to {redact(url)} failed ({gitrepo._first_line(done.stderr or done.stdout)}); "
                    "the local history is kept, run `memdir sync` again")


def secrets_to_push(memory_dir: Path, tip: str, remote: str | None) -> list[str]:
    """Every blob and commit message the remote does not have yet that holds a secret (checked again here,
    whatever wrote it): what a push would send. Empty means safe to push."""
    args = ["rev-list", "--objects", tip, *([f"^{remote}"] if remote else [])]
    ids = [line.split(" ", 1)[0] for line in gitrepo.run(memory_dir, *args).stdout.decode().splitlines() if line]
    if not ids:
        return []
    out = gitrepo.run(memory_dir, "cat-file", "--batch", input="\n".join(ids).encode() + b"\n").stdout
    found, at = [], 0
    while at < len(out):
        header_end = out.index(b"\n", at)
        sha, kind, size = out[at:header_end].decode().split()
        body = out[header_end + 1: header_end + 1 + int(size)]
        at = header_end + 1 + int(size) + 1
        if kind in ("blob", "commit") and find_secrets(body.decode("utf-8", "replace")):
            found.append(f"{kind} {sha[:10]}")
    return found


# --- one sync -----------------------------------------------------------------------------------
@dataclasses.dataclass
class SyncResult:
    url: str
    branch: str
    pulled: list[str] = dataclasses.field(default_factory=list)  # files changed here by the other machine
    pushed: bool = False
    conflicts: list[gitmerge.Conflict] = dataclasses.field(default_factory=list)
    kept_local: list[str] = dataclasses.field(default_factory=list)  # changed on disk meanwhile: not overwritten
    left_out: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # not synced (a secret)

    def describe(self) -> list[str]:
        pulled = f"{len(self.pulled)} file(s) updated here" if self.pulled else "nothing new from the remote"
        lines = [f"synced with {redact(self.url)} (branch {self.branch}): {pulled}; "
                 f"{'pushed' if self.pushed else 'nothing to push'}"]
        lines += [f"kept both edits of {c.describe()}" for c in self.conflicts]
        lines += [f"{path}: changed here during the sync; left as it is (the other version is in history)"
                  for path in self.kept_local]
        lines += [f"not synced {path}: {why}" for path, why in self.left_out]
        return lines


def settings(memory_dir: Path, project_root: Path | None, remote: str | None = None,
             project: str | None = None) -> tuple[str, str]:
    """(remote URL, branch) for this folder: the given ones, else the configured ones."""
    url = remote or configured(memory_dir, project_root, REMOTE_KEY)
    if not isinstance(url, str) or not url.strip():
        raise SyncError("no sync remote set; run `memdir sync --remote URL` once (a private git repository you "
                        "own, e.g. git@github.com:me/memory.git)")
    name = project or configured(memory_dir, project_root, PROJECT_KEY)
    return check_remote_url(url), branch_for(project_id(project_root, name if isinstance(name, str) else None))


def sync(memory_dir: Path, project_root: Path | None, *, remote: str | None = None, project: str | None = None,
         lock_timeout: float = 60.0) -> SyncResult:
    """Sync the folder with its remote (storing `remote`/`project` in the folder's config once reached).
    Raises SyncError (one line) when it cannot; a failure after the fetch leaves both sides consistent."""
    memory_dir = Path(memory_dir)
    url, branch = settings(memory_dir, project_root, remote, project)
    tip = remote_tip(memory_dir, url, branch)  # offline: stops here, nothing changed
    safefs.mkdirs(memory_dir, C.STATE_DIRNAME)
    if remote or project:
        save_config(memory_dir, {REMOTE_KEY: url} | ({PROJECT_KEY: project} if project else {}))
    result = SyncResult(url, branch)
    try:
        with safefs.locked(memory_dir, _SYNC_LOCK, lock_timeout):
            for _ in range(_PUSH_TRIES):
                theirs = _fetch(memory_dir, url, branch) if tip else None
                new = _integrate(memory_dir, theirs, result)
                if new is None or new == theirs:
                    return result
                leaks = secrets_to_push(memory_dir, new, theirs)
                if leaks:
                    raise SyncError(f"nothing pushed: {', '.join(leaks)} holds a secret; remove it from the "
                                    f"memory history in {gitrepo.git_dir(memory_dir)}")
                if _push(memory_dir, url, branch, new):
                    result.pushed = True
                    return result
                tip = remote_tip(memory_dir, url, branch)
    except gitrepo.GitError as exc:
        raise SyncError(f"sync stopped: {exc}") from None
    raise SyncError(f"the remote branch {branch} kept moving during {_PUSH_TRIES} tries; run `memdir sync` again")


def background_sync(memory_dir: Path, project_root: Path | None) -> str | None:
    """The Stop worker's sync when the user turned it on (`auto_sync`): one log line, or None when off.
    Never raises; a sync already running makes this one give up after a few seconds."""
    try:
        if not auto_sync(memory_dir, project_root):
            return None
        return "; ".join(sync(memory_dir, project_root, lock_timeout=5.0).describe())
    except MemdirError as exc:
        return f"sync failed: {exc}"
    except OSError as exc:
        from memdir.errors import os_error_line

        return f"sync failed: {os_error_line(exc)}"


def _integrate(memory_dir: Path, theirs: str | None, result: SyncResult) -> str | None:
    """Under the folder lock: commit the folder, then bring `theirs` in. The local head afterwards."""
    with safefs.locked(memory_dir, _FOLDER_LOCK, 30.0):
        found = gitrepo.commit_locked(memory_dir, "changes found on disk before sync", author=gitrepo.ANOTHER_WRITER)
        result.left_out = list(found.left_out)
        ours = gitrepo.head(memory_dir)
        if theirs is None or theirs == ours:
            return ours
        base = gitmerge.merge_base(memory_dir, ours, theirs) if ours else None
        if base == theirs:  # we are ahead: only a push
            return ours
        ours_files = gitrepo.committed_files(memory_dir, ours)
        if ours is None or base == ours:  # fast-forward (or a first sync into a folder with nothing committed)
            their_files = gitrepo.committed_files(memory_dir, theirs)
            changes = {path: None if blob is None else gitrepo.read_blob(memory_dir, blob)
                       for path in sorted(set(ours_files) | set(their_files))
                       if (blob := their_files.get(path)) != ours_files.get(path)}
            result.kept_local = gitmerge.apply(memory_dir, ours_files, changes)
            result.pulled = [p for p in changes if p not in result.kept_local]
            gitrepo.run(memory_dir, "update-ref", gitrepo.REF, theirs, ours or "0" * 40)  # forward only
            return theirs
        merge = gitmerge.plan(memory_dir, ours, theirs, base, ours_files)
        leaks = gitmerge.secrets_in(merge)
        if leaks:
            raise SyncError(f"merge not made: {', '.join(leaks)} would hold a secret; nothing changed")
        result.kept_local = gitmerge.apply(memory_dir, ours_files, merge.changes)
        result.pulled = [p for p in merge.changes if p not in result.kept_local]
        result.conflicts = merge.conflicts
        return gitmerge.commit_merge(memory_dir, ours, theirs, merge.changes, _merge_message(theirs, merge))


def _merge_message(theirs: str, merge: gitmerge.Merge) -> str:
    lines = [f"sync: merged the other machine's changes ({theirs[:10]})", ""]
    lines += [f"{'deleted' if data is None else 'took'} {path}" for path, data in merge.changes.items()]
    lines += [f"kept both edits of {c.describe()}" for c in merge.conflicts]
    return redact("\n".join(lines)) + "\n"
