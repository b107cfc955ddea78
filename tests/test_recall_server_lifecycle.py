"""Issue 21: one recall server per user and memory root, whatever ANTHROPIC_BASE_URL, and nothing left
running once the sessions end. Sessions on different endpoint ports used to start one server each,
and three outlived their sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.model import Memory
from memdir.paths import resolve_memory_dir
from memdir.stages.recall import server_socket
from memdir.store import MemoryStore
from tests import api_payloads as P
from tests.fake_api import FakeAPI

SERVER_MODULE = b"memdir.stages.recall.server"


def _servers(home: str) -> list[int]:
    """Recall server processes started for this HOME (only this test's, whatever else runs)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if SERVER_MODULE in argv and f"HOME={home}".encode() in environ:
            found.append(int(pid))
    return found


def _wait_for(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _prompt(project: Path, session: str, env: dict) -> subprocess.Popen:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
               "prompt": "which message broker do the events go through?"}
    proc = subprocess.Popen([sys.executable, "-m", "memdir.entry.main", "hook", "prompt"], env={**os.environ, **env},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    return proc


@pytest.mark.slow
def test_sessions_on_different_endpoints_share_one_server_that_exits_when_idle(tmp_path):
    home = os.environ["HOME"]
    projects = [tmp_path / f"project{i}" for i in range(3)]
    for project in projects:
        project.mkdir()
        MemoryStore(resolve_memory_dir(project).path).save(
            Memory(name="Broker", description="Events go through Kafka, topic orders.v2", type="project",
                   body="Order events go to topic orders.v2 on the main cluster."))  # the description is in
        # MEMORY.md, which Claude Code loads itself: the recalled context shows the body (issue 21)

    def respond(body, n):
        return P.message([P.text(json.dumps({"selected_memories": ["project_broker.md"]}))], model=body["model"])

    apis = [FakeAPI(respond) for _ in projects]
    for api in apis:
        api.__enter__()
    try:
        envs = [{"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": f"key-{i}", "MEMDIR_RECALL_SERVER": "1",
                 "MEMDIR_RECALL_SERVER_IDLE": "3", "MEMDIR_RECALL_TIMEOUT": "20"} for i, api in enumerate(apis)]
        path = server_socket.socket_path({**os.environ, **envs[0]})
        assert {server_socket.socket_path({**os.environ, **env}) for env in envs} == {path}

        # Three sessions' first prompts at once: each finds no server and starts one; one is left.
        for proc in [_prompt(p, f"first-{i}", env) for i, (p, env) in enumerate(zip(projects, envs, strict=True))]:
            assert proc.wait(timeout=60) == 0, proc.stderr.read()
        assert _wait_for(lambda: os.path.exists(path + ".pid"))
        assert _wait_for(lambda: len(_servers(home)) == 1), _servers(home)
        server_pid = _servers(home)[0]
        cmdline = Path(f"/proc/{server_pid}/cmdline").read_bytes()
        assert path.encode() not in cmdline and b".sock" not in cmdline  # `ps` shows no socket path

        # Their next prompts: the one server answers each through that session's own endpoint.
        for i, (project, env) in enumerate(zip(projects, envs, strict=True)):
            out = _prompt(project, f"next-{i}", env)
            assert out.wait(timeout=60) == 0, out.stderr.read()
            stdout = out.stdout.read()
            assert "topic orders.v2" in json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
        assert [len(api.requests) for api in apis] == [1, 1, 1]
        assert all(api.requests[0]["model"] == "claude-haiku-5-5" for api in apis)
        assert _servers(home) == [server_pid]
    finally:
        for api in apis:
            api.__exit__(None, None, None)

    # The sessions are over: after its idle time the server is gone, and so is its socket.
    assert _wait_for(lambda: not _servers(home)), _servers(home)
    assert not os.path.exists(path)
