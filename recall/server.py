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
once here (offline prompts are answered here on every install, lexically without it), and a background thread
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
from memdir.stages.recall.server_answer import (  # noqa: F401  (the server's names before the split)
    ClientCache,
    answering_now,
    effective_env,
    from_hook_payload,
    handle,
    keep_folder_views,
    keep_verdicts,
    scan_folder,
)
from memdir.stages.recall.server_dense import Embedder, background_priority, load_embedder, refresh_embeddings  # noqa: F401
from memdir.stages.recall.server_socket import (
    IDLE_SECONDS_ENV,
    make_private_folder,
    same_user,
    socket_path,
)

DEFAULT_IDLE = 1800.0
MAX_REQUEST = C.RECALL_REQUEST_MAX_BYTES  # bytes: a prompt and a few fields
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
ACCEPT_WAKE_SECONDS = 1.0  # how often the accept loop looks at the idle clock (or the idle time, when shorter)


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
    from memdir.stages.recall.manifest import save_kept_tokens

    try:
        with conn:
            try:
                reply = handle(_read_request(conn), clients, embedder)
            except Exception as exc:  # noqa: BLE001 - the hook falls back to offline on any error reply
                _reply(conn, {"error": f"{type(exc).__name__}: {exc}"[:1000]})
                _close_after_reply(conn)
                return
            _reply(conn, reply)
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
    if not hasattr(socket, "AF_UNIX"):  # no AF_UNIX server on native Windows anyway
        return -1
    from memdir import portalock

    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    try:
        if portalock.try_lock(fd):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _listen(path: str, wake: float) -> socket.socket | None:
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
    listener.settimeout(wake)
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


def serve(path: str | None = None, idle: float | None = None, stop: threading.Event | None = None) -> None:
    """Answer recall requests on `path` (by default: socket_path() of this environment) until idle
    for `idle` seconds, or until `stop` is set and the next connection wakes the loop (a server run in a thread).
    Returns at once when no private folder or another server holds the socket."""
    from memdir.config import Settings, llm_configured

    path = socket_path() if path is None else path
    if path is None or not make_private_folder(path):
        return  # nowhere only this user can reach: the hooks answer in their own process
    idle = _idle_seconds() if idle is None else idle
    lock = claim(path)
    if lock is None:
        return  # another server owns this socket
    from memdir.stages.recall.manifest import keep_corpus, keep_token_pack, keep_tokens, keep_word_index
    from memdir.stages.recall.server_rank import ServerCorpus

    keep_word_index()  # the folder's words kept between prompts (recall.older_index)
    keep_tokens()  # each ranked memory's tokens kept between prompts (recall.manifest.KeptTokens)
    keep_corpus(ServerCorpus)  # ... and ranked with numpy, the same floats (recall.server_rank)
    keep_token_pack(answering_now)  # ... and every memory's, packed in the background (recall.token_pack)
    keep_folder_views()  # each folder's scan kept between prompts, current by change events (recall.server_watch)
    keep_verdicts()  # names checked against each project kept between prompts, the rest checked after replying
    clients = ClientCache()
    if llm_configured():  # the SDK's import, which this server exists to pay once, paid before any prompt waits
        with contextlib.suppress(Exception):  # a broken SDK: the dense model and offline recall still serve
            clients.get(effective_env({}), Settings.from_env().recall_timeout)
    embedder = load_embedder(scan_folder)  # the dense model (numpy + weights), the other cost paid once here
    _preload()
    listener = _listen(path, min(ACCEPT_WAKE_SECONDS, max(idle, 0.05)))  # a short idle ends no later than asked
    if listener is None:
        os.close(lock)
        return
    with open(path + ".pid", "w", encoding="ascii") as pidfile:  # for `kill` and for tests
        pidfile.write(str(os.getpid()))
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle and not (stop is not None and stop.is_set()):
            conn = _accept(listener)
            if conn is None:
                continue
            if stop is not None and stop.is_set():
                conn.close()  # the connection that woke the loop to stop: nothing is read from it
                break
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
                 "memdir.stages.recall.decision_filter", "memdir.decision_context", "memdir.prompts",
                 "memdir.header_cache", "memdir.template_cache", "memdir.stages.recall.indexed_corpus",
                 "memdir.stages.recall.rank_index", "memdir.stages.recall.token_cache",
                 "memdir.stages.recall.token_store",
                 "jinja2"):  # a skeleton not cached yet is rendered with it (36-100 ms to import, speed25)
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
