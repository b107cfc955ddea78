from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from memdir.model import Memory
from memdir.stages.recall import server
from memdir.store import MemoryStore
from tests import api_payloads as P


@pytest.fixture
def folder(tmp_path):
    store = MemoryStore(tmp_path / "memory")
    store.save(Memory(name="Dashboard", description="Payments latency is on grafana.example.com/d/pay",
                      type="reference"))
    return store.root


def _serve_in_thread(path: str, idle: float) -> threading.Thread:
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"idle": idle}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread


def test_server_answers_with_the_llm_engine(api, folder, tmp_path):
    route = api.post("/v1/messages").mock(return_value=P.selection("reference_dashboard.md"))
    path = str(tmp_path / "r.sock")
    thread = _serve_in_thread(path, idle=1.0)
    request = {"memory_dir": str(folder), "query": "where is the latency dashboard", "tools": [], "session_id": "s"}
    reply = _ask(path, request)
    assert reply["engine"] == "llm" and reply["selected"] == ["reference_dashboard.md"]
    assert "grafana.example.com/d/pay" in reply["context"] and route.call_count == 1
    thread.join(timeout=10)
    assert not thread.is_alive() and not os.path.exists(path)  # exits when idle, cleans up


def _ask(path: str, request: dict) -> dict | None:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(path)
        conn.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return json.loads(data)


def test_bad_request_gets_an_error_reply(api, tmp_path):
    path = str(tmp_path / "r.sock")
    thread = _serve_in_thread(path, idle=0.5)
    assert "error" in _ask(path, {"query": "no folder"})
    thread.join(timeout=10)


def test_ask_without_a_server_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(server, "socket_path", lambda env=None: str(tmp_path / "none.sock"))
    assert server.ask({"query": "x"}, timeout=0.5) is None


def test_socket_name_follows_the_configuration(monkeypatch):
    base = {"HOME": os.environ["HOME"], "ANTHROPIC_API_KEY": "a"}
    assert server.socket_path(base) == server.socket_path(dict(base))
    assert server.socket_path(base) != server.socket_path({**base, "ANTHROPIC_API_KEY": "b"})
    assert server.socket_path(base) != server.socket_path({**base, "MEMDIR_RECALL_MODEL": "claude-sonnet-5-5"})
    assert server.socket_path(base) == server.socket_path({**base, "MEMDIR_RECALL_SERVER_IDLE": "5"})


def test_disabled_by_env():
    assert not server.enabled({"MEMDIR_RECALL_SERVER": "0"})
    assert server.enabled({}) == hasattr(__import__("socket"), "AF_UNIX")


def test_two_servers_started_together_leave_exactly_one(tmp_path):
    """Both race for the same socket: one serves, the other exits at once; none is orphaned."""
    import subprocess
    import sys

    path = str(tmp_path / "run" / "r.sock")
    env = {**os.environ, "MEMDIR_RECALL_SERVER_IDLE": "20", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    procs = [subprocess.Popen([sys.executable, "-m", "memdir.stages.recall.server", path], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (os.path.exists(path + ".pid") and any(p.poll() is not None for p in procs)):
            time.sleep(0.05)
        alive = [p for p in procs if p.poll() is None]
        exited = [p for p in procs if p.poll() is not None]
        assert len(alive) == 1 and len(exited) == 1, [p.poll() for p in procs]
        assert exited[0].returncode == 0, exited[0].stderr.read()
        assert int(Path(path + ".pid").read_text()) == alive[0].pid
        assert "error" in _ask(path, {"query": "no folder"})  # the survivor owns the socket
        # A third one, started while the first serves, also steps aside.
        third = subprocess.run([sys.executable, "-m", "memdir.stages.recall.server", path], env=env, timeout=30)
        assert third.returncode == 0 and alive[0].poll() is None
        assert "error" in _ask(path, {"query": "no folder"})
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=10)


def test_a_dead_servers_leftovers_do_not_block_the_next(tmp_path, api):
    path = str(tmp_path / "r.sock")
    open(path, "w").close()  # a stale socket file from a crashed server; its lock died with it
    thread = _serve_in_thread_when(path, idle=0.5)
    assert "error" in _ask(path, {"query": "no folder"})
    thread.join(timeout=10)
    assert not os.path.exists(path)


def _serve_in_thread_when(path: str, idle: float) -> threading.Thread:
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"idle": idle}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not os.path.exists(path + ".pid") and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread
