"""Where memory lives, in plain strings (SPEC §1): config home, project key, the resolution chain, settings.
What is turned on (native auto memory, memdir, OrchestKit's layout) is memdir.enablement.

The half of memdir.paths that every hook runs. It uses `os.path` only: `pathlib` brings in `urllib.parse`,
`ipaddress`, `fnmatch` and its own classes, about 4.5 ms of a prompt hook whose budget is four bare Python
starts (issue 26). memdir.paths wraps these in `Path` for everything else, so both give the same folders.

Paths come back as `pathlib` would print them (`clean`): the server compares the folder it resolved with
the hook's as strings, and Claude Code's own key is made from them.
"""

from __future__ import annotations

import os

from memdir import constants as C, light_json
from memdir.errors import MemdirError
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

# What a project key keeps of a path; every other character becomes "-". A set, not a pattern: with the warm
# server up, `re` (and `enum` with it, ~6 ms) is otherwise not imported by the prompt hook at all.
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
SETTINGS_MAX_BYTES = 1024 * 1024


def clean(path: str) -> str:
    """`path` as `str(PurePosixPath(path))` prints it: repeated and trailing slashes and `.` parts dropped,
    `..` kept (a symlink may stand before it), a leading `//` kept as POSIX asks; "" becomes ".". """
    if os.sep != "/":  # pragma: no cover - Windows: ntpath's rules differ, and pathlib is the reference there
        from pathlib import Path

        return str(Path(path))
    lead = "/" if path.startswith("/") else ""
    if lead and path.startswith("//") and not path.startswith("///"):
        lead = "//"
    parts = [p for p in path.split("/") if p and p != "."]
    return lead + "/".join(parts) if parts or lead else "."


def home() -> str:
    """`Path.home()`: $HOME, else the password database's entry."""
    return expanduser("~")


def expanduser(path: str) -> str:
    """`str(Path(path).expanduser())`: only the first part is expanded, and a `~` that cannot be (no such
    user, no home at all) is pathlib's RuntimeError, never a relative folder named `~...` under the cwd."""
    path = clean(path)  # first, as pathlib does: `./~` is `~`, and `~//abs` is `~` then `abs`
    if not path.startswith("~"):
        return path
    first, _, rest = path.partition("/")
    homedir = os.path.expanduser(first)
    if homedir.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return join(homedir, rest)  # under a HOME of `/`, `~//abs` is `/abs`, never `//abs`


def join(*parts: str) -> str:
    """`str(Path(*parts))`: os.path.join spelled as pathlib spells it (`.` joins to nothing)."""
    return clean(os.path.join(*parts))


def config_home(env: Mapping[str, str] | None = None) -> str:
    """$CLAUDE_CONFIG_DIR, else `~/.claude`, with `..` parts taken away as written (os.path.normpath), never by
    following symlinks: Claude Code makes every folder under it with node's path.join, which does just that, so
    `/home/a/x/../.claude` is `/home/a/.claude` for both even where x is a symlink. Kept as written, it was
    another spelling of the folder (the warm server, which normalises the folder it serves, answered a folder the
    hook did not recognise, so every prompt recalled in the hook) and, past a symlinked x, another folder."""
    env = os.environ if env is None else env
    override = env.get(C.CONFIG_HOME_ENV, "").strip()
    return nfc(clean(os.path.normpath(expanduser(override) if override else join(home(), ".claude"))))


def nfc(text: str) -> str:
    """`text` in Unicode's composed form (NFC), as Claude Code spells its config home and the project root it keys
    the memory folder by (String.normalize('NFC')): a folder named with a decomposed `é` (e and a combining
    accent, as macOS's HFS+ stores names) was another key for memdir (`cafe-`) than for Claude Code (`caf-`),
    so another folder. ASCII, as nearly every path is, costs no import."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFC", text)


def _djb2_base36(text: str) -> str:
    """Claude Code's `simpleHash`: djb2 over UTF-16 code units as a signed 32-bit int, |h| in base 36.

    Matching it exactly keeps over-long project keys identical to Claude Code's, so both tools
    share one folder.
    """
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    n = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def sanitize(path: str) -> str:
    """`/Users/alice/my-app` -> `-Users-alice-my-app`; over 200 chars: truncated plus a stable hash."""
    key = "".join(ch if ch in _KEY_CHARS else "-" for ch in path)
    if len(key) <= C.MAX_SANITIZED_LENGTH:
        return key
    return f"{key[: C.MAX_SANITIZED_LENGTH]}-{_djb2_base36(path)}"


def _read_git_file(path: str) -> str | None:
    """A small file of git's (`.git`, `commondir`, `gitdir`) as text, stripped; None when it cannot be read or
    names nothing usable (a NUL: os.path raises on it). Read as read_small_file reads: a FIFO never blocks."""
    try:
        text = read_small_file(path).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return None
    return None if "\x00" in text else text


def canonical_git_root(start: str) -> str | None:
    """The main worktree's root for `start`, so every `git worktree` of a repo maps to one folder.

    Reads `.git` directly, as Claude Code does (findGitRoot, then resolveCanonicalRoot): the first folder at or
    above `start` holding `.git`, a directory (a checkout) or a file (a linked worktree or a submodule).
    """
    folder = git_folder(start)
    return _git_root_at(folder) if folder is not None else None


def git_folder(start: str) -> str | None:
    """The first folder at or above `start` (symlinks resolved) holding a `.git` folder or file (findGitRoot)."""
    candidate = os.path.realpath(start)
    while not (os.path.isdir(os.path.join(candidate, ".git")) or os.path.isfile(os.path.join(candidate, ".git"))):
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent
    return candidate


def _git_root_at(candidate: str) -> str | None:
    """The root `candidate`'s own `.git` names, or None when it has none: a folder `.git`, its own checkout; a
    `.git` file, the main repository's root when it is a linked worktree (`worktree_repository`), else its own."""
    dot_git = os.path.join(candidate, ".git")
    if os.path.isdir(dot_git):
        return candidate
    if not os.path.isfile(dot_git):
        return None
    return worktree_repository(candidate) or candidate


def worktree_repository(candidate: str) -> str | None:
    """The repository a linked worktree at `candidate` belongs to, checked as Claude Code checks it
    (resolveCanonicalRoot), so both key the memory folder alike: the `.git` file's gitdir must lie in
    `<common dir>/worktrees/`, and that gitdir's own `gitdir` file must point back at this `.git`. A main
    repository's root is the common dir's parent; a bare repository's worktree keys by the common dir itself.
    None otherwise: a submodule (no `commondir`), or a `.git` file naming another repository's common dir. A
    cloned repository's two-line `.git` and `commondir` took another project's identity: memdir recalled that
    project's memories into this repository's sessions and saved this one's there, where Claude Code did not."""
    text = _read_git_file(os.path.join(candidate, ".git"))
    if text is None or not text.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(candidate, text[len("gitdir:"):].strip()))  # node's path.resolve
    common_text = _read_git_file(os.path.join(gitdir, "commondir"))
    back = _read_git_file(os.path.join(gitdir, "gitdir"))
    if common_text is None or back is None:
        return None
    common = os.path.normpath(os.path.join(gitdir, common_text))
    if os.path.dirname(gitdir) != os.path.join(common, "worktrees"):
        return None
    if os.path.realpath(back) != os.path.join(os.path.realpath(candidate), ".git"):
        return None
    return common if os.path.basename(common) != ".git" else os.path.dirname(common)


def project_root(cwd: str) -> str:
    """The canonical git root, or the directory itself outside git or where the only repository above it is a
    home folder's (`home_repository`). The memory folder's key is the git root all the same (`resolve`)."""
    real = os.path.realpath(cwd)
    root = canonical_git_root(cwd)
    return real if root is None or home_repository(root, real) else root


def home_repository(root: str, start: str) -> bool:
    """Whether the repository at `root`, found above `start`, is the home folder's or a folder's above it (a
    dotfiles repository, `/.git` in a container): a project without a repository of its own below it is not
    that repository's project. Claude Code keys the memory folder by it all the same, and memdir shares that
    folder; but the project's settings are the ones in its own folder (Claude Code reads them from where it
    started), its code is its own folder's, not the whole home's, and its agent memory is kept there."""
    real_root, real_start = os.path.realpath(root), os.path.realpath(start)
    if real_root == real_start:
        return False
    try:
        user_home = home()
    except RuntimeError:  # no home folder at all
        return False
    return os.path.isabs(user_home) and real_root in _self_and_parents(os.path.realpath(user_home))


def validate_configured_path(raw: str, source: str) -> str:
    """Accept an absolute folder (only a leading `~/` is expanded); anything else is a one-line error."""

    def reject(why: str) -> MemdirError:
        return MemdirError(f"{source}: {raw!r} {why}; set it to an absolute folder such as ~/notes/memory")

    if "\x00" in raw:
        raise reject("contains a NUL byte")
    value = raw.strip()
    if value in ("~", "~/") or value.startswith("~/..") or value == "~/.":
        raise reject("points at your home folder or above it")
    if value.startswith(("\\\\", "//")):
        raise reject("is a UNC/network path")
    if _drive_root(value):
        raise reject("is a bare drive root")
    if len(value) < 3:
        raise reject("is too short to be a memory folder")
    if value.startswith("~/"):
        value = os.path.join(home(), clean(value[2:]))
    if not os.path.isabs(value):
        raise reject("is not an absolute path")
    resolved = clean(os.path.normpath(value))
    if resolved == os.path.dirname(resolved) or resolved in _self_and_parents(home()):
        raise reject("points at your home folder or a folder above it")
    return resolved


def _drive_root(value: str) -> bool:
    """`C:`, `C:\\` or `C:/` (a letter, a colon, at most one slash): a string test, not a pattern the hook compiles."""
    return (len(value) in (2, 3) and value[0].isascii() and value[0].isalpha() and value[1] == ":"
            and value[2:] in ("", "\\", "/"))


def _self_and_parents(path: str) -> list[str]:
    out = [path]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


def read_small_file(path: str) -> bytes:
    """A settings file's bytes: a regular file, opened non-blocking, read bounded. A repository's
    `.claude/settings.json` is untrusted: as a symlink to /dev/zero or a FIFO it must not hang a hook."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        os.set_blocking(fd, True)
        data = handle.read(SETTINGS_MAX_BYTES + 1)
    if len(data) > SETTINGS_MAX_BYTES:
        raise OSError(0, f"over {SETTINGS_MAX_BYTES:,} bytes")
    return data


def read_settings(path: str) -> dict:
    """A Claude Code settings file, or {} when absent. Invalid JSON is a clear error, not a guess."""
    try:
        text = read_small_file(path).decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise MemdirError(f"{path}: settings are not UTF-8 text; fix or remove the file") from None
    except OSError as exc:
        raise MemdirError(f"{path}: cannot read settings ({exc.strerror or exc}); check the file") from None
    try:
        data = light_json.loads(text) if text.strip() else {}  # json's C scanner: no `json` import for a hook
    except ValueError:
        import json  # only to say where the JSON breaks

        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise MemdirError(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg}); fix or remove it") from None
        raise MemdirError(f"{path}: invalid JSON; fix or remove it") from None
    if not isinstance(data, dict):
        raise MemdirError(f"{path}: settings must be a JSON object; fix or remove it")
    return data


def user_settings_path(env: Mapping[str, str] | None = None) -> str:
    return join(config_home(env), "settings.json")


def project_settings_paths(cwd: str, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The project's `.claude/settings.json` and `settings.local.json` as Claude Code reads them: in the folder it
    started in (CLAUDE_PROJECT_DIR for its hooks, else `cwd`), not the repository's root. Claude Code 2.1.328,
    started in a subfolder, runs that folder's hooks and ignores the root's (tests/realclient checks it)."""
    env = os.environ if env is None else env
    started = env.get(C.PROJECT_DIR_ENV) or cwd
    folder = os.path.join(started, ".claude")
    return os.path.join(folder, "settings.json"), os.path.join(folder, "settings.local.json")


class Located(FrozenRecord):
    path: str
    rule: str  # which rule chose the folder, for `memdir path`
    project_root: str | None


def resolve(cwd: str | None = None, env: Mapping[str, str] | None = None) -> Located:
    """SPEC §1 order: env override, then the USER settings' autoMemoryDirectory, then the default.

    A repo's own `.claude/settings.json` is never consulted for the location: a hostile repository
    could otherwise aim memory writes at ~/.ssh.
    """
    env = os.environ if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    for name in C.PATH_OVERRIDE_ENVS:
        raw = env.get(name)
        if raw:
            return Located(validate_configured_path(raw, f"${name}"), f"environment variable {name}", None)
    settings_file = user_settings_path(env)
    configured = read_settings(settings_file).get(C.SETTINGS_DIR_KEY)
    if configured:
        if not isinstance(configured, str):
            raise MemdirError(f"{settings_file}: {C.SETTINGS_DIR_KEY} must be a string path")
        path = validate_configured_path(configured, f"{settings_file} {C.SETTINGS_DIR_KEY}")
        return Located(path, f"{C.SETTINGS_DIR_KEY} in {settings_file}", None)
    git_root = canonical_git_root(cwd)
    root = git_root or os.path.realpath(cwd)
    path = join(config_home(env), "projects", sanitize(nfc(root)), "memory")
    return Located(path, f"default for {'git root' if git_root is not None else 'folder'} {root}", root)


def decisions_dir(memory_dir: str | os.PathLike, project_root: str | os.PathLike, *, compat: bool) -> str:
    """The ONE place that says where the decision journal, graph, graph queue and their locks live:
    the memory folder's state dir, or with `compat` (OrchestKit's layout) the repository's `.claude/memory/`."""
    if compat:
        return os.path.join(clean(os.fspath(project_root)), C.ORCHESTKIT_DECISIONS_DIR)
    return os.path.join(clean(os.fspath(memory_dir)), C.STATE_DIRNAME, C.DECISIONS_DIRNAME)


def orchestkit_journal(project_root: str | os.PathLike) -> str:
    """Where OrchestKit's layout keeps the journal in a repository (read only when the user opts in)."""
    return os.path.join(clean(os.fspath(project_root)), C.ORCHESTKIT_DECISIONS_DIR, C.DECISIONS_JOURNAL)
