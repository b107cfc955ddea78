"""memdir.safefs where a folder cannot be held open, nor a file opened relative to one without following a link:
native Windows (no O_DIRECTORY, no O_NOFOLLOW, no dir_fd). Imported only there (safefs.BY_DESCRIPTOR false).

Reads, and the checked walk the writes (memdir.safefs_pathwrite) share. Each component below the memory folder is
lstat'ed first and refused when it is a link (a symlink, or any reparse point: a junction) or not a folder; the file
itself must be a regular file, and the one opened must be the very file lstat'ed (its device and inode: a file
swapped in between is refused). Nothing is followed silently. What stays open is the race descriptors close: a
folder swapped for a link between its check and the open, by a process that can already change the folder
(docs/safety.md).
"""

from __future__ import annotations

import contextlib
import os
import stat

from memdir import safefs

REPARSE_POINT = 0x400  # FILE_ATTRIBUTE_REPARSE_POINT: symlinks, junctions and mount points alike


def not_a_link(st: os.stat_result, shown: str) -> os.stat_result:
    if stat.S_ISLNK(st.st_mode) or getattr(st, "st_file_attributes", 0) & REPARSE_POINT:
        raise safefs.symlink_refusal(shown)
    return st


def child(path: str, name: str, shown: str) -> str:
    """`path`/`name`, refused when `name` has a colon: on Windows a drive (`join("D:\\memory", "C:")` is "C:", and what
    followed was read from drive C's current folder) or an alternate data stream. The memory tool's paths come from
    the model. Nor anything else that would not land in `path` once joined."""
    joined = os.path.join(path, name)
    if ":" in name or not joined.startswith(os.path.join(path, "")) or joined == os.path.join(path, ""):
        raise safefs.UnsafePath(f"{shown!r}: not a usable path inside the memory folder (a drive or a stream)")
    return joined


def folder(root: str | os.PathLike, rel_dir: str, create: bool = False) -> str:
    """The path of folder `rel_dir` inside root ("" = the root), each component checked: a folder, not a link.
    create=True makes the root and each missing folder on the way (and checks what it finds there after)."""
    path, walked = os.fspath(root), []
    if create:
        os.makedirs(path, exist_ok=True)  # the root's own path is trusted as configured
    for name in safefs.split_rel(rel_dir) if rel_dir else []:
        walked.append(name)
        shown = "/".join(walked)
        path = child(path, name, shown)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o755)
            st = os.lstat(path)
        st = not_a_link(st, shown)
        if not stat.S_ISDIR(st.st_mode):
            raise safefs.UnsafePath(f"{shown} is {safefs.kind_of(st.st_mode)}, not a folder")
    return path


def lstat(root: str | os.PathLike, rel: str) -> os.stat_result:
    """The entry's own stat, its folders checked (FileNotFoundError when it is absent)."""
    parent, name = safefs.parent_and_name(rel)
    return os.lstat(child(folder(root, parent), name, rel))


def open_read(root: str | os.PathLike, rel: str) -> int:
    """A read-only descriptor for the regular file `rel`, never through a link; the caller closes it."""
    parent, name = safefs.parent_and_name(rel)
    path = child(folder(root, parent), name, rel)
    st = not_a_link(os.lstat(path), rel)
    if not stat.S_ISREG(st.st_mode):
        raise safefs.UnsafePath(f"{rel} is {safefs.kind_of(st.st_mode)}; memdir only reads and writes regular files")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0))
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(opened.st_mode):
        os.close(fd)
        raise safefs.UnsafePath(f"{rel} was replaced while memdir opened it; try again")
    return fd


def listdir(root: str | os.PathLike, rel_dir: str) -> list[tuple[str, str]]:
    """(name, kind) of each entry of the checked folder, as safefs.listdir gives them."""
    with os.scandir(folder(root, rel_dir)) as entries:
        return sorted((entry.name, safefs.entry_kind(entry)) for entry in entries)
