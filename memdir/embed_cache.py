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

from memdir import constants as C, safefs

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
        self._seen: tuple[int, int] | None = None

    @classmethod
    def for_memory_dir(cls, memory_dir: Path, model_id: str, dim: int) -> EmbeddingCache:
        return cls(memory_dir / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / f"{model_id}.bin", dim, root=memory_dir)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = safefs.lstat(self.root, self.rel)
        except OSError:
            return None
        return None if st is None else (st.st_size, st.st_mtime_ns)

    def refresh(self) -> None:
        """Re-read the file if another process wrote to it since the last read."""
        stamp = self._stamp()
        if stamp != self._seen:
            self.rows = self._read()
            self._seen = stamp

    def _read(self) -> dict[bytes, np.ndarray]:
        try:  # bounded: records past the cap are simply not known (re-embedded, then compacted away)
            data = safefs.read_bytes(self.root, self.rel, C.EMBED_CACHE_MAX_BYTES, prefix=True)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        whole = len(data) // self.record.itemsize * self.record.itemsize
        table = np.frombuffer(data[:whole], dtype=self.record)
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
        with safefs.locked(self.root, self.lock_rel):
            stored = self._read()
            fresh = list({k: v for k, v in fresh if k not in stored}.items())  # one record per key
            if fresh:
                table = np.array(fresh, dtype=self.record)
                folder, _, name = self.rel.rpartition("/")
                with safefs.open_dir(self.root, folder, create=True) as dfd:
                    fd = safefs.open_file_at(dfd, name, self.rel, os.O_RDWR | os.O_CREAT)
                with os.fdopen(fd, "r+b") as handle:
                    end = handle.seek(0, os.SEEK_END)
                    whole = end // self.record.itemsize * self.record.itemsize
                    handle.truncate(whole)  # a partial record left by a crash
                    handle.seek(whole)
                    handle.write(table.tobytes())
                stored.update(fresh)
            self.rows = stored
            self._seen = self._stamp()

    def compact(self, live: set[bytes] | Callable[[], set[bytes]]) -> int:
        """Rewrite the file without records no memory has any more; returns how many were dropped.

        `live` may be a function: it is then called under the lock, so a memory written (and its
        vector added) while the folder was being read is never dropped.
        """
        if self._stamp() is None:
            return 0
        with safefs.locked(self.root, self.lock_rel):
            wanted = live() if callable(live) else live
            stored = self._read()
            kept = [(k, v) for k, v in stored.items() if k in wanted]
            dropped = len(stored) - len(kept)
            if dropped:
                data = np.array(kept, dtype=self.record).tobytes()
                safefs.write_bytes(self.root, self.rel, data, durable=False)
            self.rows = dict(kept)
            self._seen = self._stamp()
            return dropped
