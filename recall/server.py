"""A warm recall server, so the prompt hook can use the llm engine without importing the SDK.

Every prompt hook is a fresh process, and importing `anthropic` there costs ~1.8 s before the
API is even called. Instead, the first hook that wants the llm engine starts this server in the
background (and answers that prompt offline); later hooks send their query over a Unix socket and
get the rendered memories back in about the API's own latency.

One server runs per user and memory root (recall/server_socket.py: where its socket lives, and why
only its user can reach it). Each request carries its session's endpoint, credentials and settings,
so sessions with different ANTHROPIC_BASE_URL share the server, each answered through its own SDK
client. It serves only its user's memory folders (recall/server_scope.py), and exits after
MEMDIR_RECALL_SERVER_IDLE seconds without a request (30 minutes by default), so nothing is left
running once the sessions end. `MEMDIR_RECALL_SERVER=0` turns it off (the hook then imports the SDK).

It is bounded against a flood or a misbehaving client of its own user: at most MAX_CONNECTIONS
requests in progress (more get a "busy" reply at once), a request must arrive whole within
READ_SECONDS and hold at most MAX_REQUEST bytes, and running out of file descriptors (EMFILE) or
threads pauses accepting instead of ending the server.

The server is also where recall's dense model lives (memdir/embeddings.py): numpy and the weights load
once here, offline prompts are answered here too when the model is installed, and a background thread
embeds memories that lack a vector after each answer (memories written through memdir already have
one: the writer stores it) and compacts the vector file. Hooks never load the model; without a server
they answer lexically.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time

from memdir import constants as C
from memdir.stages.recall.server_socket import (
    IDLE_SECONDS_ENV,
    REQUEST_ENV_PREFIX,
    make_private_folder,
    per_request,
    same_user,
    socket_path,
)

DEFAULT_IDLE = 1800.0
MAX_REQUEST = 1 << 20  # bytes: a prompt and a few fields
MAX_CONNECTIONS = 32  # requests answered at once; each holds one thread and one descriptor
BACKLOG = 128  # a burst of prompt hooks waits in the queue instead of being refused
READ_SECONDS = 5.0  # the whole request, not each read: a client trickling bytes cannot hold a thread
SEND_SECONDS = 10.0
# Sent as soon as a connection of this user is accepted: the hook then knows a live server will answer
# (recall_race). JSON allows whitespace before a value, so a client that does not look for it parses the
# reply (or a "busy" or error reply) as before.
TAKEN = b" "
LINGER_SECONDS = 1.0  # after an error reply: how long unread bytes are dropped before closing
ACCEPT_RETRY_SECONDS = 0.05  # after a failed accept (EMFILE...): a pause, not a busy loop
CLIENTS_KEPT = 8  # SDK clients, one per endpoint and credentials, most recently used kept
_ENVIRON_LOCK = threading.Lock()  # os.environ is briefly swapped while an SDK client is built


# --- per-request configuration ------------------------------------------------------------------
def effective_env(request: dict) -> dict[str, str]:
    """The server's own environment with the request's per-request part (server_socket.request_env)
    in place of its own: the endpoint, credentials and settings of the session that asked."""
    sent = request.get("env") or {}
    if not isinstance(sent, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in sent.items()):
        raise ValueError("the request's 'env' must map names to strings")
    with _ENVIRON_LOCK:
        base = {k: v for k, v in os.environ.items() if not per_request(k)}
    return {**base, **{k: v for k, v in sent.items() if per_request(k)}}


@contextlib.contextmanager
def _sdk_environment(values: dict[str, str]):
    """The SDK reads its endpoint and credentials from os.environ while a client is built (profiles,
    federation and custom headers have no other way in), so it is shown exactly one request's
    ANTHROPIC_* variables for that moment, and the server's own afterwards."""
    with _ENVIRON_LOCK:
        saved = {k: v for k, v in os.environ.items() if k.startswith(REQUEST_ENV_PREFIX)}
        for name in saved:
            del os.environ[name]
        os.environ.update(values)
        try:
            yield
        finally:
            for name in [k for k in os.environ if k.startswith(REQUEST_ENV_PREFIX)]:
                del os.environ[name]
            os.environ.update(saved)


class ClientCache:
    """One SDK client per endpoint, credentials and timeout; the few most recently used are kept."""

    def __init__(self, limit: int = CLIENTS_KEPT) -> None:
        from collections import OrderedDict

        self.limit = limit
        self.lock = threading.Lock()
        self.clients: OrderedDict = OrderedDict()

    def get(self, env: dict[str, str], timeout: float):
        from memdir.llm import make_client

        sdk_env = tuple(sorted((k, v) for k, v in env.items() if k.startswith(REQUEST_ENV_PREFIX)))
        key = (sdk_env, timeout)
        with self.lock:
            if key in self.clients:
                self.clients.move_to_end(key)
                return self.clients[key]
            with _sdk_environment(dict(sdk_env)):
                client = make_client(timeout=timeout, env=env)
            self.clients[key] = client
            while len(self.clients) > self.limit:
                self.clients.popitem(last=False)  # dropped, not closed: a thread may still be using it
            return client


# --- the dense model --------------------------------------------------------------------------
class Embedder:
    """The dense model, loaded once, and a background thread that embeds memories lacking a vector.

    The prompt is answered first with the vectors already cached; the folder is then queued here, so
    a new or edited memory gets its vector within moments, without any prompt waiting for it. A large
    backlog gets coarse vectors first, then full ones (DenseModel.fill), on DENSE_BACKGROUND_WORKERS
    threads at a lower priority; a fill yields to the queue between rounds and queues its folder again.
    """

    def __init__(self, model, workers: int | None = None) -> None:
        import queue

        self.model = model
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
        headers = scan_folder(memory_dir).headers
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


class QueryAhead:
    """The dense model for one request, with the query's embedding started on its own thread at once.

    The model's C code releases the GIL, so the query embeds (the largest share of an answer: about
    25 ms) while this request's scan and lexical ranking run, instead of after them (issue 26).
    """

    def __init__(self, model, query: str) -> None:
        self.model = model
        self._box: list = []
        self._thread = threading.Thread(target=self._embed, args=(query,), daemon=True)
        self._thread.start()

    def _embed(self, query: str) -> None:
        try:
            self._box.append(self.model.embed_query(query))
        except Exception as exc:  # noqa: BLE001 - raised where the vector is asked for, as before
            self._box.append(exc)

    def vector(self):
        self._thread.join()
        if isinstance(self._box[0], Exception):
            raise self._box[0]
        return self._box[0]

    def similarities(self, memory_dir, query: str, headers: list) -> list[float | None]:
        return self.model.similarities(memory_dir, query, headers, query_vector=self.vector)


def load_embedder() -> Embedder | None:
    from memdir.embeddings import shared_model

    # One thread: a prompt's query is one short text, and on a busy machine (Claude Code itself, builds,
    # tests) a second OpenMP thread waits for a core: measured 29 ms with one thread vs 45 ms with two
    # under load. Background filling is slower, but nothing waits for it.
    model = shared_model(threads=1)
    return Embedder(model) if model is not None else None


# --- the folders served ---------------------------------------------------------------------------
_views = None  # recall.server_watch.FolderViews, once serve() keeps them


def keep_folder_views() -> None:
    """Scan each folder served through a view kept current by change events (recall.server_watch)."""
    global _views
    if _views is None:
        from memdir.stages.recall.server_watch import FolderViews

        _views = FolderViews()


def scan_folder(memory_dir):
    """The folder's scan: from its watched view when the server keeps them, else a plain `scan`."""
    if _views is not None:
        return _views.scan(memory_dir)
    from memdir.scan import scan

    return scan(memory_dir)


# --- names checked against the code -------------------------------------------------------------
_rechecker = None  # memdir.verdicts.Rechecker, once serve() keeps verdicts


def keep_verdicts() -> None:
    """Remember names checked against each project, and check the rest after replying (memdir.verdicts)."""
    global _rechecker
    if _rechecker is None:
        from memdir.verdicts import Rechecker, Verdicts

        # At normal priority: the search holds the GIL while it matches (re never releases it), and a thread
        # niced below the request threads could be descheduled holding it, stalling every answer meanwhile.
        _rechecker = Rechecker(Verdicts())


def _verify_options() -> dict:
    if _rechecker is None:
        return {}
    return {"verdicts": _rechecker.verdicts, "verify_budget_s": C.VERIFY_PROMPT_BUDGET_S}


def _check_later(result, root: str) -> None:
    """The recalled memories with names the prompt's budget left unchecked, checked in the background."""
    if _rechecker is None or not result.evidence:
        return
    unfinished = {h.rel_path: h.abs_path for h in result.selected
                  if h.rel_path in result.evidence and result.evidence[h.rel_path].unchecked}
    if unfinished:
        _rechecker.later(root, unfinished)


# --- one request --------------------------------------------------------------------------------
def handle(request: dict, clients: ClientCache | None = None, embedder: Embedder | None = None) -> dict:
    from memdir.config import Settings
    from memdir.stages.recall.api import recall
    from memdir.stages.recall.server_scope import servable_folder
    from memdir.verify import project_root

    if isinstance(request, dict) and isinstance(request.get("hook_payload"), str):
        request = from_hook_payload(request)
    if not isinstance(request, dict) or not isinstance(request.get("query"), str):
        raise ValueError("a request is a JSON object with a 'query' string")
    # First: the query's embedding is the longest part of an answer, and runs beside everything below.
    dense = QueryAhead(embedder.model, request["query"]) if embedder else None
    env = effective_env(request)
    if request.get("resolve") is True and request.get("memory_dir") is None:
        # A prompt hook's question sent before it resolved anything (hooks._ask_early): resolved here as
        # the hook resolves it, and named in the reply, which the hook uses only if it resolved the same.
        from memdir.prompt_scope import resolve_for_server

        folder, index_loaded, engine = resolve_for_server(request.get("cwd"), env)
        memory_dir = servable_folder(str(folder), env)
    else:
        memory_dir = servable_folder(request.get("memory_dir"), env)
        engine = str(request.get("engine") or "llm")
        index_loaded = request.get("index_loaded") is True
    settings = Settings.from_env(env).with_overrides(engine=engine)
    client = clients.get(env, settings.recall_timeout) if clients is not None and engine == "llm" else None
    cwd = request.get("cwd")
    root = project_root(cwd) if isinstance(cwd, str) and os.path.isdir(cwd) else None
    result = recall(
        memory_dir,
        request["query"],
        settings=settings,
        engine=engine,
        tools=_tools(request),
        session_id=request.get("session_id"),
        client=client,
        dense=dense,
        project_root=root,
        env=env,
        index_loaded=index_loaded,
        record=request.get("record") is not False,  # False: the hook records the answer it uses
        log_usage=True,
        scanner=scan_folder,
        **_verify_options(),
    )
    if embedder is not None:
        embedder.refresh_later(str(memory_dir))
    if root is not None:
        _check_later(result, root)
    return {"context": result.context, "engine": result.engine, "debug": result.debug,
            "selected": [h.rel_path for h in result.selected], "dense": embedder is not None,
            "memory_dir": str(memory_dir), "index_loaded": index_loaded, "asked_engine": engine}


def from_hook_payload(request: dict) -> dict:
    """A question sent as the prompt hook's raw payload (memdir.entry.early_ask) as the fields it holds:
    the query is the prompt as the hook asks it (stripped); a prompt of one word ("y", "continue", a slash
    command) asks for nothing, as in the hook."""
    payload = json.loads(request["hook_payload"])  # within the request's own size limit
    if not isinstance(payload, dict):
        raise ValueError("the hook payload is not a JSON object")

    def text(name: str) -> str | None:
        value = payload.get(name)
        return value if isinstance(value, str) else None

    query = (text("prompt") or "").strip()
    if not any(ch.isspace() for ch in query):
        raise ValueError("nothing to recall for a one-word prompt")
    fields = {"query": query, "transcript_path": text("transcript_path"), "session_id": text("session_id"),
              "cwd": text("cwd")}
    return {**{k: v for k, v in request.items() if k != "hook_payload"}, **fields}


def _tools(request: dict) -> list[str]:
    """The tools in use: sent as they are, or read from the transcript's tail here, so the prompt
    hook need not read it while the server answers."""
    if request.get("tools"):
        return [str(t) for t in request["tools"]]
    transcript = request.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return []
    from pathlib import Path

    from memdir.transcript import read_transcript, recent_tool_names

    try:
        from memdir.constants import HOOK_TRANSCRIPT_READ_MAX_BYTES

        recent = read_transcript(Path(transcript), last_n=10, max_bytes=HOOK_TRANSCRIPT_READ_MAX_BYTES)
        return recent_tool_names(recent.messages)
    except Exception:  # noqa: BLE001 - an unreadable transcript only loses the tool hint
        return []


def _read_request(conn: socket.socket) -> dict:
    """One newline-ended JSON request, whole within READ_SECONDS and at most MAX_REQUEST bytes."""
    deadline = time.monotonic() + READ_SECONDS
    data = bytearray()
    while not data.endswith(b"\n"):
        try:
            conn.settimeout(max(deadline - time.monotonic(), 0) or 1e-9)
            chunk = conn.recv(65536)
        except TimeoutError:
            raise TimeoutError(f"the request did not arrive within {READ_SECONDS:g} s") from None
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError(f"the request is over {MAX_REQUEST} bytes")
    return json.loads(data)


def _reply_raw(conn: socket.socket, data: bytes) -> None:
    try:
        conn.settimeout(SEND_SECONDS)
        conn.sendall(data)
    except OSError:
        pass  # the client gave up: it has answered offline already


def _reply(conn: socket.socket, reply: dict) -> None:
    try:
        conn.settimeout(SEND_SECONDS)
        conn.sendall(json.dumps(reply).encode())
    except (OSError, ValueError):
        pass  # the client gave up: it has answered offline already


def _answer(conn: socket.socket, slots: threading.BoundedSemaphore, clients: ClientCache,
            embedder: Embedder | None) -> None:
    try:
        with conn:
            try:
                reply = handle(_read_request(conn), clients, embedder)
            except Exception as exc:  # noqa: BLE001 - the hook falls back to offline on any error reply
                _reply(conn, {"error": f"{type(exc).__name__}: {exc}"[:1000]})
                _close_after_reply(conn)
                return
            _reply(conn, reply)
        from memdir.stages.recall.manifest import save_kept_tokens

        save_kept_tokens()  # once the hook has its answer: the token file is for hooks answering without a server
    finally:
        slots.release()


def _dispatch(conn: socket.socket, slots: threading.BoundedSemaphore, clients: ClientCache,
              embedder: Embedder | None) -> None:
    """Answer on a thread of its own, or say "busy" at once when MAX_CONNECTIONS are in progress."""
    if slots.acquire(blocking=False):
        try:
            threading.Thread(target=_answer, args=(conn, slots, clients, embedder), daemon=True).start()
            return
        except RuntimeError:  # no thread can be started now (a thread or memory limit)
            slots.release()
    with conn:
        _drain(conn)  # a request left unread would reset the connection, losing the reply below
        _reply(conn, {"error": f"busy: {MAX_CONNECTIONS} requests in progress; answer offline"})


def _close_after_reply(conn: socket.socket) -> None:
    """After an error reply to a request that was not read whole (too slow, too big): say we are done
    (FIN) and drop what still arrives for a moment. Closing with unread bytes would send a reset, and a
    reset can destroy the reply before the client reads it."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(LINGER_SECONDS)
        for _ in range(MAX_REQUEST // 65536 + 1):
            if not conn.recv(65536):
                break
    except OSError:
        pass


def _drain(conn: socket.socket) -> None:
    """Read (and drop) what the client has sent so far, without waiting for more."""
    try:
        conn.setblocking(False)
        for _ in range(MAX_REQUEST // 65536 + 1):
            if not conn.recv(65536):
                break
    except OSError:
        pass


# --- the server's life --------------------------------------------------------------------------
def claim(path: str) -> int | None:
    """Exactly one server per socket: an exclusive lock on `<path>.lock`, held for the server's
    whole life (the kernel drops it when the process dies, so a crash never blocks the next one).
    None when another server holds it: the caller exits at once instead of starting a second,
    orphaned server (a hostile pass once had two, one listening on an unlinked socket)."""
    try:
        import fcntl
    except ImportError:  # no AF_UNIX server on Windows anyway
        return -1
    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _listen(path: str) -> socket.socket | None:
    """Bind aside, then rename into place: a half-started server is never found. The rename replaces
    only a dead server's leftover (the lock proves none is alive)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    aside = os.path.join(os.path.dirname(path), f".{os.getpid()}")  # short: the path is near AF_UNIX's limit
    try:
        listener.bind(aside)
        os.chmod(aside, 0o600)
        os.replace(aside, path)
        listener.listen(BACKLOG)
    except OSError:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(aside)
        return None
    listener.settimeout(1.0)
    return listener


def _accept(listener: socket.socket) -> socket.socket | None:
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        return None
    except OSError:
        # EMFILE/ENFILE (no descriptor left), ENOBUFS, ECONNABORTED: a bad moment, not a reason to stop.
        # The waiting client stays queued or gives up and answers offline; the pause keeps a full
        # descriptor table from turning this loop into a busy spin.
        time.sleep(ACCEPT_RETRY_SECONDS)
        return None
    return conn


def _idle_seconds() -> float:
    try:
        return float(os.environ.get(IDLE_SECONDS_ENV) or DEFAULT_IDLE)
    except ValueError:
        return DEFAULT_IDLE


def serve(path: str | None = None, idle: float | None = None) -> None:
    """Answer recall requests on `path` (by default: socket_path() of this environment) until idle
    for `idle` seconds. Returns at once when no private folder or another server holds the socket."""
    from memdir.config import Settings, llm_configured

    path = socket_path() if path is None else path
    if path is None or not make_private_folder(path):
        return  # nowhere only this user can reach: the hooks answer in their own process
    idle = _idle_seconds() if idle is None else idle
    lock = claim(path)
    if lock is None:
        return  # another server owns this socket
    from memdir.stages.recall.manifest import keep_tokens, keep_word_index

    keep_word_index()  # the folder's words kept between prompts (recall.older_index)
    keep_tokens()  # each ranked memory's tokens kept between prompts (recall.manifest.KeptTokens)
    keep_folder_views()  # each folder's scan kept between prompts, current by change events (recall.server_watch)
    keep_verdicts()  # names checked against each project kept between prompts, the rest checked after replying
    clients = ClientCache()
    if llm_configured():  # the SDK's import, which this server exists to pay once, paid before any prompt waits
        with contextlib.suppress(Exception):  # a broken SDK: the dense model and offline recall still serve
            clients.get(effective_env({}), Settings.from_env().recall_timeout)
    embedder = load_embedder()  # the dense model (numpy + weights), the other cost paid once here
    _preload()
    listener = _listen(path)
    if listener is None:
        os.close(lock)
        return
    with open(path + ".pid", "w", encoding="ascii") as pidfile:  # for `kill` and for tests
        pidfile.write(str(os.getpid()))
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle:
            conn = _accept(listener)
            if conn is None:
                continue
            if not same_user(conn):
                conn.close()  # another uid: not a word read or written, and no reason to stay up
                continue
            last = time.monotonic()
            _reply_raw(conn, TAKEN)  # here, not on the answering thread: its start can take a scheduler tick
            _dispatch(conn, slots, clients, embedder)
    finally:
        listener.close()
        for leftover in (path, path + ".pid"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        if lock >= 0:
            os.close(lock)  # last: a new server may take over only once this one is gone


def _preload() -> None:
    """Import now what answering a hook's question imports on first use: the hook that started this server
    has answered its own prompt, and the next one would otherwise wait for them (a first answer took
    300 ms, past the hook's wait, where the next ones took 30)."""
    import importlib

    for name in ("memdir.stages.recall.api", "memdir.stages.recall.server_scope", "memdir.prompt_scope",
                 "memdir.transcript", "memdir.verify", "memdir.verdicts", "memdir.frontmatter_io",
                 "memdir.stages.recall.decision_filter", "memdir.decision_context", "memdir.prompts"):
        with contextlib.suppress(Exception):  # a module that fails here fails where it is used, as before
            importlib.import_module(name)


def _exit_on_sigterm() -> None:
    """`kill` ends the server through serve()'s cleanup: no socket or pid file is left behind for
    the next hook to connect to in vain."""
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("memdir recall server: takes no arguments; it finds its socket from the environment")
    _exit_on_sigterm()
    serve()
