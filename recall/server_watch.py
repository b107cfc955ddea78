"""The warm recall server's view of each memory folder, kept current by the kernel's change events (issue 26).

`memdir.scan` checks every file's stamp on every scan: a stat per memory, about 100 ms of the server's
answer at 20,000 memories on a loaded machine, paid prompt after prompt for a folder that rarely changes.
On Linux the server asks inotify instead: a watch on the folder and each of its subfolders reports
every file created, written, renamed or deleted in them, queued by the kernel when the change happens.
Each request first reads what is queued:
- nothing: the previous scan's result is still exact, and is returned as it is (the same objects);
- changes to memory files (`*.md`): the folder is listed again (the listing order decides ties, as in
  `scan`), and only the files named in the events are read again;
- anything else that could change what `scan` sees (a folder created, removed, renamed or swapped for
  a symlink, the watched folder itself moved, a lost event queue): everything is watched and scanned
  afresh.
The watch is set before the scan it covers, so a change made during that scan is seen by the next
request. Where inotify is missing (macOS, Windows) or refuses (out of watches), `scan` runs as before.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading

from memdir import constants as C
from memdir.scan import ScanResult, _read_header_cached, iter_memory_files, scan, scan_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# <sys/inotify.h>
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x01000000, 0x02000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0)
WATCHED = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
           | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
RESCAN = IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW | IN_IGNORED  # the watch itself no longer holds
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name


def _inotify():
    """libc's inotify functions, or None where there are none."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError, ImportError):
        return None


MAX_WATCHED_FOLDERS = 256  # per memory folder; memdir itself makes 2 (the folder, team/)


class FolderView:
    """One memory folder: its last scan and the watches that say when that scan stops being exact."""

    def __init__(self, root: Path, libc) -> None:
        self.root, self.libc = root, libc
        self.fd = -1
        self.folders: dict[int, str] = {}  # watch descriptor -> folder path
        self.result: ScanResult | None = None
        self.identity: tuple[int, int] | None = None  # the folder's (device, inode) when last rebuilt
        self.lock = threading.Lock()  # the server answers prompts on several threads

    def scan(self) -> ScanResult:
        with self.lock:
            # One stat a prompt: a parent renamed and a new folder made at the same path, or a symlinked
            # parent pointed at another project, changes no watched folder (found by a hostile review).
            if self.result is None or self.fd < 0 or _identity(self.root) != self.identity:
                return self._rebuild()
            changed = self._changes()
            if changed is None:
                return self._rebuild()
            if changed:
                self.result = self._rescan(changed)
            return self.result

    def retire(self) -> None:
        """No longer kept: its watches are closed, and a thread still holding it scans plainly."""
        with self.lock:
            self.libc = None
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        self.fd, self.folders, self.result = -1, {}, None

    def _rebuild(self) -> ScanResult:
        """Watch every folder `scan` walks, then scan: a change during the scan is queued for the next."""
        self.close()
        self.identity = _identity(self.root)
        if self.libc is not None:
            fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd >= 0:
                self.fd = fd
                folders = self._folders()
                # A planted tree of thousands of folders would take the user's watches from editors and other
                # tools (a hostile review held 5,001): past the cap this folder is scanned plainly instead.
                if len(folders) > MAX_WATCHED_FOLDERS or not all(self._watch(folder) for folder in folders):
                    self.close()  # too many folders, out of watches, or a folder vanished meanwhile: plain scans
        result = scan(self.root)
        if self.fd >= 0:
            self.result = result
        return result

    def _folders(self) -> list[str]:
        """The folders the scan walks (memdir.scan.iter_memory_files: state, logs and hidden ones left out)."""
        found: list[str] = []
        iter_memory_files(self.root, folders=found)
        return found

    def _watch(self, folder: str) -> bool:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), WATCHED)
        if wd < 0:
            return False
        self.folders[wd] = folder
        return True

    def _changes(self) -> set[str] | None:
        """The memory files changed since the last look (paths), or None when only a new scan is exact."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return changed
            except OSError:
                return None
            if not data:
                return changed
            offset = 0
            while offset + EVENT.size <= len(data):
                wd, mask, _cookie, size = EVENT.unpack_from(data, offset)
                name = data[offset + EVENT.size : offset + EVENT.size + size].rstrip(b"\0")
                offset += EVENT.size + size
                if mask & RESCAN or wd not in self.folders:
                    return None
                path = _relevant(self.folders[wd], name, mask)
                if path is None:
                    return None
                if path:
                    changed.add(path)

    def _rescan(self, changed: set[str]) -> ScanResult:
        """The folder listed again, with the unchanged files' headers as they were (no stat, no read)."""
        assert self.result is not None
        known = {h.abs_path: h for h in self.result.headers}
        root = self.root

        def read(path: str, rel: str, dfd: int | None):
            header = known.get(path)
            if header is not None and path not in changed:
                return header
            return _read_header_cached(path, root, C.HEADER_SCAN_LINES, dfd)

        return scan_with(root, (), read)


def _identity(root: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(root)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _relevant(folder: str, raw_name: bytes, mask: int) -> str | None:
    """What an event means for the scan: a memory file's path (changed), "" (nothing `scan` sees),
    or None (a folder or something unknown changed: scan afresh)."""
    name = os.fsdecode(raw_name)
    if not name or name.startswith("."):
        return ""  # the folder's own attributes, or a hidden name `scan` never reads (atomic writes' temporaries)
    if mask & IN_ISDIR:
        return None
    if name.endswith(".md"):
        return "" if name == C.INDEX_NAME else os.path.join(folder, name)
    return ""  # a file that is not a memory; a symlink `scan` would not follow


class FolderViews:
    """The server's views, one per memory folder served."""

    def __init__(self, limit: int = 16) -> None:
        self.libc = _inotify()
        self.limit = limit
        self.views: dict[str, FolderView] = {}
        self.lock = threading.Lock()

    def scan(self, root: Path) -> ScanResult:
        key = str(root)
        with self.lock:
            view = self.views.get(key)
            if view is None:
                if len(self.views) >= self.limit:  # the oldest view's watches are let go
                    self.views.pop(next(iter(self.views))).retire()
                view = self.views[key] = FolderView(root, self.libc)
        return view.scan()

