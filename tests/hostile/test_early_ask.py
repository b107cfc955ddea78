"""The prompt hook's early question (memdir.entry.early_ask): the raw payload goes to the warm server before
the hook imports anything, on bare `_socket` calls, so its checks are tried here apart from the socket
client's (test_recall_socket.py): no byte of a prompt reaches a server of another uid, a request the server
would refuse is not sent, and stdin that cannot be read is the hook's logged failure, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memdir.entry import early_ask
from memdir.stages.recall import server_socket, socket_place

from .test_recall_socket import PROMPT, Listener, heard_by_nobody, needs_a_second_user, shared_tmp  # noqa: F401


@pytest.fixture
def short_home(tmp_path_factory, monkeypatch):
    """A HOME short enough for a socket path (the hostile suite's own HOME is deliberately long). The dense
    model stays off (conftest): the hook asks early on every install, with or without it."""
    home = tmp_path_factory.mktemp("h")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "MEMDIR_RECALL_SERVER"):
        monkeypatch.delenv(name, raising=False)
    return home


def _payload(prompt: str = PROMPT) -> str:
    return json.dumps({"session_id": "s", "cwd": "/nonexistent", "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt})


def _asked(payload: str) -> bytes:
    """What a listener of this uid at the socket's place received from ask_first(payload)."""
    path = server_socket.socket_path()
    assert path is not None and server_socket.make_private_folder(path)
    listener = Listener(path)
    try:
        early = early_ask.ask_first(payload)
        if early is not None:
            early.close()
    finally:
        listener.close()
        os.unlink(path)
    return listener.received


def test_the_early_question_never_reaches_a_server_of_another_uid(short_home, monkeypatch, tally):
    tally.tried += 2
    assert PROMPT.encode() in _asked(_payload())  # the same uid: asked (the check below can fail)
    monkeypatch.setattr(socket_place, "peer_uid", lambda conn: os.getuid() + 1)
    assert _asked(_payload()) == b""  # not a byte of the prompt was sent


@needs_a_second_user
def test_a_real_server_of_another_user_hears_nothing_early(short_home, shared_tmp, tally):  # noqa: F811
    tally.tried += 1
    answers: list = []
    heard = heard_by_nobody(shared_tmp, lambda: answers.append(early_ask.ask_first(_payload())))
    assert answers == [None]
    assert PROMPT not in heard and heard in ("b''", "nothing"), heard


def test_a_question_the_server_would_refuse_is_not_sent(short_home, tally):
    """The server reads at most RECALL_REQUEST_MAX_BYTES of a request, then refuses it: a payload that makes
    a longer request (a pasted log) is not sent early, so the hook does not wait on a refusal."""
    from memdir import constants as C

    tally.tried += 2
    fits = "x " * ((C.RECALL_REQUEST_MAX_BYTES - 4096) // 2)
    assert _asked(_payload(fits)).startswith(b'{"resolve": true')  # (the listener reads its first 64 KB)
    assert _asked(_payload(fits + "x " * 4096)) == b""
    assert _asked(_payload("\u00e9 " * (C.RECALL_REQUEST_MAX_BYTES // 6))) == b""  # escaped, it is over the limit


class _Unreadable:
    def read(self, size: int = -1) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


def test_stdin_that_cannot_be_read_is_logged_not_raised(tally):
    from memdir.entry.hooks import main

    tally.tried += 1
    assert main(["prompt"], stdin=_Unreadable()) == 0


@pytest.mark.parametrize("stdin", [b'\xff\xfe{"prompt": "a b"}', b'{"prompt": "caf\xe9 au lait", "cwd": "/"}'])
def test_a_payload_that_is_not_utf8_is_no_traceback(stdin, tally):
    """Python reads stdin strictly under a UTF-8 locale (macOS's default): the console script's early read
    raised before the hook's own error handling, a traceback and exit 1 on the user's prompt."""
    tally.tried += 1
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "MEMDIR_RECALL_SERVER": "0"}
    proc = subprocess.run([sys.executable, "-m", "memdir.entry.main", "hook", "prompt"], input=stdin,
                          capture_output=True, env=env, timeout=30)
    if b"Traceback" in proc.stderr:
        tally.tracebacks += 1
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_stuck_server_is_asked_once_and_a_long_prompt_is_answered_here(short_home, tmp_path, monkeypatch, tally):
    """A server that holds the socket and reads nothing (stuck, or far behind): a prompt longer than the
    socket's buffer could not be written within HOOK_EARLY_SEND_SECONDS. The hook then neither sends it again
    (which waited the recall timeout a second time: 8.2 s in all) nor waits for an answer: it recalls here."""
    import io
    import socket

    from memdir import constants as C
    from memdir.entry.hooks import main
    from tests.hook_runs import deploys_memory

    tally.tried += 1
    deploys_memory(tmp_path, monkeypatch)
    path = server_socket.socket_path()
    assert path is not None and server_socket.make_private_folder(path)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(path)
    stuck.listen(8)  # never accepts: connections wait in its backlog, unread
    project = tmp_path / "project"
    project.mkdir()
    prompt = "when do deploys go out on the release train " + "padding " * 200_000  # ~1.6 MB: over any buffer
    payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt[: C.RECALL_REQUEST_MAX_BYTES // 2]})
    out = io.StringIO()
    try:
        assert main(["prompt"], stdin=io.StringIO(payload), stdout=out) == 0
        stuck.setblocking(False)
        connections = 0
        while True:
            try:
                stuck.accept()[0].close()
                connections += 1
            except BlockingIOError:
                break
    finally:
        stuck.close()
        os.unlink(path)
    assert connections == 1  # asked once, early; never again
    assert "Tuesdays" in out.getvalue()  # answered in the hook's own process

