"""Memory embeddings on disk, keyed by a hash of the text that was embedded (so by file content).

    <memory folder>/.memdir/embeddings/<model id>.bin

One file of fixed-size records: a 16-byte key then `dim` float32 values. Appends happen under a
lock, so a writer process and the recall server's background thread may add at the same time; a
crash mid-append leaves a partial record at the end, which readers ignore and the next writer cuts
off. A renamed or touched memory keeps its key and costs nothing; an edited one adds a record.
Records of edited or deleted memories stay until `compact()` rewrites the file atomically.

Every access goes through memdir/safefs.py: a symlinked `.memdir/` or `embeddings/` is refused,
never followed out of the memory folder (writers include the extractor, which may touch only it).

Only writers (after a memory is written), the warm recall server and batch paths import this
module: it needs numpy, and numpy's import alone exceeds the prompt hook's budget.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memdir import constants as C, safefs, safefs_write

KEY_BYTES = 16


def content_key(model_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{text}".encode()).digest()[:KEY_BYTES]


class EmbeddingCache:
    """The vectors of one memory folder for one model, reloaded only when the file changed."""

    def __init__(self, path: Path, dim: int, root: Path | None = None) -> None:
        """`root`: the trusted folder `path` lies in (the memory folder); nothing below it is followed."""
        self.path, self.dim = Path(path), dim
        self.root = Path(root) if root is not None else self.path.parent
        self.rel = safefs.rel_to(self.root, self.path)
        self.lock_rel = self.rel.removesuffix(".bin") + ".lock"
        self.record = np.dtype([("key", f"S{KEY_BYTES}"), ("vector", "<f4", (dim,))])
        self.rows: dict[bytes, np.ndarray] = {}
        self._seen: tuple[int, int, int] | None = None  # (inode, size, mtime_ns) when rows were last synced
        self._read_to = 0  # bytes of whole records already in rows, of the file with inode _seen[0]
        self._last_key = b""  # the key of the record that ends at _read_to

    @classmethod
    def for_memory_dir(cls, memory_dir: Path, model_id: str, dim: int) -> EmbeddingCache:
        return cls(memory_dir / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / f"{model_id}.bin", dim, root=memory_dir)

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = safefs.lstat(self.root, self.rel)
        except OSError:
            return None
        return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)

    def refresh(self) -> None:
        """Take in what another process wrote since the last look: a stat when nothing changed."""
        if self._stamp() != self._seen:
            self._sync()

    def _sync(self) -> None:
        """Bring `rows` up to the file. Writers only ever append (or replace the whole file when they
        compact), so when the file is the one read before, only the records added since are read:
        bookkeeping stays linear in the vectors added, never the square of the count. "The one read
        before": same inode, not shorter, and the last record read is still where it was (an inode
        number can come back after a compaction)."""
        try:
            fd = safefs.open_file(self.root, self.rel)
        except (FileNotFoundError, NotADirectoryError):
            self.rows, self._seen, self._read_to = {}, None, 0
            return
        size = self.record.itemsize
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            data = b""
            if self._seen is not None and self._seen[0] == st.st_ino and size <= self._read_to <= st.st_size:
                handle.seek(self._read_to - size)
                data = handle.read(max(0, C.EMBED_CACHE_MAX_BYTES - self._read_to + size))
            appended_only = len(data) >= size and data[:KEY_BYTES] == self._last_key
            if appended_only:
                start, data = self._read_to, data[size:]
            else:  # bounded: records past the cap are simply not known (re-embedded, then compacted away)
                handle.seek(0)
                start, data = 0, handle.read(C.EMBED_CACHE_MAX_BYTES)
        rows = self.rows if appended_only else {}
        whole = len(data) // size * size
        rows.update(self._parse(data[:whole]))
        self.rows, self._read_to = rows, start + whole
        if whole:
            self._last_key = data[whole - size : whole - size + KEY_BYTES]
        self._seen = (st.st_ino, st.st_size, st.st_mtime_ns) if self._read_to else None

    def _parse(self, data: bytes) -> dict[bytes, np.ndarray]:
        table = np.frombuffer(data, dtype=self.record)
        # numpy's fixed-size bytes drop trailing NULs on the way out; a key ending in \0 (1 in 256)
        # would otherwise never be found again, and be re-embedded and re-appended on every refresh.
        return {bytes(key).ljust(KEY_BYTES, b"\0"): vector for key, vector in zip(table["key"], table["vector"], strict=True)}

    def get(self, key: bytes) -> np.ndarray | None:
        return self.rows.get(key)

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Append records for keys not stored yet."""
        fresh = [(k, v) for k, v in zip(keys, vectors, strict=True) if k not in self.rows]
        if not fresh:
            return
        with safefs_write.locked(self.root, self.lock_rel):
            self._sync()  # records other writers appended meanwhile: read from where this cache left off
            fresh = list({k: v for k, v in fresh if k not in self.rows}.items())  # one record per key
            if fresh:
                table = np.array(fresh, dtype=self.record)
                fd = safefs_write.open_created(self.root, self.rel)
                if os.fstat(fd).st_nlink > 1:
                    os.close(fd)
                    self._replace(table)
                    return
                with os.fdopen(fd, "r+b") as handle:
                    end = handle.seek(0, os.SEEK_END)
                    whole = end // self.record.itemsize * self.record.itemsize
                    handle.truncate(whole)  # a partial record left by a crash
                    handle.seek(whole)
                    handle.write(table.tobytes())
                    st = os.fstat(handle.fileno())
                self.rows.update(fresh)
                # What this process wrote is known without reading it back, unless the file was not the
                # one synced (created just now, or replaced): then the next look reads it whole.
                synced = self._seen is not None and self._seen[0] == st.st_ino and self._read_to == whole
                self._read_to = whole + len(fresh) * self.record.itemsize if synced else 0
                self._seen = (st.st_ino, st.st_size, st.st_mtime_ns) if synced else None
                self._last_key = fresh[-1][0]

    def _replace(self, table: np.ndarray) -> None:
        """The file, which has another name (`ln ~/.bashrc .memdir/embeddings/<model>.bin` by anyone who can write
        the folder, or a `cp -al` backup), replaced by rename with `table` alone: cut to whole records and appended
        through, that other file would be changed. Checked on the opened descriptor, so no swap after a check. The
        old records are not carried over (they may be that other file's bytes); their memories are embedded again."""
        safefs_write.write_bytes(self.root, self.rel, table.tobytes(), durable=False)
        self.rows, self._seen, self._read_to, self._last_key = {}, None, 0, b""
        self._sync()

    def compact(self, live: set[bytes] | Callable[[], set[bytes]]) -> int:
        """Rewrite the file without records no memory has any more; returns how many were dropped.

        `live` may be a function: it is then called under the lock, so a memory written (and its
        vector added) while the folder was being read is never dropped.
        """
        if self._stamp() is None:
            return 0
        with safefs_write.locked(self.root, self.lock_rel):
            wanted = live() if callable(live) else live
            self._sync()
            kept = [(k, v) for k, v in self.rows.items() if k in wanted]
            dropped = len(self.rows) - len(kept)
            if dropped:
                data = np.array(kept, dtype=self.record).tobytes()
                safefs_write.write_bytes(self.root, self.rel, data, durable=False)
                self._sync()  # the new file (a new inode): read once, so later appends are read from its end
            return dropped
