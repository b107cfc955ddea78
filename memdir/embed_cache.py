"""Memory embeddings on disk, keyed by a hash of the text that was embedded (so by file content).

    <memory folder>/.memdir/embeddings/<model id>.bin

One file of fixed-size records: a 16-byte key then `dim` float32 values. Appends happen under a
lock, so a writer process and the recall server's background thread may add at the same time; a
crash mid-append leaves a partial record at the end, which readers ignore and the next writer cuts
off. A renamed or touched memory keeps its key and costs nothing; an edited one adds a record.
Records of edited or deleted memories stay until `compact()` rewrites the file atomically.

Only writers (after a memory is written), the warm recall server and batch paths import this
module: it needs numpy, and numpy's import alone exceeds the prompt hook's budget.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memdir import constants as C
from memdir.fsio import atomic_write_bytes, locked

KEY_BYTES = 16


def content_key(model_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{text}".encode()).digest()[:KEY_BYTES]


class EmbeddingCache:
    """The vectors of one memory folder for one model, reloaded only when the file changed."""

    def __init__(self, path: Path, dim: int) -> None:
        self.path, self.dim = path, dim
        self.record = np.dtype([("key", f"S{KEY_BYTES}"), ("vector", "<f4", (dim,))])
        self.rows: dict[bytes, np.ndarray] = {}
        self._seen: tuple[int, int] | None = None

    @classmethod
    def for_memory_dir(cls, memory_dir: Path, model_id: str, dim: int) -> EmbeddingCache:
        return cls(memory_dir / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / f"{model_id}.bin", dim)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def refresh(self) -> None:
        """Re-read the file if another process wrote to it since the last read."""
        stamp = self._stamp()
        if stamp != self._seen:
            self.rows = self._read()
            self._seen = stamp

    def _read(self) -> dict[bytes, np.ndarray]:
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        whole = len(data) // self.record.itemsize * self.record.itemsize
        table = np.frombuffer(data[:whole], dtype=self.record)
        # numpy's fixed-size bytes drop trailing NULs on the way out; a key ending in \0 (1 in 256)
        # would otherwise never be found again, and be re-embedded and re-appended on every refresh.
        return {bytes(key).ljust(KEY_BYTES, b"\0"): vector for key, vector in zip(table["key"], table["vector"])}

    def get(self, key: bytes) -> np.ndarray | None:
        return self.rows.get(key)

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Append records for keys not stored yet."""
        fresh = [(k, v) for k, v in zip(keys, vectors) if k not in self.rows]
        if not fresh:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path.with_suffix(".lock")):
            stored = self._read()
            fresh = list({k: v for k, v in fresh if k not in stored}.items())  # one record per key
            if fresh:
                table = np.array(fresh, dtype=self.record)
                with open(self.path, "ab") as handle:
                    whole = handle.tell() // self.record.itemsize * self.record.itemsize
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
        if not self.path.exists():
            return 0
        with locked(self.path.with_suffix(".lock")):
            wanted = live() if callable(live) else live
            stored = self._read()
            kept = [(k, v) for k, v in stored.items() if k in wanted]
            dropped = len(stored) - len(kept)
            if dropped:
                atomic_write_bytes(self.path, np.array(kept, dtype=self.record).tobytes(), durable=False)
            self.rows = dict(kept)
            self._seen = self._stamp()
            return dropped
