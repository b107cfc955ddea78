"""What `list` and `doctor` learned about each memory file, kept between runs in `.memdir/`.

At 20,000 memories `doctor` spent 12 s reading every file and scanning it for secrets, and `list`
almost 1 s reading every header, though almost nothing had changed since the last run. Here each
file's header (name, description, type, problem, mtime) and doctor's per-file checks (secrets found,
**Why:**/**How to apply:** present) are cached under the file's stamp: inode, size, mtime_ns and
ctime_ns. Any write changes ctime, even one that puts the old mtime back, so a stamp that still
matches means the same bytes; anything else is read again.

    <memory folder>/.memdir/file-facts.json        (team memories: file-facts-team.json)

Bounded and safe to lose: the cache holds only files present at the last save, is written only for
folders of at least MIN_FILES memories (smaller ones are quick to read), is not written past
MAX_BYTES, and is dropped whole when memdir's checks change (VERSION hashes the code that produced
it) or when it cannot be read. Written atomically through memdir/safefs.py, like everything in
`.memdir/`; a folder memdir cannot write to just goes uncached. Recall does not use it: recall needs
each memory's opening lines, which would make this cache as big as the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from memdir import (
    constants as C,
    safefs,
    safefs_write,
    scan as one_file,  # one_file.read_header: looked up at each call
)
from memdir.record import Record
from memdir.scan import Header, ScanResult
from memdir.secrets import looks_secret

MIN_FILES = 200
MAX_BYTES = 32 << 20


def _code_version() -> str:
    """A hash of the modules whose output is cached: a new memdir (or a new secret rule) starts afresh."""
    from memdir import frontmatter_io, inert, scan, secrets

    digest = hashlib.sha256()
    for module in (scan, frontmatter_io, inert, secrets, C):
        try:
            digest.update(Path(module.__file__ or "").read_bytes())
        except OSError:
            digest.update(os.urandom(8))  # source not readable: never trust an old cache
    return digest.hexdigest()[:16]


class Checks(Record):
    """doctor's findings about one file's text: each (line, kind of secret), and the why/how lines."""

    secrets: list[tuple[int, str]]
    has_why_how: bool


class FileFacts:
    """The cache of one scanned root; `scan()` fills it, doctor adds checks, `save()` writes it."""

    def __init__(self, base: Path, prefix: str = "") -> None:
        """`base`: the personal memory folder (its `.memdir/` holds the cache); `prefix`: 'team/' or ''."""
        self.base = base
        self.rel = f"{C.STATE_DIRNAME}/file-facts{'-team' if prefix else ''}.json"
        self.version = _code_version()
        self.old: dict[str, list] = self._load()
        self.new: dict[str, list] = {}
        self.changed = False

    def _load(self) -> dict[str, list]:
        try:
            data = json.loads(safefs.read_bytes(self.base, self.rel, MAX_BYTES))
        except (OSError, ValueError):  # absent, refused (a symlink, too big) or torn: start afresh
            return {}
        if not isinstance(data, dict) or data.get("version") != self.version or not isinstance(data.get("files"), dict):
            return {}
        return data["files"]

    def header(self, rel: str, abs_path: str, st: os.stat_result, read) -> Header:
        """The header of `rel` from the cache when its stamp matches, else `read()` (and remember it).

        An entry: [inode, size, mtime_ns, ctime_ns, mtime, name, description, type, problem, checks]."""
        entry = self.old.get(rel)
        if not (type(entry) is list and len(entry) == 10 and entry[0] == st.st_ino and entry[1] == st.st_size
                and entry[2] == st.st_mtime_ns and entry[3] == st.st_ctime_ns):
            h = read()
            if looks_secret("\n".join(v for v in (rel, h.name, h.description, h.problem) if v)):
                return h  # never copied into another file: read again each time (doctor reports it)
            entry = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, h.mtime, h.name, h.description, h.type,
                     h.problem, None]
            self.changed = True
        self.new[rel] = entry
        return Header(rel, abs_path, entry[4], entry[5], entry[6], entry[7], entry[8])

    def checks(self, rel: str) -> Checks | None:
        entry = self.new.get(rel)
        if entry is None or not isinstance(entry[9], list) or len(entry[9]) != 2:
            return None
        secrets, has_why_how = entry[9]
        return Checks([(int(line), str(kind)) for line, kind in secrets], bool(has_why_how))

    def remember_checks(self, rel: str, checks: Checks) -> None:
        entry = self.new.get(rel)
        if entry is not None:
            entry[9] = [[list(s) for s in checks.secrets], checks.has_why_how]
            self.changed = True

    def save(self) -> None:
        """Write the cache for the files seen now (gone files drop out); never fails the command."""
        if len(self.new) < MIN_FILES or not (self.changed or self.new.keys() != self.old.keys()):
            return
        data = json.dumps({"version": self.version, "files": self.new}, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(data) > MAX_BYTES:
            return
        try:
            safefs_write.mkdirs(self.base, C.STATE_DIRNAME)
            safefs_write.write_bytes(self.base, self.rel, data, durable=False)
        except OSError:
            pass  # a read-only or unsafe folder: the next run reads the files again, nothing is lost


def scan(root: Path, facts: FileFacts, exclude_dirs: tuple[str, ...] = ()) -> ScanResult:
    """Like memdir.scan.scan, but headers come from `facts` when the file has not changed since,
    and carry no excerpt. For `list`, `doctor` and lookups by name, never for recall."""
    return one_file.scan_with(root, exclude_dirs, lambda path, rel, dfd: _header(root, path, rel, dfd, facts))


def _header(root: Path, path: str, rel: str, dfd: int | None, facts: FileFacts) -> Header:
    st = os.stat(path.rpartition(os.sep)[2], dir_fd=dfd, follow_symlinks=False) if dfd is not None else os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return one_file.read_header(path, root, dir_fd=dfd)  # refuses it with the usual error
    return facts.header(rel, path, st, lambda: one_file.read_header(path, root, dir_fd=dfd))
