"""The memory folder's history as a git repository: the one place that knows its layout and runs git.

Layout: `GIT_DIR=<memory>/.memdir/git`, the memory folder is the work tree. It is memdir's own repository,
never the user's project repository, created on first use. Tracked: every regular `*.md` file below the
folder (MEMORY.md, `team/`, agent subfolders), except hidden names, `.memdir/` and `logs/` (daily logs).

How git is run (the `git` CLI through subprocess; see `_env` and `_OPTIONS`):
- nothing of the user's git setup leaks in: no system or global config, no user attributes or excludes,
  no hooks (`core.hooksPath=/dev/null`), HOME and XDG_CONFIG_HOME point inside `.memdir/git`, and every
  inherited `GIT_*` variable is dropped except the few that say how to reach a remote (for `memdir sync`);
- git never reads or writes the work tree. memdir reads each file itself through `memdir.safefs` (no
  symlink is ever followed out of, or inside, the folder), runs the secret guard on exactly those bytes,
  and hands the same bytes to one `git fast-import` process that writes blobs, tree and commit and moves
  the branch only forward. So the bytes the guard passed are the bytes committed, and a crash or kill
  before `fast-import` finishes leaves the branch where it was (the commit is all or nothing). Committing is
  memdir/gitcommit.py's; this module runs git, creates the repository and reads it.

Every commit runs under the folder lock the store uses (`.memdir/lock`), so it must be called after a
write has released that lock. A missing `git` binary or a git failure is one line in the result (and
raised as `GitError` by the read side), never a traceback, and never blocks a memory write.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from memdir import constants as C, safefs, safefs_write
from memdir.errors import MemdirError
from memdir.secrets import redact

GIT_DIRNAME = "git"  # under .memdir/
BRANCH = "main"
REF = f"refs/heads/{BRANCH}"
_TIMEOUT = 60.0  # seconds for one git process: a hung git never hangs a memdir command forever
_SKIP_TOP = (C.STATE_DIRNAME, C.LOGS_DIRNAME)
# How to reach a remote is the user's business (memdir sync); everything else GIT_* is dropped.
_PASS_GIT_ENV = frozenset({"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
                           "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY", "GIT_TRACE"})
_OPTIONS = ("-c", f"core.hooksPath={os.devnull}", "-c", f"core.attributesFile={os.devnull}",
            "-c", f"core.excludesFile={os.devnull}", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false",
            "-c", "gc.autoDetach=false")
# Written once into the repository's own config at creation.
_REPO_CONFIG = (
    ("core.autocrlf", "false"),  # bytes in, the same bytes out
    ("core.symlinks", "false"),  # memdir never commits a symlink (it skips them); never make one on checkout
    ("core.filemode", "false"),
    ("core.logAllRefUpdates", "always"),
    ("gc.reflogExpire", "never"),  # every commit the branch ever pointed at stays reachable from the reflog
    ("gc.reflogExpireUnreachable", "never"),
    ("gc.pruneExpire", "never"),  # gc packs objects, never deletes one
    ("gc.worktreePruneExpire", "never"),
    ("commit.gpgSign", "false"),
    ("user.name", "memdir"),
    ("user.email", "memdir@memdir.invalid"),
)
# The keys `git init` writes (on any OS) besides _REPO_CONFIG: any other key in the repository's config was
# planted, and git would obey it (url.X.insteadOf to an ext:: command, diff.X.textconv, core.sshCommand...).
_INIT_KEYS = frozenset({"core.repositoryformatversion", "core.bare", "core.logallrefupdates", "core.filemode",
                        "core.ignorecase", "core.precomposeunicode", "core.symlinks",
                        "core.worktree"})  # core.worktree: GIT_WORK_TREE, always set, overrides it
_ALLOWED_KEYS = _INIT_KEYS | {key.lower() for key, _ in _REPO_CONFIG}
_EXCLUDE = "# memdir tracks memory files only\n/.memdir/\n/logs/\n.*\n*\n!*/\n!*.md\n"


class GitError(MemdirError):
    """git is missing or one git command failed: the message is one line naming what and the fix."""



def git_dir(memory_dir: Path) -> Path:
    return Path(memory_dir) / C.STATE_DIRNAME / GIT_DIRNAME


def exists(memory_dir: Path) -> bool:
    return safefs.is_regular_file(memory_dir, f"{C.STATE_DIRNAME}/{GIT_DIRNAME}/HEAD")


# --- running git -----------------------------------------------------------------------------------
def _env(memory_dir: Path) -> dict[str, str]:
    home = git_dir(memory_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _PASS_GIT_ENV}
    env.update(GIT_DIR=str(home), GIT_WORK_TREE=str(memory_dir), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_ATTR_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
               HOME=str(home), XDG_CONFIG_HOME=str(home / "no-user-config"), LC_ALL="C", LANGUAGE="C")
    return env


def run(memory_dir: Path, *args: str, input: bytes | None = None, check: bool = True,
        timeout: float = _TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` on the memory folder's repository, isolated from the user's git setup.
    Raises GitError (one line) when git is missing, times out, or (check=True) exits non-zero."""
    memory_dir = Path(memory_dir)
    _check_config(memory_dir)
    try:
        done = subprocess.run(["git", *_OPTIONS, *args], input=input, capture_output=True, env=_env(memory_dir),
                              cwd=memory_dir, timeout=timeout, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH); install git to keep the memory folder's "
                       "history (memory writes go on without it)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took more than {timeout:.0f}s in {git_dir(memory_dir)}; "
                       "run `memdir doctor` and retry") from None
    except OSError as exc:
        raise GitError(f"git could not run: {exc.strerror or exc}") from None
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed in {git_dir(memory_dir)}: {_first_line(done.stderr)}")
    return done


_checked: dict[str, bytes] = {}  # config path -> the bytes found clean (one check per change, not per git run)
_links_checked: dict[str, float] = {}  # config path -> when the repository was last found free of symlinks
_RECHECK_SECONDS = 30.0  # a long-running process (the recall server) looks again after this


def _check_links(memory_dir: Path) -> None:
    """Refuse a repository holding a symlink (`refs` linked into the user's project repository): git
    writes through links, so memdir's branch would land in another repository."""
    base = f"{C.STATE_DIRNAME}/{GIT_DIRNAME}"
    stack, link = [base], None
    while stack and link is None:
        folder = stack.pop()
        for name, kind in safefs.listdir(memory_dir, folder):
            if kind == "symlink":
                link = f"{folder}/{name}"
            elif kind == "dir" and folder != f"{base}/objects":  # objects/xx, objects/pack hold files git
                stack.append(f"{folder}/{name}")                 # only creates or reads: never listed
    if link is not None:
        raise GitError(f"{Path(memory_dir) / link} is a symlink; memdir never writes through one: remove it "
                       f"(or move {git_dir(memory_dir)} away and memdir makes a new history)")


def _check_config(memory_dir: Path) -> None:
    """Refuse a repository whose config holds a key memdir never writes: whoever can write the memory
    folder can write `.memdir/git/config`, and git would run the command a planted key names."""
    rel = f"{C.STATE_DIRNAME}/{GIT_DIRNAME}/config"
    try:
        data = safefs.read_bytes(memory_dir, rel)
    except FileNotFoundError:
        return  # no repository yet: `ensure` creates it with its own config
    except OSError as exc:
        raise GitError(f"{Path(memory_dir) / rel}: unreadable ({exc.strerror or exc}); remove {git_dir(memory_dir)} "
                       "and memdir makes a new one") from None
    key = str(Path(memory_dir) / rel)
    if _checked.get(key) == data and time.monotonic() - _links_checked.get(key, -1e9) < _RECHECK_SECONDS:
        return
    _check_links(memory_dir)
    _links_checked[key] = time.monotonic()
    if _checked.get(key) == data:
        return
    try:
        done = subprocess.run(["git", "config", "--file", "-", "--list", "--name-only", "-z"], input=data,
                              capture_output=True, env=_env(memory_dir), cwd=memory_dir, timeout=_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git could not read {key}: {exc}") from None
    names = {name.decode("utf-8", "replace").lower() for name in done.stdout.split(b"\0") if name}
    planted = sorted(names - _ALLOWED_KEYS)
    if done.returncode != 0 or planted:
        what = f"settings memdir never writes ({', '.join(planted[:3])})" if planted else "a config git cannot read"
        raise GitError(f"{key} holds {what}; git would obey them, so memdir will not run git there: remove "
                       "those lines (or the whole folder, after copying anything you need from it)")
    _checked[key] = data


def _first_line(stderr: bytes) -> str:
    """git's own reason: its `fatal:`/`error:` line when there is one (hints and warnings are noise)."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    reason = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "")
    return redact(reason) or "no message"


# --- creating the repository ---------------------------------------------------------------------
def ensure(memory_dir: Path) -> None:
    """Create the repository on first use (call under the folder lock). Built in a temp folder and
    renamed into place, so a crash mid-creation never leaves a half-made repository."""
    memory_dir = Path(memory_dir)
    if exists(memory_dir):
        return
    safefs.check_inside(memory_dir, f"{C.STATE_DIRNAME}/{GIT_DIRNAME}")  # `.memdir` must not be a symlink
    safefs_write.mkdirs(memory_dir, C.STATE_DIRNAME)
    temp_name = f"{GIT_DIRNAME}{C.TEMP_MARKER}{os.getpid()}-{os.urandom(4).hex()}"
    temp = memory_dir / C.STATE_DIRNAME / temp_name
    env = _env(memory_dir) | {"GIT_DIR": str(temp)}
    try:
        for args in (("init", "-q", f"--initial-branch={BRANCH}", "--template="),
                     *(("config", key, value) for key, value in _REPO_CONFIG)):
            _run_env(env, memory_dir, args)
        safefs_write.write_text(memory_dir, f"{C.STATE_DIRNAME}/{temp_name}/info/exclude", _EXCLUDE)
        safefs_write.move_folder(memory_dir, f"{C.STATE_DIRNAME}/{temp_name}", GIT_DIRNAME)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _run_env(env: dict[str, str], cwd: Path, args: tuple[str, ...]) -> None:
    try:
        done = subprocess.run(["git", *_OPTIONS, *args], capture_output=True, env=env, cwd=cwd,
                              timeout=_TIMEOUT, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH); install git to keep the memory folder's "
                       "history (memory writes go on without it)") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} could not run: {exc}") from None
    if done.returncode != 0:
        raise GitError(f"git {args[0]} failed creating {git_dir(cwd)}: {_first_line(done.stderr)}")


# --- what is on disk, what is committed -----------------------------------------------------------
def tracked(name: str) -> bool:
    """A path memdir's history tracks: a `*.md` with no hidden component, outside `.memdir/` and `logs/`."""
    parts = name.split("/")
    return (name.endswith(".md") and parts[0] not in _SKIP_TOP
            and not any(part.startswith(".") or not part for part in parts))


def disk_files(memory_dir: Path) -> list[str]:
    """Every tracked regular file in the folder (symlinks and special files are never tracked)."""
    return sorted(rel for rel, kind in safefs.walk(memory_dir, skip_top=_SKIP_TOP, hidden=False)
                  if kind == "file" and tracked(rel))


def head(memory_dir: Path) -> str | None:
    """The branch's commit, or None before the first commit."""
    done = run(memory_dir, "rev-parse", "--verify", "-q", f"{REF}^{{commit}}", check=False)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def committed_files(memory_dir: Path, commit: str | None) -> dict[str, str]:
    """path -> blob id of every file in `commit` (empty before the first commit). A submodule entry (a
    commit id, which a synced branch can hold when someone pushed one) is no file: left out."""
    if commit is None:
        return {}
    out = run(memory_dir, "ls-tree", "-r", "-z", "--full-tree", commit).stdout
    files = {}
    for entry in out.split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            _mode, kind, blob = meta.split()[:3]
            if kind == b"blob":
                files[os.fsdecode(path)] = blob.decode()
    return files


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (SHA-1 repositories, which `ensure` creates)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def read_blob(memory_dir: Path, blob: str) -> bytes:
    return run(memory_dir, "cat-file", "blob", blob).stdout



# --- reading history -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FileChange:
    status: str  # A (created), M (updated), D (deleted)
    path: str
    old_blob: str | None  # the bytes before (None when created)
    new_blob: str | None  # the bytes after (None when deleted)


@dataclasses.dataclass(frozen=True)
class Change:
    """One commit: who, when, why (the message), and what it did to each file."""

    commit: str
    time: int
    author: str
    message: str
    files: tuple[FileChange, ...]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


_ZERO = "0" * 40
_LOG_FORMAT = "%x1e%H%x1f%at%x1f%an%x1f%B%x1d"


def changes(memory_dir: Path, path: str | None = None, limit: int | None = None) -> list[Change]:
    """Commits newest first (those touching `path` only, when given), each with its file changes.
    Empty when there is no repository or no commit yet."""
    memory_dir = Path(memory_dir)
    if not exists(memory_dir) or head(memory_dir) is None:
        return []
    # --full-history: a sync merge keeps one side's version of a file, and the other side's edit must
    # still be listed (git's default simplification would follow only the side the merge kept).
    args = ["log", "-z", "--raw", "--no-abbrev", "--no-renames", "--full-history", f"--format={_LOG_FORMAT}"]
    if limit is not None:
        args.append(f"-n{max(0, limit)}")
    args += [REF, "--"]
    if path is not None:
        args.append(f":(literal){path}")
    out = run(memory_dir, *args).stdout
    return [_parse_change(record) for record in out.split(b"\x1e") if record.strip(b"\0\n")]


def _parse_change(record: bytes) -> Change:
    header, _, raw = record.partition(b"\x1d")
    sha, when, author, message = header.decode("utf-8", "replace").split("\x1f", 3)
    fields = raw.strip(b"\0\n").split(b"\0")
    files = []
    for meta, name in zip(fields[::2], fields[1::2], strict=False):
        parts = meta.decode().lstrip("\n:").split()
        if len(parts) < 5:
            continue
        old, new, status = parts[2], parts[3], parts[4][:1]
        files.append(FileChange(status, os.fsdecode(name), None if old == _ZERO else old,
                                None if new == _ZERO else new))
    return Change(sha, int(when or 0), author, message.strip("\n") + "\n", tuple(files))


def blob_sizes(memory_dir: Path, blobs: list[str]) -> dict[str, int]:
    """blob id -> size in bytes, in one git process."""
    wanted = sorted({b for b in blobs if b})
    if not wanted:
        return {}
    out = run(memory_dir, "cat-file", "--batch-check=%(objectname) %(objectsize)",
              input="\n".join(wanted).encode() + b"\n").stdout.decode()
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes
