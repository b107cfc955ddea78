"""memdir.safefs_write where a folder cannot be held open, nor a file opened relative to one without following a link:
native Windows (no O_DIRECTORY, no O_NOFOLLOW, no dir_fd). Used only there (safefs.BY_DESCRIPTOR false); Linux and
macOS keep the descriptor walk.

The same rule by path: before each change every component below the memory folder is lstat'ed (memdir.safefs_paths:
not a symlink, not a junction or other reparse point, folders are folders). Then
- a new file is created O_CREAT|O_EXCL: a name that exists, link or not, is never opened through;
- a file is replaced by a temp file made O_EXCL in the same folder, then os.replace, which replaces a link at the
  target rather than writing through it (and a link found there is refused first);
- an existing file (an append, a lock file) is opened after its lstat, and the file opened must be that very file
  (os.fstat's st_dev/st_ino against the lstat's), or nothing is written;
- removals and moves check both ends: each folder on the way and the entry itself.
What stays open is the race descriptors close: a folder on the way swapped for a junction between its check and the
use, by a process that can already change the memory folder (docs/safety.md).

Stdlib only: the hooks write their state and logs through this.
"""

from __future__ import annotations

import contextlib
import os
import stat

from memdir import safefs, safefs_paths
from memdir.safefs_write import fill, temp_name

_BINARY = getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0) | safefs.CLOEXEC
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX (the tests): a FIFO swapped in never blocks the open


def _entry(root: str | os.PathLike, rel: str, create_parent: bool,
           why: str = "memdir only reads and writes regular files") -> tuple[str, os.stat_result | None]:
    """The checked path of `rel` and its own stat (None when absent); a link or non-file there is refused."""
    parent, name = safefs.parent_and_name(rel)
    path = safefs_paths.child(safefs_paths.folder(root, parent, create=create_parent), name, rel)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, None
    return path, _regular(st, rel, why)


def _regular(st: os.stat_result, rel: str, why: str = "memdir only reads and writes regular files") -> os.stat_result:
    safefs_paths.not_a_link(st, rel)
    if not stat.S_ISREG(st.st_mode):
        raise safefs.UnsafePath(f"{rel} is {safefs.kind_of(st.st_mode)}; {why}")
    return st


def open_file(root: str | os.PathLike, rel: str, flags: int, mode: int = 0o644) -> int:
    """A descriptor for the regular file `rel` opened with `flags` (O_CREAT: made when missing), never through a
    link: a new file is created exclusively, an existing one must be the file its lstat saw. The caller closes it."""
    create, truncate = bool(flags & os.O_CREAT), bool(flags & os.O_TRUNC)
    path, st = _entry(root, rel, create_parent=create)
    if st is not None and create and flags & os.O_EXCL:
        raise FileExistsError(17, "File exists", path)
    flags = (flags & ~(os.O_CREAT | os.O_EXCL | os.O_TRUNC)) | _BINARY
    if st is None:
        if not create:
            raise FileNotFoundError(2, "No such file or directory", path)
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:  # made between the lstat and the open: checked like any existing file
            st = _regular(os.lstat(path), rel)
    fd = os.open(path, flags | _NONBLOCK)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise safefs.UnsafePath(f"{rel} was replaced while memdir opened it; nothing was written, try again")
        if _NONBLOCK:
            os.set_blocking(fd, True)
        if truncate:  # only now: the file checked is the file cut
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_new(root: str | os.PathLike, rel: str, mode: int = 0o644) -> int:
    """A descriptor for a new file `rel` (O_EXCL: FileExistsError when the name is taken, by a link or not)."""
    parent, name = safefs.parent_and_name(rel)
    path = safefs_paths.child(safefs_paths.folder(root, parent, create=True), name, rel)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)


def _shared(change, *paths: str) -> None:
    """`change(*paths)`, retried for up to ~half a second while Windows refuses it because another process has the
    file open (a hook reading MEMORY.md: Python opens files there without FILE_SHARE_DELETE). Then the error stands."""
    import time

    for wait in (0.01, 0.02, 0.05, 0.1, 0.1, 0.2, 0.0):
        try:
            change(*paths)
            return
        except PermissionError:
            if not wait:
                raise
            time.sleep(wait)


def write_bytes(root: str | os.PathLike, rel: str, data: bytes | bytearray, *, durable: bool = True) -> None:
    """safefs_write.write_bytes by path: a temp file made O_EXCL beside the target, then os.replace over it."""
    path, _ = _entry(root, rel, create_parent=True)
    folder, name = os.path.split(path)
    temp = safefs_paths.child(folder, temp_name(name), rel)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o644)
    try:
        fill(fd, data, durable)
        _entry(root, rel, create_parent=False)  # still no link at the target nor on the way
        _shared(os.replace, temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def unlink(root: str | os.PathLike, rel: str) -> None:
    """Remove one entry: its folders checked; a link itself is removed (os.unlink never follows the last name)."""
    parent, name = safefs.parent_and_name(rel)
    _shared(os.unlink, safefs_paths.child(safefs_paths.folder(root, parent), name, rel))


def _folder_entry(root: str | os.PathLike, rel: str) -> str:
    """The checked path of folder `rel` (refused when it is a link: a junction would be removed or moved as one)."""
    parent, name = safefs.parent_and_name(rel)
    path = safefs_paths.child(safefs_paths.folder(root, parent), name, rel)
    if not stat.S_ISDIR(safefs_paths.not_a_link(os.lstat(path), rel).st_mode):
        raise NotADirectoryError(20, "Not a directory", path)
    return path


def rmdir(root: str | os.PathLike, rel: str) -> None:
    """Remove one empty folder."""
    os.rmdir(_folder_entry(root, rel))


def move_folder(root: str | os.PathLike, src_rel: str, dst_rel: str) -> None:
    """Rename a folder within its parent: the source a real folder, the target absent (os.rename never replaces a
    file on Windows; a link there is refused)."""
    src = _folder_entry(root, src_rel)
    parent, name = safefs.parent_and_name(dst_rel)
    dst = safefs_paths.child(safefs_paths.folder(root, parent), name, dst_rel)
    with contextlib.suppress(FileNotFoundError):
        safefs_paths.not_a_link(os.lstat(dst), dst_rel)
    os.rename(src, dst)


def rename(root: str | os.PathLike, src_rel: str, dst_rel: str, *, create_dst_dir: bool = False) -> None:
    """safefs_write.rename by path: both ends' folders checked, the source a regular file, the target absent or one."""
    src, src_st = _entry(root, src_rel, False, "memdir only moves regular files")
    if src_st is None:
        raise FileNotFoundError(2, "No such file or directory", src)
    dst, _ = _entry(root, dst_rel, create_dst_dir, "memdir will not replace it")
    _shared(os.replace, src, dst)


def mkdirs(root: str | os.PathLike, rel_dir: str) -> None:
    safefs_paths.folder(root, rel_dir, create=True)
