"""A warm recall server, so the prompt hook can use the llm engine without importing the SDK.

Every prompt hook is a fresh process, and importing `anthropic` there costs ~1.8 s before the
API is even called. Instead, the first hook that wants the llm engine starts this server in the
background (and answers that prompt offline); later hooks send their query over a Unix socket and
get the rendered memories back in about the API's own latency.

The socket lives in a 0700 folder of the user's config home and its name hashes what the answer
depends on (memdir's version, the Python, the endpoint and key, the MEMDIR_* settings), so a
changed key or upgrade simply starts a new server; an idle server exits after 30 minutes.
`MEMDIR_RECALL_SERVER=0` turns it off (the hook then imports the SDK itself).

The server is also where recall's dense model lives (memdir/embeddings.py): numpy and the weights load
once here, offline prompts are answered here too when the model is installed, and a background thread
embeds memories that lack a vector after each answer (memories written through memdir already have
one: the writer stores it) and compacts the vector file. Hooks never load the model; without a server
they answer lexically.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import zlib

IDLE_SECONDS_ENV = "MEMDIR_RECALL_SERVER_IDLE"
DISABLE_ENV = "MEMDIR_RECALL_SERVER"
DEFAULT_IDLE = 1800.0
MAX_REQUEST = 1 << 20


def enabled(env=None) -> bool:
    env = os.environ if env is None else env
    return hasattr(socket, "AF_UNIX") and env.get(DISABLE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def socket_path(env=None) -> str:
    """Per user and per configuration; short enough for AF_UNIX's ~104-byte limit."""
    from memdir import __version__
    from memdir.paths import config_home

    env = os.environ if env is None else env
    facts = [__version__, sys.prefix, env.get("ANTHROPIC_BASE_URL", ""),
             env.get("ANTHROPIC_API_KEY", ""), env.get("ANTHROPIC_AUTH_TOKEN", "")]
    facts += [f"{k}={v}" for k, v in sorted(env.items()) if k.startswith("MEMDIR_") and k != IDLE_SECONDS_ENV]
    key = f"{zlib.crc32(chr(0).join(facts).encode()):08x}"
    folder = config_home(env) / "memdir" / "run"
    path = str(folder / f"recall-{key}.sock")
    if len(path.encode()) > 100:
        path = os.path.join("/tmp", f"memdir-{os.getuid()}-{key}.sock")
    return path


# --- client (runs in the prompt hook) -----------------------------------------------------------
def ask(request: dict, timeout: float, env=None) -> dict | None:
    """The server's answer, or None (no server, too slow, or any error): the caller goes offline."""
    path = socket_path(env)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(path)
            conn.sendall(json.dumps(request).encode() + b"\n")
            chunks = []
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None


def start_in_background(env=None) -> None:
    """Spawn a detached server (it exits by itself when idle); never raises."""
    try:
        path = socket_path(env)
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        os.posix_spawn(sys.executable, [sys.executable, "-m", "memdir.stages.recall.server", path],
                       dict(os.environ if env is None else env), file_actions=devnull, setsid=True)
    except (OSError, AttributeError):
        pass


# --- server -----------------------------------------------------------------------------------------
class Embedder:
    """The dense model, loaded once, and a background thread that embeds memories lacking a vector.

    The prompt is answered first with the vectors already cached; the folder is then queued here, so
    a new or edited memory gets its vector within moments, without any prompt waiting for it.
    """

    def __init__(self, model) -> None:
        import queue
        import threading

        self.model = model
        self.pending: queue.Queue = queue.Queue()
        self.queued: set[str] = set()
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

        while True:
            memory_dir = self.pending.get()
            with self.lock:
                self.queued.discard(memory_dir)
            try:
                refresh_embeddings(self.model, Path(memory_dir))
            except Exception:  # noqa: BLE001 - a bad folder must not stop the thread serving others
                pass


def refresh_embeddings(model, memory_dir) -> int:
    """Embed every memory of the folder that has no vector yet (files written by hand or by Claude
    Code itself); drop vectors of edited and deleted memories once they outnumber the live ones."""
    return model.refresh(memory_dir)


def handle(request: dict, client, embedder: Embedder | None = None) -> dict:
    from pathlib import Path

    from memdir.config import Settings
    from memdir.stages.recall.api import recall
    from memdir.verify import project_root

    engine = request.get("engine") or "llm"
    cwd = request.get("cwd")
    result = recall(
        Path(request["memory_dir"]),
        str(request["query"]),
        settings=Settings.from_env().with_overrides(engine=engine),
        engine=engine,
        tools=[str(t) for t in request.get("tools") or []],
        session_id=request.get("session_id"),
        client=client,
        dense=embedder.model if embedder else None,
        project_root=project_root(cwd) if cwd and os.path.isdir(cwd) else None,
    )
    if embedder is not None:
        embedder.refresh_later(str(request["memory_dir"]))
    return {"context": result.context, "engine": result.engine, "debug": result.debug,
            "selected": [h.rel_path for h in result.selected], "dense": embedder is not None}


def load_embedder() -> Embedder | None:
    from memdir.embeddings import shared_model

    # One thread: a prompt's query is one short text, and on a busy machine (Claude Code itself, builds,
    # tests) a second OpenMP thread waits for a core: measured 29 ms with one thread vs 45 ms with two
    # under load. Background filling is slower, but nothing waits for it.
    model = shared_model(threads=1)
    return Embedder(model) if model is not None else None


def claim(path: str) -> int | None:
    """Exactly one server per socket: an exclusive lock on `<path>.lock`, held for the server's
    whole life (the kernel drops it when the process dies, so a crash never blocks the next one).
    None when another server holds it: the caller exits at once instead of starting a second,
    orphaned server (a hostile pass once had two, one listening on an unlinked socket)."""
    try:
        import fcntl
    except ImportError:  # no AF_UNIX server on Windows anyway
        return -1
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def serve(path: str, idle: float | None = None) -> None:
    """Answer recall requests on `path` until idle for `idle` seconds."""
    import threading
    import time

    from memdir.config import Settings
    from memdir.llm import make_client

    idle = float(os.environ.get(IDLE_SECONDS_ENV, DEFAULT_IDLE)) if idle is None else idle
    lock = claim(path)
    if lock is None:
        return  # another server owns this socket
    client = make_client(timeout=Settings.from_env().recall_timeout)  # the import this server exists to pay once
    embedder = load_embedder()  # the dense model (numpy + weights), the other cost paid once here
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    aside = f"{path}.{os.getpid()}.tmp"
    try:
        listener.bind(aside)  # bind aside, then rename: a half-started server is never found
        os.chmod(aside, 0o600)
        os.replace(aside, path)  # replaces only a dead server's leftover: the lock proves none is alive
    except OSError:
        listener.close()
        os.close(lock)
        return
    listener.listen(16)
    listener.settimeout(1.0)
    with open(path + ".pid", "w", encoding="ascii") as pidfile:  # for `kill` and for tests
        pidfile.write(str(os.getpid()))
    last = time.monotonic()

    def answer(conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                data = b""
                while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                reply = handle(json.loads(data), client, embedder)
            except Exception as exc:  # noqa: BLE001 - the hook falls back to offline on any error reply
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            try:
                conn.sendall(json.dumps(reply).encode())
            except OSError:
                pass

    try:
        while time.monotonic() - last < idle:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            threading.Thread(target=answer, args=(conn,), daemon=True).start()
    finally:
        listener.close()
        for leftover in (path, path + ".pid"):
            try:
                os.unlink(leftover)
            except OSError:
                pass
        if lock >= 0:
            os.close(lock)  # last: a new server may take over only once this one is gone


if __name__ == "__main__":
    serve(sys.argv[1])
