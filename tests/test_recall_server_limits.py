"""The warm recall server under stress from its own user (issue 22 #9): bounded threads, request
sizes and read time, a deep listen queue, and no crash when file descriptors run out."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time

import pytest

from memdir.model import Memory
from memdir.stages.recall import server, server_socket
from memdir.store import MemoryStore
from tests.recall_servers import serve_in_thread, stop_server


def _connect(path: str, timeout: float = 5.0) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    conn.connect(path)
    return conn


def _reply(conn: socket.socket) -> dict | None:
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return json.loads(data) if data else None


def _ask(path: str, request: dict) -> dict | None:
    with _connect(path) as conn:
        conn.sendall(json.dumps({**request, "env": server_socket.request_env()}).encode() + b"\n")
        return _reply(conn)


def test_connections_past_the_cap_get_busy_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(server, "READ_SECONDS", 3.0)
    accepted, gate, accept = [], threading.Event(), server._accept

    def accept_then_wait(listener):  # the one past the cap is accepted once its request is in
        if len(accepted) == server.MAX_CONNECTIONS:
            gate.wait(10)
        conn = accept(listener)
        if conn is not None:
            accepted.append(conn)
        return conn

    monkeypatch.setattr(server, "_accept", accept_then_wait)
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=1.0)
    held = [_connect(path) for _ in range(server.MAX_CONNECTIONS)]  # each holds a thread, sending nothing
    try:
        with _connect(path) as conn:
            conn.sendall(json.dumps({"query": "x"}).encode() + b"\n")
            gate.set()
            reply = _reply(conn)
        assert reply is not None and reply["error"].startswith("busy:"), reply
    finally:
        for conn in held:
            conn.close()
    stop_server(thread)
    assert not thread.is_alive()


def test_a_slow_client_is_cut_off_at_the_read_deadline(tmp_path, monkeypatch):
    """One byte every 0.2 s never ends a request: the deadline covers the whole request, not each read."""
    monkeypatch.setattr(server, "READ_SECONDS", 1.0)
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=1.0)
    with _connect(path, timeout=20) as conn:
        for _ in range(100):  # 20 s of trickle at most; the server hangs up long before
            try:
                conn.sendall(b" ")
            except OSError:
                break
            time.sleep(0.2)
            conn.setblocking(False)
            try:
                if conn.recv(65536, socket.MSG_PEEK):
                    break
            except BlockingIOError:
                pass
            finally:
                conn.setblocking(True)
                conn.settimeout(20)
        reply = _reply(conn)
    assert reply is not None and "did not arrive within 1 s" in reply["error"], reply
    stop_server(thread)


def test_an_oversized_request_is_refused(tmp_path):
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=1.0)
    with _connect(path, timeout=20) as conn:
        conn.sendall(b"x" * (server.MAX_REQUEST + 10))  # no newline: it never ends by itself
        reply = _reply(conn)
    assert reply is not None and f"over {server.MAX_REQUEST} bytes" in reply["error"]
    stop_server(thread)


def test_a_burst_of_clients_waits_in_the_queue(tmp_path, monkeypatch):
    """100 hooks connecting while the server is not accepting: all queue (a backlog of 16 refused some)."""
    gate = threading.Event()
    accept = server._accept
    monkeypatch.setattr(server, "_accept", lambda listener: gate.wait(30) and accept(listener))
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=1.0)
    burst, refused = [], 0
    for _ in range(100):
        try:
            burst.append(_connect(path, timeout=2))
        except OSError:
            refused += 1
    gate.set()
    for conn in burst:
        conn.close()
    assert refused == 0 and len(burst) == 100
    stop_server(thread)


@pytest.fixture
def served_folder(tmp_path):
    folder = tmp_path / "memory"
    MemoryStore(folder).save(Memory(name="Broker", description="Events go through Kafka", type="project"))
    return folder


def _open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_running_out_of_file_descriptors_does_not_end_the_server(tmp_path, served_folder, short_home):
    limit = 16
    env = {**os.environ, "HOME": str(short_home), "MEMDIR_PATH": str(served_folder), "MEMDIR_ENGINE": "offline",
           "MEMDIR_RECALL_SERVER_IDLE": "60"}
    path = server_socket.socket_path(env)
    proc = subprocess.Popen([sys.executable, "-m", "memdir.stages.recall.server"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(path + ".pid") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        held = [_connect(path) for _ in range(3 * limit)]  # past the table: the rest wait in the backlog
        deadline = time.monotonic() + 20
        while _open_fds(proc.pid) < limit and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _open_fds(proc.pid) == limit  # every descriptor in use: accept() now fails with EMFILE
        time.sleep(1.0)  # many failed accepts
        assert proc.poll() is None, proc.stderr.read().decode()
        for conn in held:
            conn.close()
        request = {"memory_dir": str(served_folder), "query": "which broker do events go through",
                   "engine": "offline"}
        reply = server_socket.ask(request, timeout=30, env=env)
        assert reply is not None and reply.get("selected") == ["project_broker.md"], reply
    finally:
        for conn in held:
            conn.close()
        proc.terminate()
        proc.wait(timeout=10)
