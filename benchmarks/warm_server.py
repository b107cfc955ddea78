"""The warm recall server as a session meets it, for the hook benchmarks: vectors, start, warm-up, watch, stop.

A folder's vectors are the real model's (folders of up to REAL_VECTORS_UP_TO memories, embedded once) or stand-ins near
realistic.REAL_PROMPT's embedding (larger ones: the steady state where every memory has a vector, without hours of
embedding first). The server is started and waited for, its first answer and its background work for a new folder
(the vector check, packing every memory's tokens) done and timed apart before anything is measured, then watched
through its pid file and /proc (resident memory, idle) and stopped. What is timed, and against which budget, is
benchmarks/hook_budgets.py's.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchmarks import realistic
from benchmarks.common import cpu_ms, process_env

STAND_INS = ".stand-in-vectors-v2"  # marker in the cached folder: which stand-ins its vector file holds


def fill_stand_in_vectors(root: Path) -> int:
    """A stand-in vector under every memory's real key, so the server finds the folder fully embedded.

    Each lies near the real prompt's own embedding (cosines about 0.71 to 0.86, as real memories sit
    to a prompt about them), so some clear the relevance bar and the answer renders memories, as a
    real answer does; random vectors would select nothing and time an empty answer."""
    import numpy as np

    from memdir import embeddings
    from memdir.embed_cache import EmbeddingCache
    from memdir.scan import scan

    if not (root / STAND_INS).exists():
        (root / ".memdir" / "embeddings" / f"{embeddings.MODEL_ID}.bin").unlink(missing_ok=True)
        (root / REAL_VECTORS).unlink(missing_ok=True)
    cache = EmbeddingCache.for_memory_dir(root, embeddings.MODEL_ID, 384)
    cache.refresh()
    keys = [k for k in {embeddings.key_of(h) for h in scan(root).headers} if cache.get(k) is None]
    if keys:
        model = embeddings.shared_model(threads=1)
        assert model is not None, embeddings.load_error()
        query = np.asarray(model.embed_query(realistic.REAL_PROMPT), dtype="float32")
        rng = np.random.default_rng(26)
        spread = rng.uniform(0.03, 0.05, size=(len(keys), 1)).astype("float32")
        vectors = query + rng.standard_normal((len(keys), 384)).astype("float32") * spread
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        cache.add(keys, vectors)
    (root / STAND_INS).write_text("stand-in vectors near the benchmark prompt's embedding\n", encoding="ascii")
    return len(keys)


REAL_VECTORS = ".real-vectors-v1"  # marker: the folder's vector file holds the real model's vectors
REAL_VECTORS_UP_TO = 200  # folders this small are embedded for real once (~2 min), larger ones get stand-ins


def fill_real_vectors(root: Path) -> int:
    """Every memory's vector computed by the real model, once per cached folder: with stand-ins (near
    REAL_PROMPT only) the rotated prompts recalled nothing but 1 of 24 times, so the server-up rows timed
    empty answers; with real vectors they recall what real prompts recall, and pay for rendering and
    checking it against the project."""
    from memdir import embeddings

    if (root / REAL_VECTORS).exists():
        return 0
    for stale in (root / ".memdir" / "embeddings").glob("*.bin"):
        stale.unlink()
    (root / STAND_INS).unlink(missing_ok=True)
    model = embeddings.shared_model(threads=2)
    assert model is not None, embeddings.load_error()
    done = model.refresh(root, workers=2)
    (root / REAL_VECTORS).write_text("vectors of the real model\n", encoding="ascii")
    return done


def server_env(root: Path) -> dict:
    return {"MEMDIR_PATH": str(root), "MEMDIR_ENGINE": "offline", "MEMDIR_RECALL_SERVER": "1",
            "MEMDIR_RECALL_SERVER_IDLE": "120"}


def start_server(env: dict) -> str | None:
    """Start the warm server and wait until it listens; its socket path (None: it could not start)."""
    from memdir.stages.recall import server_socket

    full = process_env(env)
    sock = server_socket.socket_path(full)
    if sock is None or not server_socket.start_in_background(full):
        return None
    deadline = time.monotonic() + 120
    while not os.path.exists(sock + ".pid") and time.monotonic() < deadline:
        time.sleep(0.05)
    return sock if os.path.exists(sock + ".pid") else None


def warm_server(env: dict, root: Path, n: int) -> None:
    """One question asked and answered before the timed runs: a server's first answer for a folder builds
    its watched view, word index and vector check (seconds at 20,000 memories), once per server, where the
    budget is for the warm server the next prompts meet. Its time is printed apart."""
    from memdir.stages.recall import server_socket

    started = time.perf_counter()
    request = {"memory_dir": str(root), "query": realistic.REAL_PROMPT, "engine": "offline", "session_id": "warm",
               "record": False}
    server_socket.ask(request, timeout=600, env=process_env(env))
    print(f"{'(server first answer)':<22}{n:>7}  {(time.perf_counter() - started) * 1000:7.0f} ms, once per server",
          flush=True)
    # Then its background work for a new folder: the vector check, and packing every memory's tokens
    # (recall.token_pack: about 12 s of CPU at 20,000 memories), done once per server before the warm
    # server the budget is for. Printed apart, like the first answer.
    started = time.perf_counter()
    settled = wait_until_idle(server_socket.socket_path(process_env(env)))
    print(f"{'(server settling)':<22}{n:>7}  {(time.perf_counter() - started) * 1000:7.0f} ms, once per server"
          + ("" if settled else " (still busy: measured anyway)"), flush=True)


def server_pid(sock: str | None) -> int | None:
    """The warm server's pid from its pid file, None when there is none (yet: an empty file is being written)."""
    try:
        with open(f"{sock}.pid", encoding="ascii") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, TypeError, IndexError):
        return None


def server_rss(sock: str) -> float | None:
    """The warm server's resident memory in MB (Linux: /proc), None where it cannot be read."""
    pid = server_pid(sock)
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def wait_until_idle(sock: str | None, limit: float = 180.0) -> bool:
    """Wait until the server uses under a tenth of a core over half a second (Linux: /proc), at least 2 s."""
    time.sleep(2.0)
    pid = server_pid(sock)
    if pid is None:
        return True  # nothing to watch: the 2 s above, as before
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = cpu_ms(pid)
        time.sleep(0.5)
        if not cpu_ms(pid) - before >= 50:  # NaN too: no /proc here, or the server is gone
            return True
    return False


def stop_server(sock: str | None) -> None:
    from benchmarks.recall_speed import stop_server as stop

    stop(sock)
