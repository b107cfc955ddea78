"""The prompt hook sends its question before resolving anything; the server resolves the folder itself,
and its answer is used only when it resolved what the hook did (issue 26)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading

import pytest

from memdir.entry.install import hook_argv
from memdir.entry.recall_race import Answer, from_reply, race
from memdir.model import Memory
from memdir.stages.recall import server, server_socket
from memdir.store import MemoryStore


@pytest.fixture
def project(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    memory = tmp_path / "memory"
    MemoryStore(memory).save(Memory(name="Deploys", description="Deploys go out on Tuesdays via the release train",
                                    type="project"))
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    return folder, memory


def test_the_server_resolves_an_early_question_as_the_hook_would(project):
    folder, memory = project
    request = {"resolve": True, "query": "when do deploys go out on the release train", "cwd": str(folder),
               "session_id": "s", "record": False, "env": server_socket.request_env()}
    reply = server.handle(request)
    assert (reply["memory_dir"], reply["index_loaded"], reply["asked_engine"]) == (str(memory), False, "offline")
    assert "Tuesdays" in reply["context"]
    with pytest.raises(ValueError):
        server.handle({**request, "cwd": "/"})  # no project there: no folder, and nothing scanned


def test_the_server_answers_a_raw_hook_payload_as_the_fields_it_holds(project):
    """The console script sends the payload before parsing it (memdir.entry.early_ask); the server reads
    the prompt, cwd, session and transcript out of it, and asks nothing for a one-word prompt."""
    folder, memory = project
    payload = {"session_id": "s", "cwd": str(folder), "hook_event_name": "UserPromptSubmit", "transcript_path": None,
               "prompt": "  when do deploys go out on the release train  "}
    request = {"resolve": True, "record": False, "hook_payload": json.dumps(payload), "env": server_socket.request_env()}
    reply = server.handle(request)
    assert reply["memory_dir"] == str(memory) and "Tuesdays" in reply["context"]
    for nothing in ("continue", "[1, 2]"):
        with pytest.raises(ValueError):
            server.handle({**request, "hook_payload": json.dumps({**payload, "prompt": nothing})
                           if nothing == "continue" else nothing})


def test_an_answer_resolved_for_another_folder_is_not_used():
    expect = {"memory_dir": "/m/a", "index_loaded": False, "asked_engine": "offline"}
    good = {"context": "c", "selected": ["x.md"], **expect}
    assert from_reply(good, expect) is not None
    for key, other in (("memory_dir", "/m/b"), ("index_loaded", True), ("asked_engine", "llm")):
        assert from_reply({**good, key: other}, expect) is None
    client, peer = socket.socketpair()
    peer.sendall(json.dumps({**good, "memory_dir": "/m/b"}).encode())
    peer.close()
    answer, reply = race(client, lambda: Answer("here", [], "local"), grace=1.0, expect=expect)
    assert answer is not None and answer.source == "local" and reply is not None


class FakeServer:
    """Listens where the hook looks for the recall server; answers each request with `reply(request)`."""

    def __init__(self, path: str, reply) -> None:
        self.path, self.reply, self.requests = path, reply, []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                request = json.loads(data)
                self.requests.append(request)
                conn.sendall(json.dumps(self.reply(request)).encode())

    def close(self) -> None:
        self.listener.close()
        os.unlink(self.path)


@pytest.mark.parametrize("dense", ["1", "0"])  # "0": the dense model is off (or not installed): a server still answers
def test_the_hook_asks_before_resolving_and_checks_what_the_server_resolved(project, tmp_path, dense):
    folder, memory = project
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "MEMDIR_RECALL_SERVER": "1", "MEMDIR_ENGINE": "offline",
           "MEMDIR_DENSE": dense}
    path = server_socket.socket_path(env)
    assert path is not None and server_socket.make_private_folder(path)
    resolved = {"memory_dir": str(memory), "index_loaded": False, "asked_engine": "offline"}
    fake = FakeServer(path, lambda request: {"context": "FROM THE SERVER", "selected": ["project_deploys.md"],
                                             **resolved})
    payload = {"session_id": "s1", "cwd": str(folder), "hook_event_name": "UserPromptSubmit",
               "prompt": "when do deploys go out on the release train"}
    def hook() -> str:  # as Claude Code runs it: the command `memdir install` registers
        return subprocess.run(hook_argv("prompt"), input=json.dumps(payload), capture_output=True, text=True,
                              env=env, timeout=60, check=True).stdout
    try:
        used = hook()
        assert fake.requests[0]["resolve"] is True and "memory_dir" not in fake.requests[0]
        assert json.loads(fake.requests[0]["hook_payload"]) == payload  # sent as read, before the hook parsed it
        assert "FROM THE SERVER" in used
        resolved["memory_dir"] = str(tmp_path / "another")  # e.g. a server whose environment differs
        payload["session_id"] = "s2"
        mine = hook()
        assert "FROM THE SERVER" not in mine and "Tuesdays" in mine  # answered here
        assert "resolved another folder" in (memory / ".memdir" / "hook.log").read_text()
    finally:
        fake.close()


@pytest.mark.parametrize("switch", ["CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE"])
def test_the_server_resolves_whether_claude_code_loaded_the_index_from_the_sessions_switches(
        switch, tmp_path, monkeypatch):
    """Claude Code's own memory switches are the session's: one server answers sessions with and without
    them (they are not in its socket's name), so they travel with the question. Read from the server's own
    environment instead, every early answer to the other kind of session named another index_loaded than
    the hook resolved, and was thrown away for a local recall."""
    from memdir.paths import resolve_memory_dir
    from memdir.prompt_scope import index_loaded_by_claude_code

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("MEMDIR_PATH", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "CLAUDE_CONFIG_DIR", switch):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    memory = resolve_memory_dir(folder).path
    MemoryStore(memory).save(Memory(name="Deploys", description="Deploys go out on Tuesdays", type="project"))
    request = {"resolve": True, "query": "when do deploys go out", "cwd": str(folder), "session_id": "s",
               "record": False}
    session = {**os.environ, switch: "1"}  # the hook's session; the server (this process) runs without it
    assert index_loaded_by_claude_code(str(folder), memory, session) is False
    assert server.handle({**request, "env": server_socket.request_env(session)})["index_loaded"] is False
    assert server.handle({**request, "env": server_socket.request_env()})["index_loaded"] is True


@pytest.fixture
def claude_code_user(tmp_path, monkeypatch):
    """What nearly every user of the hook has: the `claude` CLI and a login, the engine left on auto. Auto
    recall stays offline there (a CLI start per prompt costs seconds and the user's plan); the list holds
    each claude-code selection recall was asked to make."""
    from memdir.stages.recall import api

    cli = tmp_path / "claude"
    cli.write_text("#!/bin/sh\nexit 1\n")
    cli.chmod(0o755)
    monkeypatch.setenv("MEMDIR_CLAUDE_CLI", str(cli))
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "a-login")
    monkeypatch.delenv("MEMDIR_ENGINE", raising=False)
    runs: list = []
    monkeypatch.setattr(api, "_select_claude_code", lambda *args, **kwargs: runs.append(args))
    return runs


@pytest.mark.parametrize("engine", ["auto", "claude-code"])  # claude-code: for extraction; prompt recall stays offline
def test_an_early_question_never_starts_the_claude_cli_in_the_server(project, claude_code_user, monkeypatch, engine):
    monkeypatch.setenv("MEMDIR_ENGINE", engine)
    folder, memory = project
    request = {"resolve": True, "query": "when do deploys go out on the release train", "cwd": str(folder),
               "session_id": "s", "record": False, "env": server_socket.request_env()}
    reply = server.handle(request)
    assert claude_code_user == [] and reply["asked_engine"] == "offline" and "Tuesdays" in reply["context"]


@pytest.mark.parametrize("engine", ["auto", "claude-code"])
def test_the_hook_s_own_question_never_starts_the_claude_cli_in_the_server(project, claude_code_user, tmp_path,
                                                                           monkeypatch, engine):
    """The server serves every install now, not only those with the dense model (which most lack): the hook
    named the engine auto resolves to, claude-code, and the server, told claude-code outright, ran it. Set
    outright, the server ran it too, and the hook had answered offline long before (its wait is 5 ms)."""
    monkeypatch.setenv("MEMDIR_ENGINE", engine)
    from memdir.entry import prompt_hook
    from memdir.entry.hooks import HookPayload

    folder, memory = project
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("MEMDIR_RECALL_SERVER", "1")
    sent: list = []
    monkeypatch.setattr(server_socket, "send", lambda request, timeout, env=None: sent.append(request))
    monkeypatch.setattr(server_socket, "start_in_background", lambda env=None: False)
    payload = HookPayload(session_id="s", transcript_path=None, cwd=str(folder), hook_event_name="UserPromptSubmit")
    prompt_hook._ask(memory, "when do deploys go out on the release train", payload)
    assert len(sent) == 1
    reply = server.handle({**sent[0], "env": server_socket.request_env()})
    assert claude_code_user == [] and reply["engine"] == "offline" and "Tuesdays" in reply["context"]


def test_with_no_server_the_hook_never_starts_the_claude_cli_either(project, claude_code_user, monkeypatch):
    """The same rule in the hook's own process (the server off, or no private folder for its socket)."""
    from memdir.entry import prompt_hook
    from memdir.entry.hooks import HookPayload

    monkeypatch.setenv("MEMDIR_ENGINE", "claude-code")
    folder, memory = project
    payload = HookPayload(session_id="s", transcript_path=None, cwd=str(folder), hook_event_name="UserPromptSubmit",
                          prompt="when do deploys go out on the release train")
    assert "Tuesdays" in prompt_hook.prompt_output(payload) and claude_code_user == []


def test_the_hook_finds_the_servers_socket_once_per_prompt(project, tmp_path, monkeypatch):
    """early_ask found the socket (its folder private, the server on) and sent the question on it: the hook did the
    same again before using that connection, a key over the whole environment and a stat, ~0.15 ms of CPU that
    a stuck server cost over no server at all (issue 26)."""
    import io

    from memdir.entry import hooks
    from memdir.stages.recall import socket_place

    folder, memory = project
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("MEMDIR_RECALL_SERVER", "1")
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    path = server_socket.socket_path()
    assert path is not None and server_socket.make_private_folder(path)
    resolved = {"memory_dir": str(memory), "index_loaded": False, "asked_engine": "offline"}
    fake = FakeServer(path, lambda request: {"context": "FROM THE SERVER", "selected": ["project_deploys.md"],
                                             **resolved})
    looked: list[str | None] = []
    find = socket_place.socket_path
    monkeypatch.setattr(socket_place, "socket_path", lambda env=None: looked.append(find(env)) or looked[-1])
    payload = {"session_id": "s1", "cwd": str(folder), "hook_event_name": "UserPromptSubmit",
               "prompt": "when do deploys go out on the release train"}
    out = io.StringIO()
    try:
        assert hooks.main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
    finally:
        fake.close()
    assert "FROM THE SERVER" in out.getvalue() and len(fake.requests) == 1
    assert looked == [path]


def test_a_silent_server_s_time_to_acknowledge_overlaps_the_local_recall(project, monkeypatch):
    """A live server says it read the question within ACK_SECONDS of its sending; the hook slept out what was left
    of that window before starting its own recall, which a stuck server made pure wait over no server at all
    (issue 26). Both take a second here: together they took two."""
    import time

    from memdir.entry import prompt_hook, recall_race
    from memdir.entry.hooks import HookPayload
    from memdir.stages.recall import api

    class Recalled:
        context, selected, debug, common = "local context", [], [], set()

    def recall(*args, **kwargs) -> Recalled:
        time.sleep(1.0)
        return Recalled()

    folder, memory = project
    monkeypatch.setattr(recall_race, "ACK_SECONDS", 1.0)
    monkeypatch.setattr(api, "recall", recall)
    ours, server = socket.socketpair()
    ours.settimeout(30)
    payload = HookPayload(session_id="s", transcript_path=None, cwd=str(folder), hook_event_name="UserPromptSubmit")
    expect = {"memory_dir": str(memory), "index_loaded": False, "asked_engine": "offline"}
    started = time.monotonic()
    asked = prompt_hook.Asked(False, ours, 0.0, expect, started, "offline")
    answer = prompt_hook._recall(str(memory), "when do deploys go out on the release train", payload, asked)
    assert answer.source == "local" and answer.context == "local context"
    assert time.monotonic() - started < 1.6
    server.close()
