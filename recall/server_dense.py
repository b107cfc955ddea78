"""The warm recall server's dense model: loaded once, the query embedded beside each answer, and the
memories without a vector embedded in the background after answers (issue 26).

Part of the server (recall/server.py): split out so each module keeps one job.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from memdir import constants as C

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


# --- the dense model --------------------------------------------------------------------------
class Embedder:
    """The dense model, loaded once, and a background thread that embeds memories lacking a vector.

    The prompt is answered first with the vectors already cached; the folder is then queued here, so
    a new or edited memory gets its vector within moments, without any prompt waiting for it. A large
    backlog gets coarse vectors first, then full ones (DenseModel.fill), on DENSE_BACKGROUND_WORKERS
    threads at a lower priority; a fill yields to the queue between rounds and queues its folder again.
    """

    def __init__(self, model, workers: int | None = None, scanner: Callable | None = None) -> None:
        import queue

        self.model = model
        self.scanner = scanner  # how a folder is scanned (the server's watched views); default memdir.scan
        self.workers = workers or min(C.DENSE_BACKGROUND_WORKERS, os.cpu_count() or 1)
        self.pending: queue.Queue = queue.Queue()
        self.queued: set[str] = set()
        self.done: dict[str, tuple[int, list]] = {}  # per folder: vectors known, headers last checked
        self.lock = threading.Lock()
        threading.Thread(target=self._work, daemon=True).start()

    def refresh_later(self, memory_dir: str) -> None:
        with self.lock:
            if memory_dir in self.queued:
                return
            self.queued.add(memory_dir)
        self.pending.put(memory_dir)

    def _work(self) -> None:
        from pathlib import Path

        background_priority()  # the embedding threads this one starts inherit it
        while True:
            memory_dir = self.pending.get()
            with self.lock:
                self.queued.discard(memory_dir)
            try:
                self._refresh(Path(memory_dir))
            except Exception:  # noqa: BLE001 - a bad folder must not stop the thread serving others
                pass

    def _refresh(self, memory_dir) -> None:
        """Embed what lacks a vector, unless no memory changed since the last check: the scan hands back
        the very same Header objects for unchanged files, and hashing 20,000 passages after every
        prompt took CPU from the next one (issue 26). The folder's watched view when the server keeps
        one: a plain scan stats every file, 100 ms of CPU at 20,000 memories taken from the next prompt."""
        if self.scanner is None:
            from memdir.scan import scan

            self.scanner = scan
        headers = self.scanner(memory_dir).headers
        vectors = len(self.model.cache(memory_dir).rows)  # another process may have added or compacted them
        last = self.done.get(str(memory_dir))
        if last is not None and last[0] == vectors and last[1] is headers:
            return  # the watched view's very list: nothing changed (no 20,000-long comparison)
        if (last is not None and last[0] == vectors and len(last[1]) == len(headers)
                and all(a is b for a, b in zip(last[1], headers, strict=True))):
            return
        _, _, finished = self.model.fill(memory_dir, headers, self.workers, stop=lambda: not self.pending.empty())
        self.model.compact_if_bloated(memory_dir, len(headers))
        if finished:
            self.done[str(memory_dir)] = (len(self.model.cache(memory_dir).rows), headers)
        else:  # it gave way to a prompt or another folder: it carries on after them, from a fresh scan
            self.refresh_later(str(memory_dir))


def background_priority() -> None:
    """Lower the calling thread's priority (Linux: niceness is per thread, and threads it starts inherit
    it), so embedding in the background takes the cores only when a prompt's query and the agent leave
    them idle. Elsewhere PRIO_PROCESS would name a process, not a thread: left as it is."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), C.DENSE_BACKGROUND_NICE)


def refresh_embeddings(model, memory_dir) -> int:
    """Embed every memory of the folder that has no vector yet (files written by hand or by Claude
    Code itself); drop vectors of edited and deleted memories once they outnumber the live ones."""
    return model.refresh(memory_dir)


QUERY_THREADS = 8  # queries embedded at once; more wait for one of them (each is ~25 ms)
_query_threads = None  # concurrent.futures.ThreadPoolExecutor, made on the first query
_query_threads_lock = threading.Lock()


def _embedding_threads():
    """The threads that embed queries, kept: starting a thread per prompt made the request thread wait until
    it ran (threading.Thread.start waits for that), up to a few ms on a busy machine, before ranking a word."""
    global _query_threads
    with _query_threads_lock:
        if _query_threads is None:
            from concurrent.futures import ThreadPoolExecutor

            _query_threads = ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="memdir-query")
        return _query_threads


class QueryAhead:
    """The dense model for one request, with the query's embedding started on a thread of its own at once.

    The model's C code releases the GIL, so the query embeds (the largest share of an answer: about
    25 ms) while this request's scan and lexical ranking run, instead of after them (issue 26).
    """

    def __init__(self, model, query: str) -> None:
        self.model = model
        self._future = _embedding_threads().submit(model.embed_query, query)

    def vector(self):
        return self._future.result()  # the embedding's exception, if it raised one

    def similarities(self, memory_dir, query: str, headers: list) -> list[float | None]:
        return self.model.similarities(memory_dir, query, headers, query_vector=self.vector)


def load_embedder(scanner: Callable | None = None) -> Embedder | None:
    from memdir.embeddings import shared_model

    # One thread: a prompt's query is one short text, and on a busy machine (Claude Code itself, builds,
    # tests) a second OpenMP thread waits for a core: measured 29 ms with one thread vs 45 ms with two
    # under load. Background filling is slower, but nothing waits for it.
    model = shared_model(threads=1)
    return Embedder(model, scanner=scanner) if model is not None else None
