"""File access inside a memory folder that never follows a symlink (issue 9: least privilege).

The rule: the memory folder's own path is trusted as configured (it may sit below a symlink, like
macOS `/var -> /private/var` or a `~/.claude` kept in a dotfiles repo). Everything INSIDE it is
strict: each path component is opened relative to its parent's file descriptor with `O_NOFOLLOW`,
so a symlink anywhere below the root (`.memdir`, `team/`, `logs/`, a memory file, MEMORY.md) is
refused with one line instead of being followed, and a swap between check and use cannot redirect
the access. Final files are opened `O_NONBLOCK` (a FIFO never hangs a hook), must be regular files,
and are read up to a cap.

Stdlib only and no pathlib: the hooks use this on every prompt.

Where a folder cannot be held open nor a file opened relative to one without following a link (native Windows:
no O_DIRECTORY, no O_NOFOLLOW, no dir_fd), every component is checked with lstat instead: reads in
memdir.safefs_paths, writes in memdir.safefs_pathwrite. Never a link silently followed.

This module opens, reads and lists; changing the folder (atomic writes, appends, removals, moves, and the locks
writers hold) is memdir.safefs_write, on the same walk.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from memdir import constants as C
from memdir.errors import MemdirError

BY_DESCRIPTOR = (hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd
                 and os.stat in os.supports_dir_fd)
NO_WRITES = "writes need O_NOFOLLOW; not supported on this platform"
NO_FOLDER_FD = "this platform cannot hold a folder open without following links; not supported here"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(MemdirError, OSError):
    """A refusal: a symlink, a FIFO/device/folder where a file belongs, a path escaping the folder,
    or a file over the size cap. An OSError too, so callers that skip unreadable files skip these."""

    def __init__(self, message: str) -> None:
        MemdirError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    @property
    def strerror(self) -> str:  # type: ignore[override]
        return str(self)


def split_rel(rel: str) -> list[str]:
    """The components of a folder-relative path; anything that could leave the folder is refused."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        raise UnsafePath(f"{rel!r}: not a usable path inside the memory folder")
    if rel.startswith("/") or "\\" in rel:
        raise UnsafePath(f"{rel!r}: give a path relative to the memory folder, without backslashes")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafePath(f"{rel!r}: '..' and empty paths are not allowed inside the memory folder")
    return parts


def rel_to(root: str | os.PathLike, path: str | os.PathLike) -> str:
    """`path` relative to `root`, lexically (no symlink resolution); refused when outside it."""
    root_s = os.path.normpath(os.path.abspath(os.fspath(root)))
    path_s = os.path.normpath(os.path.abspath(os.fspath(path)))
    if path_s == root_s:
        raise UnsafePath(f"{path_s}: this is the memory folder itself, not a file in it")
    if not path_s.startswith(root_s.rstrip(os.sep) + os.sep):
        raise UnsafePath(f"{path_s}: outside the memory folder {root_s}")
    return path_s[len(root_s.rstrip(os.sep)) + 1 :].replace(os.sep, "/")


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def kind_of(mode: int) -> str:
    """What an entry is ("a symlink", "a FIFO", "a folder"...), for messages that say so."""
    return _kind(mode)


def symlink_refusal(shown: str) -> UnsafePath:
    return UnsafePath(f"{shown} is a symlink; memdir never follows symlinks inside the memory folder "
                      "(replace it with a regular file or folder)")


def hard_links(links: int) -> str:
    """What is wrong with a log whose file has `links` names (memdir never appends to one), and the fix."""
    return (f"has {links} hard links (the same file has another name, perhaps outside the memory folder); "
            "memdir never appends to it: remove it")


def only_name(fd: int, shown: str) -> int:
    """`fd`, when its file has no name but `shown`. A file memdir appends to (a log, the decision inbox and journal,
    a session's marker) hard-linked elsewhere (`ln ~/.bashrc .memdir/hook.log`, by anyone who can write the folder)
    is refused like a symlink there: appended through, lines partly taken from transcripts would land in that other
    file. Checked on the opened descriptor, so no swap after a check; the descriptor is closed on refusal."""
    links = os.fstat(fd).st_nlink
    if links > 1:
        os.close(fd)
        raise UnsafePath(f"{shown} {hard_links(links)}")
    return fd


def _open_root(root: str | os.PathLike, create: bool) -> int:
    if not BY_DESCRIPTOR:
        raise UnsafePath(NO_WRITES if create else NO_FOLDER_FD)
    root_s = os.fspath(root)
    if create:
        os.makedirs(root_s, exist_ok=True)
    return os.open(root_s, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)


def _open_dir_at(dir_fd: int, name: str, shown: str, create: bool) -> int:
    for attempt in (0, 1):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create or attempt:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                try:
                    mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
                except OSError:
                    raise exc from None
                if stat.S_ISLNK(mode):
                    raise symlink_refusal(shown) from None
                raise UnsafePath(f"{shown} is {_kind(mode)}, not a folder") from None
            raise
    raise FileNotFoundError(errno.ENOENT, "not found", shown)  # pragma: no cover


@contextlib.contextmanager
def open_dir(root: str | os.PathLike, rel_dir: str = "", create: bool = False):
    """A file descriptor for folder `rel_dir` inside root ("" = the root), walked without following symlinks."""
    fd = _open_root(root, create)
    try:
        walked: list[str] = []
        for name in split_rel(rel_dir) if rel_dir else []:
            walked.append(name)
            nfd = _open_dir_at(fd, name, "/".join(walked), create)
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def parent_and_name(rel: str) -> tuple[str, str]:
    parts = split_rel(rel)
    return "/".join(parts[:-1]), parts[-1]


def lstat(root: str | os.PathLike, rel: str) -> os.stat_result | None:
    """The entry's own stat (a symlink is reported as one), or None when absent."""
    parent, name = parent_and_name(rel)
    try:
        if not BY_DESCRIPTOR:
            from memdir import safefs_paths

            return safefs_paths.lstat(root, rel)
        with open_dir(root, parent) as dfd:
            return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def exists(root: str | os.PathLike, rel: str) -> bool:
    return lstat(root, rel) is not None


def is_regular_file(root: str | os.PathLike, rel: str) -> bool:
    try:
        st = lstat(root, rel)
    except UnsafePath:
        return False
    return st is not None and stat.S_ISREG(st.st_mode)


def open_file_at(dfd: int | None, name: str, shown: str, flags: int, mode: int = 0o644) -> int:
    try:
        fd = os.open(name, flags | NOFOLLOW | _NONBLOCK | CLOEXEC, mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.ETXTBSY):
            try:
                kind = _kind(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
            except OSError:
                raise exc from None
            if kind == "a symlink":
                raise symlink_refusal(shown) from None
            raise UnsafePath(f"{shown} is {kind}; memdir only reads and writes regular files") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{shown} is {_kind(st.st_mode)}; memdir only reads and writes regular files")
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: str | os.PathLike, rel: str, flags: int = os.O_RDONLY) -> int:
    """A descriptor for the regular file `rel` (parents walked, nothing followed); the caller closes it."""
    if not BY_DESCRIPTOR:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
            from memdir import safefs_pathwrite

            return safefs_pathwrite.open_file(root, rel, flags)
        from memdir import safefs_paths

        return safefs_paths.open_read(root, rel)
    parent, name = parent_and_name(rel)
    with open_dir(root, parent) as dfd:
        return open_file_at(dfd, name, rel, flags)


def read_bytes(root: str | os.PathLike, rel: str, max_bytes: int = C.SAFE_READ_MAX_BYTES, *,
               prefix: bool = False) -> bytes:
    """The file's bytes. Over `max_bytes`: refused, or (prefix=True) only the first `max_bytes`."""
    fd = open_file(root, rel)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        if not prefix:
            raise UnsafePath(f"{rel} is over the {max_bytes:,}-byte limit memdir reads; shorten or remove it")
        data = data[:max_bytes]
    return data


def read_text(root: str | os.PathLike, rel: str, max_bytes: int = C.SAFE_READ_MAX_BYTES, *,
              prefix: bool = False, errors: str = "strict") -> str:
    """UTF-8 text (a BOM tolerated). Not UTF-8: a one-line refusal, unless `errors` says otherwise."""
    data = read_bytes(root, rel, max_bytes, prefix=prefix)
    try:
        return data.decode("utf-8-sig", errors=errors)
    except UnicodeDecodeError:
        raise UnsafePath(f"{rel} is not UTF-8 text; re-save it as UTF-8 or remove it") from None


def read_text_or(root: str | os.PathLike, rel: str, default: str = "", max_bytes: int = C.SAFE_READ_MAX_BYTES) -> str:
    """The text, or `default` when the file (or a folder on its way) does not exist."""
    try:
        return read_text(root, rel, max_bytes)
    except (FileNotFoundError, NotADirectoryError):
        return default


def tail_lines(root: str | os.PathLike, rel: str, limit: int) -> list[str]:
    """The whole lines in the last `limit` bytes of log `rel` (never through a symlink; [] when absent), reading on
    into the end of `<rel>.1` before it when `rel` holds less: a log moved aside past its cap
    (safefs_write.append_text's rotate_at) reads as one."""
    lines, size = _tail(root, rel, limit)
    if size < limit:
        lines = _tail(root, rel + ".1", limit - size)[0] + lines
    return lines


def _tail(root: str | os.PathLike, rel: str, limit: int) -> tuple[list[str], int]:
    """The whole lines in the last `limit` bytes of `rel`, and its size (0 when absent or unreadable)."""
    try:
        fd = open_file(root, rel)
    except OSError:
        return [], 0
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - limit))
        data = handle.read(limit)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return (lines[1:] if size > limit else lines), size  # the first line of a tail may be cut


def read_json(root: str | os.PathLike, rel: str, default=None):
    """Parsed JSON state, or `default` when it is absent, unsafe, unreadable or not JSON."""
    import json

    try:
        return json.loads(read_bytes(root, rel))
    except (OSError, ValueError, RecursionError):
        return default


def listdir(root: str | os.PathLike, rel_dir: str = "") -> list[tuple[str, str]]:
    """(name, kind) of each entry: kind is file, dir, symlink or other. Symlinks are not followed."""
    out = []
    try:
        if not BY_DESCRIPTOR:
            from memdir import safefs_paths

            return safefs_paths.listdir(root, rel_dir)
        with open_dir(root, rel_dir) as dfd, os.scandir(dfd) as entries:
            for entry in entries:
                out.append((entry.name, entry_kind(entry)))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(out)


def entry_kind(entry: os.DirEntry) -> str:
    try:
        if entry.is_symlink():
            return "symlink"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass
    return "other"


def walk(root: str | os.PathLike, rel_dir: str = "", *, skip_top: tuple[str, ...] = (), hidden: bool = True):
    """Yield (rel_path, kind) for every entry below `rel_dir`, descending only into real folders.

    `skip_top` names at the top level are not entered (e.g. `.memdir`); hidden=False skips dot-names.
    """
    stack = [rel_dir]
    while stack:
        folder = stack.pop()
        try:
            items = listdir(root, folder)
        except UnsafePath:
            continue
        for name, kind in items:
            if not hidden and name.startswith("."):
                continue
            rel = f"{folder}/{name}" if folder else name
            if folder == rel_dir and name in skip_top:
                continue
            yield rel, kind
            if kind == "dir":
                stack.append(rel)


def check_inside(root: str | os.PathLike, rel_dir: str) -> None:
    """Refuse when any component of `rel_dir` below root is a symlink or not a folder (absent is fine)."""
    try:
        if not BY_DESCRIPTOR:
            from memdir import safefs_paths

            safefs_paths.folder(root, rel_dir)
            return
        with open_dir(root, rel_dir):
            pass
    except (FileNotFoundError, NotADirectoryError):
        pass
