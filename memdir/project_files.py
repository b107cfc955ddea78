"""The project's files as memdir.verify reads them to check what memories name: which folder is the project,
which files count as its code (git-ignored ones do not), and a bounded, symlink- and FIFO-safe read of each.
"""

from __future__ import annotations

import fnmatch
import os
import time

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                       ".pytest_cache", ".tox", ".ruff_cache", "dist", "build", ".memdir", ".idea", ".next"})
MAX_FILE_BYTES = 512 * 1024
BINARY_SUFFIXES = frozenset(".png .jpg .jpeg .gif .ico .pdf .zip .gz .tar .whl .so .dylib .dll .exe .bin .pyc "
                            ".woff .woff2 .ttf .mp4 .mp3 .lock .sqlite .db .npy .onnx".split())


def read_project_file(path: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """At most `limit` bytes of a regular file of the project, or None for anything else.

    A repository can track a symlink to a FIFO or a device: opening the FIFO blocks forever, and
    opening a device can act (a tape rewinds). It can also track a symlink to any file outside the project
    (`notes.txt -> ~/.ssh/id_ed25519`), which verify then read and searched. So a symlink is never followed
    (a link to a file of the project loses nothing: the file itself is read), the type is checked before the
    open, the open is non-blocking (a FIFO swapped in after the check does not block) and does not follow a
    link swapped in, and fstat checks again what was actually opened.
    """
    import stat

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags)
    except (OSError, ValueError):  # ValueError: a NUL in a name from `git ls-files` output
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_project_text(path: str, limit: int = MAX_FILE_BYTES) -> str | None:
    data = read_project_file(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def project_root(start: str) -> str:
    """The nearest folder at or above `start` holding `.git`, or `start` itself (none, or only a home folder's
    dotfiles repository: memdir.locate.home_repository; its whole tree is not the project's code)."""
    from memdir.locate import home_repository

    folder = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return os.path.abspath(start) if home_repository(folder, start) else folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.abspath(start)
        folder = parent


def _ignore_patterns(root: str) -> list[str]:
    text = _read_project_text(os.path.join(root, ".gitignore"), 65536)
    if text is None:
        return []
    lines = text.splitlines()
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored(rel: str, name: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if "/" in pattern.lstrip("/"):
            if fnmatch.fnmatch(rel, pattern.lstrip("/")):
                return True
        elif fnmatch.fnmatch(name, pattern.lstrip("/")):
            return True
    return False


def walk_files(root: str, patterns: list[str] | None = None, deadline: float | None = None):
    """Project text files (rel path, abs path), git-ignored and vendored folders skipped. It stops at
    `deadline` (time.monotonic()) between any two entries, not only the files it yields: a tree of images or
    ignored logs yields none, and was listed whole past the caller's budget (50,000 images: 77 ms of 10)."""
    patterns = _ignore_patterns(root) if patterns is None else patterns
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(root, rel_dir)), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if deadline is not None and time.monotonic() > deadline:
                return
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if _ignored(rel, entry.name, patterns):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append(rel)
                elif entry.is_file(follow_symlinks=False) and os.path.splitext(entry.name)[1].lower() not in BINARY_SUFFIXES:
                    yield rel, entry.path
            except OSError:
                continue


def git_files(root: str) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files per `git ls-files` (CLI/batch path only)."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                             capture_output=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [p for p in out.decode("utf-8", "replace").split("\0") if p]
