from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.model import Memory
from memdir.stages.recall import server_socket
from memdir.store import MemoryStore
from tests import api_payloads as P
from tests.fake_api import FakeAPI
from tests.recall_servers import serve_in_thread, stop_server


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path / "memory"))  # a configured folder: the server serves it
    store = MemoryStore(tmp_path / "memory")
    store.save(Memory(name="Dashboard", description="Payments latency is on grafana.example.com/d/pay",
                      type="reference"))
    return store.root


def _ask(path: str, request: dict, env: dict | None = None) -> dict:
    """What the hook sends (its per-request environment included), straight to `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(path)
        conn.sendall(json.dumps({**request, "env": server_socket.request_env(env)}).encode() + b"\n")
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return json.loads(data)


def test_server_answers_with_the_llm_engine(api, folder, tmp_path):
    route = api.post("/v1/messages").mock(return_value=P.selection("reference_dashboard.md"))
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=1.0)
    request = {"memory_dir": str(folder), "query": "where is the latency dashboard", "tools": [], "session_id": "s"}
    reply = _ask(path, request)
    assert reply["engine"] == "llm" and reply["selected"] == ["reference_dashboard.md"]
    assert "grafana.example.com/d/pay" in reply["context"] and route.call_count == 1
    thread.join(timeout=10)
    assert not thread.is_alive() and not os.path.exists(path)  # exits when idle, cleans up


def test_each_session_is_answered_through_its_own_endpoint(folder, tmp_path, monkeypatch):
    """One server for sessions whose ANTHROPIC_BASE_URL differ: each request goes to its own endpoint."""
    def respond(body, n):
        return P.message([P.text(json.dumps({"selected_memories": ["reference_dashboard.md"]}))], model=body["model"])

    path = str(tmp_path / "r.sock")
    with FakeAPI(respond) as first, FakeAPI(respond) as second:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", first.url)  # the session that started the server
        thread = serve_in_thread(path, idle=1.0)
        request = {"memory_dir": str(folder), "query": "where is the latency dashboard", "engine": "llm"}
        for api, key in ((first, "key-one"), (second, "key-two"), (first, "key-one")):
            env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": key}
            reply = _ask(path, {**request, "session_id": key + str(time.monotonic())}, env)
            assert reply["engine"] == "llm" and reply["selected"] == ["reference_dashboard.md"], reply
        stop_server(thread)
    assert (len(first.requests), len(second.requests)) == (2, 1)
    assert os.environ["ANTHROPIC_BASE_URL"] == first.url  # the server's own environment is left as it was


def test_bad_request_gets_an_error_reply(tmp_path):
    path = str(tmp_path / "r.sock")
    thread = serve_in_thread(path, idle=0.5)
    assert "error" in _ask(path, {"query": "no folder"})
    stop_server(thread)


def test_ask_without_a_server_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(server_socket, "socket_path", lambda env=None: str(tmp_path / "none.sock"))
    assert server_socket.ask({"query": "x"}, timeout=0.5) is None


def test_one_socket_per_user_and_memory_root():
    """Endpoint, key and per-request settings never split the server; what it reads at start does."""
    base = {"HOME": os.environ["HOME"], "ANTHROPIC_API_KEY": "a", "MEMDIR_DENSE": "0"}
    same = [{**base, "ANTHROPIC_API_KEY": "b"}, {**base, "ANTHROPIC_BASE_URL": "http://127.0.0.1:4001"},
            {**base, "MEMDIR_RECALL_MODEL": "claude-sonnet-5-5"}, {**base, "MEMDIR_PATH": "/srv/notes/memory"},
            {**base, "MEMDIR_RECALL_SERVER_IDLE": "5"}]
    assert {server_socket.socket_path(env) for env in same} == {server_socket.socket_path(base)}
    other = [{**base, "HOME": "/home/someone"}, {**base, "CLAUDE_CONFIG_DIR": "/srv/claude"},
             {**base, "MEMDIR_DENSE": "1"}, {**base, "MEMDIR_MEMORY_FORM": "legacy"}]
    assert server_socket.socket_path(base) not in {server_socket.socket_path(env) for env in other}


def test_a_switch_said_two_ways_is_one_server():
    """MEMDIR_DENSE (and the other on/off settings) unset, `1` or `yes` mean the same to a server, so they reach the
    same one: unset and `1` started two, each with its own model and caches warm."""
    home = {"HOME": os.environ["HOME"]}
    for name in ("MEMDIR_DENSE", "MEMDIR_GIT_HISTORY", "MEMDIR_TOKEN_STORE_FILL"):
        on = {server_socket.socket_path({**home, **extra}) for extra in ({}, {name: "1"}, {name: " Yes "}, {name: "on"})}
        off = {server_socket.socket_path({**home, name: value}) for value in ("0", "off", "FALSE")}
        assert len(on) == 1 and len(off) == 1 and on != off


def test_two_environments_of_one_editable_checkout_have_two_servers(monkeypatch):
    """Two virtual environments with the same checkout installed editable (another Python, another set of extras):
    memdir's folder and version are the same in both, yet each must reach the server its own Python started. Told
    apart by the folder of the interpreter, which a hook without `site` and the server it starts share."""
    env = {"HOME": os.environ["HOME"]}
    paths = {}
    for python in ("/work/a/.venv/bin/python", "/work/a/.venv/bin/python3", "/work/b/.venv/bin/python"):
        monkeypatch.setattr(sys, "executable", python)
        paths[python] = server_socket.socket_path(env)
    assert paths["/work/a/.venv/bin/python"] == paths["/work/a/.venv/bin/python3"] != paths["/work/b/.venv/bin/python"]


def test_disabled_by_env():
    assert not server_socket.enabled({"MEMDIR_RECALL_SERVER": "0"})
    assert server_socket.enabled({}) == hasattr(socket, "AF_UNIX")


@pytest.mark.slow
def test_two_servers_started_together_leave_exactly_one(short_home):
    """Both race for the same socket: one serves, the other exits at once; none is orphaned."""
    env = {**os.environ, "HOME": str(short_home), "MEMDIR_RECALL_SERVER_IDLE": "20",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    path = server_socket.socket_path(env)
    argv = [sys.executable, "-m", "memdir.stages.recall.server"]  # no path: each derives it from env
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
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
        third = subprocess.run(argv, env=env, timeout=30)
        assert third.returncode == 0 and alive[0].poll() is None
        assert "error" in _ask(path, {"query": "no folder"})
        alive[0].terminate()  # `kill`: the server still cleans up after itself
        assert alive[0].wait(timeout=10) == 0
        assert not os.path.exists(path) and not os.path.exists(path + ".pid")
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=10)


def test_a_dead_servers_leftovers_do_not_block_the_next(tmp_path):
    path = str(tmp_path / "r.sock")
    open(path, "w").close()  # a stale socket file from a crashed server; its lock died with it
    thread = serve_in_thread(path, idle=0.5)
    assert "error" in _ask(path, {"query": "no folder"})
    stop_server(thread)
    assert not os.path.exists(path)


def test_a_path_one_byte_past_the_limit_takes_the_short_form():
    import shutil
    import tempfile

    base = tempfile.mkdtemp(dir="/tmp")  # shorter than pytest's own folders, so HOME can be padded
    try:
        long_form = len("/.cache/memdir/run/recall-") + 16 + len(".sock")
        home = os.path.join(base, "h" * (server_socket.MAX_PATH_BYTES + 1 - long_form - len(base) - 1))
        path = server_socket.socket_path({"HOME": home})
        assert path == os.path.join(home, ".cache", "memdir", "s", os.path.basename(path))
        assert len(path.encode()) <= server_socket.MAX_PATH_BYTES and server_socket.make_private_folder(path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind(path)  # the kernel takes it
        one_less = server_socket.socket_path({"HOME": home[:-1]})
        assert one_less.endswith(".sock") and len(one_less.encode()) == server_socket.MAX_PATH_BYTES
    finally:
        shutil.rmtree(base, ignore_errors=True)
