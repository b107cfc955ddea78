"""`memdir sync`: one project's memory on every machine, through a git remote the user owns.

Layout on the remote: ONE BRANCH PER PROJECT, `memdir/<project>-<hash>`, where the project is its git
remote URL normalised (memdir/syncconfig.py). One private repository then holds every project's memory (users
have one such repository, not one per project), each project's history stays separate (a fetch moves only
that branch), and two checkouts of one repository, at any path on any machine, name the same branch.
Each machine keeps its memory folder where its Claude Code reads it; only the branch is shared.
Team memory (`team/`) can go to a team remote the same way: its own repository (`team/.memdir/git`, work
tree `team/`), its own branch `memdir-team/<project>-<hash>`, the same merge, guard and push rules.

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
import os
import stat
from pathlib import Path

from memdir import constants as C, gitcommit, githistory, gitmerge, gitrepo, safefs, safefs_write
from memdir.errors import MemdirError
from memdir.secrets import find_secrets, looks_secret, redact
from memdir.syncconfig import (
    PROJECT_KEY,
    REMOTE_KEY,
    TEAM_REMOTE_KEY,
    SyncError,
    Target,
    auto_sync,
    configured,
    save_config,
    settings,
)

TRACKING_REF = "refs/memdir/sync/remote"  # the remote branch as last fetched
_SYNC_LOCK = f"{C.STATE_DIRNAME}/sync.lock"  # one sync at a time per repository
_FOLDER_LOCK = f"{C.STATE_DIRNAME}/{C.LOCK_NAME}"  # the store's folder lock (memdir/store.py), team writes too
_TRANSPORT = ("-c", "protocol.ext.allow=never")  # never a remote that runs a command (git's default too)
_PUSH_TRIES = 3
_ANSWER_TIMEOUT = 120.0  # seconds for the first question to the remote: a server that never answers


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
                              capture_output=True, env=_remote_env(memory_dir), cwd="/", timeout=_ANSWER_TIMEOUT,
                              check=False)
    except FileNotFoundError:
        raise SyncError("git is not installed (or not on PATH); sync needs it") from None
    except subprocess.TimeoutExpired:
        raise SyncError(f"cannot reach {redact(url)}: no answer in {_ANSWER_TIMEOUT:.0f}s; nothing changed") from None
    except OSError as exc:
        raise SyncError(f"cannot reach {redact(url)}: {exc.strerror or exc}; nothing changed") from None
    if done.returncode != 0:
        raise SyncError(f"cannot reach {redact(url)} ({gitrepo._first_line(done.stderr)}); nothing changed")
    wanted = f"refs/heads/{branch}"  # ls-remote matches patterns by their tail: keep the exact ref only
    for line in done.stdout.decode().splitlines():
        sha, _, ref = line.partition("\t")
        if ref == wanted:
            return sha
    return None


def _fetch(target: Target) -> str:
    memory_dir, url, branch = target.folder, target.url, target.branch
    try:
        with safefs_write.locked(target.base, _FOLDER_LOCK, 30.0):
            gitrepo.ensure(memory_dir)
        gitrepo.run(memory_dir, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--", url,
                    f"+refs/heads/{branch}:{TRACKING_REF}", timeout=600)
    except gitrepo.GitError as exc:
        raise SyncError(f"fetch from {redact(url)} failed: {exc}") from None
    return gitrepo.run(memory_dir, "rev-parse", "--verify", f"{TRACKING_REF}^{{commit}}").stdout.decode().strip()


def _have(memory_dir: Path, commit: str) -> bool:
    """Is this commit here already (the remote has not moved since the last sync)? Then no fetch."""
    return gitrepo.exists(memory_dir) and gitrepo.run(memory_dir, "cat-file", "-e", f"{commit}^{{commit}}",
                                                      check=False).returncode == 0


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
    removed: list[str] = dataclasses.field(default_factory=list)  # of those, the ones it deleted
    pushed: bool = False
    conflicts: list[gitmerge.Conflict] = dataclasses.field(default_factory=list)
    kept_local: list[str] = dataclasses.field(default_factory=list)  # changed on disk meanwhile: not overwritten
    left_out: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # not synced (a secret)
    team: bool = False  # paths are inside team/

    def describe(self) -> list[str]:
        pulled = f"{len(self.pulled)} file(s) updated here" if self.pulled else "no file changed here"
        lines = [f"synced with {redact(self.url)} (branch {self.branch}): {pulled}; "
                 f"{'pushed' if self.pushed else 'nothing to push'}"]
        lines += [f"kept both edits of {c.describe(self.team)}" for c in self.conflicts]
        lines += [f"{path}: changed here during the sync; left as it is (the other version is in history)"
                  for path in self.kept_local]
        lines += [f"not synced {path}: {why}" for path, why in self.left_out]
        restore = f"memdir restore {'--team ' if self.team else ''}"
        lines += [f"deleted {path} here, as the other side did; `{restore}{path}` brings it back" for path in self.removed]
        return [gitcommit.shown(line) for line in lines]  # names from the other side: no ESC, no forged line


def sync(memory_dir: Path, project_root: Path | None, *, remote: str | None = None, project: str | None = None,
         team: bool = False, lock_timeout: float = 60.0) -> SyncResult:
    """Sync the folder (its `team/` folder with `team`) with its remote, storing `remote`/`project` in the
    folder's config once the remote answered. Raises SyncError (one line) when it cannot; a failure after
    the fetch leaves both sides consistent and the next sync completes."""
    target = settings(Path(memory_dir), project_root, remote, project, team=team)
    tip = remote_tip(target.base, target.url, target.branch)  # offline: stops here, nothing changed
    safefs_write.mkdirs(target.base, C.STATE_DIRNAME)
    if team:
        safefs_write.mkdirs(target.base, f"{C.TEAM_DIRNAME}/{C.STATE_DIRNAME}")  # never through a symlinked team/
    if remote or project:
        key = TEAM_REMOTE_KEY if team else REMOTE_KEY
        save_config(target.base, {key: target.url} | ({PROJECT_KEY: project} if project else {}))
    result = SyncResult(target.url, target.branch, team=team)
    folder = target.folder
    if team:  # `memdir history --team` reads the personal history: each version a pull replaces must be there
        githistory.sweep(target.base, why="team memory before `memdir sync --team`")
    try:
        with safefs_write.locked(folder, _SYNC_LOCK, lock_timeout):
            for _ in range(_PUSH_TRIES):
                theirs = tip and (tip if _have(folder, tip) else _fetch(target))
                new = _integrate(target, theirs, result)
                if new is None or new == theirs:
                    return result
                leaks = secrets_to_push(folder, new, theirs)
                if leaks:
                    raise SyncError(f"nothing pushed: {', '.join(leaks)} holds a secret; remove it from the "
                                    f"memory history in {gitrepo.git_dir(folder)}")
                if _push(folder, target.url, target.branch, new):
                    result.pushed = True
                    return result
                tip = remote_tip(target.base, target.url, target.branch)
    except gitrepo.GitError as exc:
        raise SyncError(f"sync stopped: {exc}") from None
    finally:
        if team and result.pulled:
            githistory.sweep(target.base, why="team memory taken by `memdir sync --team`")
    raise SyncError(f"the remote branch {target.branch} kept moving during {_PUSH_TRIES} tries; "
                    "run `memdir sync` again")


def background_sync(memory_dir: Path, project_root: Path | None) -> str | None:
    """The Stop worker's sync when the user turned it on (`auto_sync`): one log line, or None when off.
    Never raises; a sync already running makes this one give up after a few seconds."""
    try:
        if not auto_sync(memory_dir, project_root):
            return None
        lines = sync(memory_dir, project_root, lock_timeout=5.0).describe()
        if configured(memory_dir, project_root, TEAM_REMOTE_KEY):
            lines += ["team: " + line for line in sync(memory_dir, project_root, team=True, lock_timeout=5.0).describe()]
        return "; ".join(lines)
    except MemdirError as exc:
        return f"sync failed: {exc}"
    except OSError as exc:
        from memdir.errors import os_error_line

        return f"sync failed: {os_error_line(exc)}"


def _integrate(target: Target, theirs: str | None, result: SyncResult) -> str | None:
    """Under the folder lock: commit the folder, then bring `theirs` in. The local head afterwards."""
    memory_dir = target.folder
    with safefs_write.locked(target.base, _FOLDER_LOCK, 30.0):
        found = gitcommit.commit_locked(memory_dir, "changes found on disk before sync", author=gitcommit.ANOTHER_WRITER,
                                      first_import=githistory.import_legacy)  # a first commit keeps .memdir/history/
        result.left_out = list(found.left_out)
        ours = gitrepo.head(memory_dir)
        if theirs is None or theirs == ours:
            return ours
        base = gitmerge.merge_base(memory_dir, ours, theirs) if ours else None
        if base == theirs:  # we are ahead: only a push
            return ours
        ours_files = gitrepo.committed_files(memory_dir, ours)
        their_files = gitrepo.committed_files(memory_dir, theirs)
        _check_sizes(memory_dir, ours_files, their_files)  # before any of their blobs is read
        if ours is None or base == ours:  # fast-forward (or a first sync into a folder with nothing committed)
            changes = _incoming({path: None if blob is None else gitrepo.read_blob(memory_dir, blob)
                                 for path in sorted(set(ours_files) | set(their_files))
                                 if gitrepo.tracked(path) and (blob := their_files.get(path)) != ours_files.get(path)})
            _take(memory_dir, ours_files, changes, result)
            gitrepo.run(memory_dir, "update-ref", gitrepo.REF, theirs, ours or "0" * 40)  # forward only
            return theirs
        merge = gitmerge.plan(memory_dir, ours, theirs, base, ours_files, trust_dates=not result.team)
        merge.changes = _incoming(merge.changes)
        _take(memory_dir, ours_files, merge.changes, result)
        result.conflicts = merge.conflicts
        return gitmerge.commit_merge(memory_dir, ours, theirs, merge.changes, _merge_message(theirs, merge))


def _take(memory_dir: Path, ours_files: dict[str, str], changes: dict[str, bytes | None], result: SyncResult) -> None:
    """Write what the other side changed (`changes`, checked first: nothing is written when one cannot be) and
    say in `result` what was taken, what was kept as it is here, and what was deleted."""
    _check_layout(ours_files, changes)
    _check_writable(memory_dir, changes)
    result.kept_local = gitmerge.apply(memory_dir, ours_files, changes)
    result.pulled = [p for p in changes if p not in result.kept_local]
    result.removed = [p for p in result.pulled if changes[p] is None]


def _check_sizes(memory_dir: Path, ours_files: dict[str, str], their_files: dict[str, str]) -> None:
    """Stop the sync before anything is read or written when the other side brings a memory file larger than
    memdir reads (anyone who can push to a team remote can send one of gigabytes: read whole, it would fill
    this machine's memory, and written, no memdir command could read it)."""
    new = {path: blob for path, blob in their_files.items() if gitrepo.tracked(path) and blob != ours_files.get(path)}
    sizes = gitrepo.blob_sizes(memory_dir, list(new.values()))
    total = sum(sizes.get(blob, 0) for blob in new.values())
    if total > C.SYNC_PULL_MAX_BYTES:
        raise SyncError(f"nothing taken from the remote: its {len(new)} changed file(s) hold {total / 2**20:.1f} MB, "
                        f"more than one sync takes ({C.SYNC_PULL_MAX_BYTES >> 20} MB); remove files from the remote "
                        "branch (or make them smaller), then run `memdir sync` again")
    for path, blob in new.items():
        limit = C.INDEX_READ_MAX_BYTES if path.rsplit("/", 1)[-1] == gitmerge.INDEX_NAME else C.SAFE_READ_MAX_BYTES
        if sizes.get(blob, 0) > limit:
            raise SyncError(f"nothing taken from the remote: {gitcommit.shown(path)} is {sizes[blob] / 2**20:.1f} MB, "
                            f"more than memdir reads of a memory file ({limit >> 20} MB); remove it from the remote "
                            "branch (or make it smaller), then run `memdir sync` again")


def _check_layout(ours_files: dict[str, str], changes: dict[str, bytes | None]) -> None:
    """Stop before anything is written when a file the other side brings cannot be written here: a name longer
    than a file system takes, or one name that would have to be a file and a folder at once (the other side made
    `a.md/x.md` while `a.md` stays a memory here). Writing it would fail halfway through, at every sync."""
    after = {path for path in ours_files if changes.get(path, b"") is not None}
    after |= {path for path, data in changes.items() if data is not None}
    for path in sorted(path for path, data in changes.items() if data is not None):
        if max(len(os.fsencode(part)) for part in path.split("/")) > C.FILE_NAME_MAX_BYTES:
            raise SyncError(f"nothing taken from the remote: {gitcommit.shown(path)[:80]}... has a name longer than "
                            f"a file system takes ({C.FILE_NAME_MAX_BYTES} bytes); rename it on the remote branch, "
                            "then run `memdir sync` again")
    for path in sorted(after):
        parts = path.split("/")
        folder = next(("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in after), None)
        if folder is not None:
            mine = folder in ours_files and folder not in changes
            raise SyncError(f"nothing taken from the remote: {gitcommit.shown(path)} needs {gitcommit.shown(folder)} "
                            f"to be a folder, but {gitcommit.shown(folder)} is a memory "
                            f"{'here' if mine else 'there too'}; rename one of them (here, or on the remote "
                            "branch), then run `memdir sync` again")


def _check_writable(memory_dir: Path, changes: dict[str, bytes | None]) -> None:
    """Stop before anything is written when one of the files the pull changes cannot be written or removed here:
    a symlink, FIFO or folder where the file goes, a folder on the way that is a symlink or a file, or a read-only
    folder. Found only while writing, it stopped the pull halfway: some files taken, the branch not moved."""
    for path in sorted(changes):
        parent, _ = safefs.parent_and_name(path)
        try:
            safefs.check_inside(memory_dir, parent)
            found = safefs.lstat(memory_dir, path)
        except OSError as exc:  # UnsafePath (a symlinked or non-folder parent) is one too
            why = " ".join(str(exc).split()) if isinstance(exc, MemdirError) else (exc.strerror or str(exc))
            raise SyncError(f"nothing taken from the remote: cannot write {gitcommit.shown(path)} here ({why}); "
                            "fix that path in the memory folder, then run `memdir sync` again") from None
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise SyncError(f"nothing taken from the remote: {gitcommit.shown(path)} is {safefs.kind_of(found.st_mode)}"
                            " here, where the other side has a memory file; memdir never writes through it. Move it "
                            "away (or replace it with the file), then run `memdir sync` again")
        existing = _deepest_folder(memory_dir, parent)
        if not os.access(Path(memory_dir, existing), os.W_OK):
            raise SyncError(f"nothing taken from the remote: {gitcommit.shown(existing or '.')} is read-only here, "
                            f"so {gitcommit.shown(path)} cannot be written; make it writable, then run `memdir sync` "
                            "again")


def _deepest_folder(memory_dir: Path, rel_dir: str) -> str:
    """The deepest folder of `rel_dir` that exists (checked by `_check_writable` to be no symlink)."""
    parts = rel_dir.split("/") if rel_dir else []
    while parts and safefs.lstat(memory_dir, "/".join(parts)) is None:
        parts.pop()
    return "/".join(parts)


def _incoming(changes: dict[str, bytes | None]) -> dict[str, bytes | None]:
    """What the other side's commits may write here: memory files only (never `.memdir/` state, logs or
    hidden files, which anyone with push access could add to the branch), and never a secret (or a name
    that looks like one): those stop the sync before anything is written."""
    changes = {path: data for path, data in changes.items() if gitrepo.tracked(path)}
    leaks = [path for path, data in changes.items()
             if data is not None and (looks_secret(path) or find_secrets(data.decode("utf-8", "replace")))]
    if leaks:
        raise SyncError(f"nothing taken from the remote: {', '.join(gitcommit.shown(p) for p in leaks)} would hold "
                        "a secret; remove it from the remote branch, then run `memdir sync` again")
    return changes


def _merge_message(theirs: str, merge: gitmerge.Merge) -> str:
    lines = [f"sync: merged the other machine's changes ({theirs[:10]})", ""]
    lines += [gitcommit.shown(f"{'deleted' if data is None else 'took'} {path}") for path, data in merge.changes.items()]
    lines += [gitcommit.shown(f"kept both edits of {c.describe()}") for c in merge.conflicts]
    return redact("\n".join(lines)) + "\n"
