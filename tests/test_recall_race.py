"""The prompt hook races a slow recall server instead of waiting for it (issue 26)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

from memdir.entry.recall_race import Answer, race


def _local(log: list[str], seconds: float = 0.0):
    def local() -> Answer:
        log.append("local started")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:  # pure-Python work, interruptible between bytecodes
            sum(range(1000))
        log.append("local finished")
        return Answer("local context", ["local.md"], "local")
    return local


def _reply_later(server: socket.socket, reply: dict, after: float) -> subprocess.Popen:
    """The server's side from another process, as in production: while this process recalls, the race's timer
    makes it hand the interpreter lock over at each look, and a thread of its own waiting for that lock can be
    starved for the whole recall (CPython's convoy), so a reply sent from a thread came only after it, if at all."""
    code = ("import socket, sys, time; time.sleep(float(sys.argv[1])); "
            "s = socket.socket(fileno=int(sys.argv[2])); s.sendall(sys.argv[3].encode()); s.close()")
    child = subprocess.Popen([sys.executable, "-c", code, str(after), str(server.fileno()), json.dumps(reply)],
                             pass_fds=[server.fileno()])
    server.close()
    return child


def test_no_server_answers_here():
    log: list[str] = []
    answer, reply = race(None, _local(log))
    assert answer is not None and answer.source == "local" and reply is None


def test_a_prompt_server_reply_is_used_without_local_recall():
    client, server = socket.socketpair()
    server.sendall(json.dumps({"context": "from server", "selected": ["a.md"]}).encode())
    server.close()
    log: list[str] = []
    answer, _ = race(client, _local(log), grace=1.0)
    assert answer is not None and (answer.source, answer.context, answer.selected) == ("server", "from server", ["a.md"])
    assert log == []


def test_a_silent_server_costs_no_more_than_the_local_recall():
    client, server = socket.socketpair()
    client.settimeout(30)  # the server's own timeout is long; the race must not wait for it
    log: list[str] = []
    started = time.monotonic()
    answer, reply = race(client, _local(log, 0.2), grace=0.01)
    assert answer is not None and answer.source == "local" and reply is None
    assert time.monotonic() - started < 5
    server.close()


def test_a_server_reply_during_local_recall_interrupts_it():
    client, server = socket.socketpair()
    client.settimeout(30)
    _reply_later(server, {"context": "late but first", "selected": ["b.md"]}, after=0.3)
    log: list[str] = []
    answer, _ = race(client, _local(log, 20.0), grace=0.01)
    assert answer is not None and answer.source == "server" and answer.selected == ["b.md"]
    assert log == ["local started"]  # interrupted: never finished


def test_an_error_reply_leaves_the_local_answer():
    client, server = socket.socketpair()
    client.settimeout(30)
    _reply_later(server, {"error": "busy: 32 requests in progress; answer offline"}, after=0.05)
    log: list[str] = []
    answer, reply = race(client, _local(log, 0.5), grace=0.01)
    assert answer is not None and answer.source == "local" and log[-1] == "local finished"
    assert reply is not None and "error" in reply


def test_an_error_reply_within_grace_falls_back_at_once():
    client, server = socket.socketpair()
    server.sendall(b'{"error": "ValueError: bad folder"}')
    server.close()
    log: list[str] = []
    answer, reply = race(client, _local(log), grace=1.0)
    assert answer is not None and answer.source == "local" and reply == {"error": "ValueError: bad folder"}


def test_the_server_reads_the_tools_in_use_from_the_transcript(tmp_path):
    from memdir.stages.recall.server_answer import _tools

    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi there"}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert _tools({"transcript_path": str(transcript)}) == ["Bash"]
    assert _tools({"tools": ["Edit"], "transcript_path": str(transcript)}) == ["Edit"]  # sent: used as is
    assert _tools({"transcript_path": str(tmp_path / "gone.jsonl")}) == []
    assert _tools({"transcript_path": 5}) == []


def test_a_server_reply_cuts_a_blocking_call_short():
    """The main thread may be inside a blocking call (a read, a lock, a sleep) when the server answers."""
    client, server = socket.socketpair()
    client.settimeout(30)
    _reply_later(server, {"context": "first", "selected": ["c.md"]}, after=0.2)

    def blocked() -> Answer:
        time.sleep(20)
        return Answer("too late", [], "local")

    started = time.monotonic()
    answer, _ = race(client, blocked, grace=0.01)
    assert answer is not None and answer.source == "server" and time.monotonic() - started < 5


def test_the_race_leaves_no_signal_handler_behind():
    import signal

    from memdir.entry.recall_race import _interrupt_signal

    interrupt = _interrupt_signal()
    before = signal.getsignal(interrupt)
    client, server = socket.socketpair()
    client.settimeout(30)
    _reply_later(server, {"context": "x", "selected": []}, after=0.1)
    race(client, _local([], 2.0), grace=0.01)
    assert signal.getsignal(interrupt) == before


def test_recall_catching_exceptions_cannot_swallow_the_servers_win():
    """Recall's own `except Exception` blocks (an unreadable transcript...) must not eat the interrupt."""
    client, server = socket.socketpair()
    client.settimeout(30)
    _reply_later(server, {"context": "server", "selected": ["d.md"]}, after=0.2)

    def careful() -> Answer:
        for _ in range(200):
            try:
                time.sleep(0.1)
            except Exception:  # noqa: BLE001 - what recall does around optional steps
                pass
        return Answer("local", [], "local")

    started = time.monotonic()
    answer, _ = race(client, careful, grace=0.01)
    assert answer is not None and answer.source == "server" and time.monotonic() - started < 5


def test_a_server_that_took_the_question_is_waited_for_instead_of_raced():
    """recall.server acknowledges a question it has read (one space): its answer, 0.15 s later, comes
    without a local recall competing with it for the CPU."""
    client, server = socket.socketpair()
    client.settimeout(30)
    server.sendall(b" ")
    _reply_later(server, {"context": "worth the wait", "selected": ["e.md"]}, after=0.15)
    log: list[str] = []
    prepared: list[str] = []
    answer, reply = race(client, _local(log, 5.0), grace=0.01, prepare=lambda: prepared.append("imports"))
    assert answer is not None and answer.source == "server" and answer.selected == ["e.md"]
    assert log == [] and prepared == []  # no local work at all: the server had the question


def test_a_server_that_took_the_question_and_hangs_is_raced_after_a_while():
    from memdir.entry.recall_race import TAKEN_GRACE_SECONDS

    client, server = socket.socketpair()
    client.settimeout(30)
    server.sendall(b" ")
    log: list[str] = []
    started = time.monotonic()
    answer, reply = race(client, _local(log), grace=0.01)
    assert answer is not None and answer.source == "local" and log == ["local started", "local finished"]
    assert TAKEN_GRACE_SECONDS <= time.monotonic() - started < 5
    server.close()


def test_a_silent_server_leaves_the_grace_to_the_local_recalls_imports():
    client, server = socket.socketpair()
    client.settimeout(30)
    log: list[str] = []
    answer, _ = race(client, _local(log), grace=0.05, prepare=lambda: log.append("prepared"))
    assert answer is not None and answer.source == "local"
    assert log == ["prepared", "local started", "local finished"]
    server.close()


def test_racing_a_silent_server_imports_neither_signal_nor_threading():
    """The stuck-server path stays as cheap as no server: `signal` builds enums and `threading` WeakSets on
    import (about 3 ms of the hook's CPU), so the race uses their C halves."""
    import subprocess
    import sys

    code = (
        "import socket, sys\n"
        "from memdir.entry.recall_race import Answer, race\n"
        "ours, server = socket.socketpair()\n"
        "answer, reply = race(ours, lambda: Answer('local', ['a.md'], 'local'), grace=0.0)\n"
        "print(answer.source, reply, 'signal' in sys.modules, 'threading' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split() == ["local", "None", "False", "False"]


def test_a_race_outside_the_main_thread_waits_for_the_server_instead():
    """No signal handler can be set outside the main thread: the server's reply is waited for, and used."""
    ours, server = socket.socketpair()
    log: list[str] = []
    _reply_later(server, {"context": "server context", "selected": ["s.md"]}, after=0.05)
    got: dict = {}
    worker = threading.Thread(target=lambda: got.update(result=race(ours, _local(log), grace=0.0)))
    worker.start()
    worker.join(10)
    answer, reply = got["result"]
    assert answer is not None and answer.source == "server" and log == []


def test_racing_a_silent_server_starts_no_thread_beside_the_local_recall():
    """A thread that waited for the server beside the local recall cost a stuck server about 0.45 ms of the hook's
    CPU (its start, and two hand-overs of the interpreter lock), 1-3 ms of wall time on a busy machine (issue 26):
    the recalling thread itself looks for the reply now."""
    import _thread

    client, server = socket.socketpair()
    client.settimeout(30)
    before = _thread._count()
    during: list[int] = []

    def local() -> Answer:
        time.sleep(0.05)  # long enough for a thread started beside it to be running (it counts once it runs)
        during.append(_thread._count())
        return Answer("local context", [], "local")

    answer, reply = race(client, local, grace=0.0)
    assert answer is not None and answer.source == "local" and reply is None
    assert during == [before]
    server.close()


def test_the_race_leaves_no_timer_running_and_a_timer_set_before_it_runs_on():
    import signal

    client, server = socket.socketpair()
    client.settimeout(30)
    race(client, _local([], 0.05), grace=0.0)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    server.close()
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        client, server = socket.socketpair()
        client.settimeout(30)
        race(client, _local([], 0.05), grace=0.0)
        left, interval = signal.getitimer(signal.ITIMER_REAL)
        assert 25.0 < left < 30.0 and interval == 0.0 and fired == []
        server.close()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def test_a_reply_that_is_no_answer_stops_the_looks_and_leaves_the_local_answer():
    """An error reply, or a connection closed without one, while the local recall runs: the local answer stands, and
    the race stops looking (no timer signal for the rest of a long recall)."""
    import signal

    for sent in (b'{"error": "busy"}', b""):
        client, server = socket.socketpair()
        client.settimeout(30)
        timers: list[float] = []

        def local(sent=sent, server=server, timers=timers) -> Answer:
            server.sendall(sent)
            server.close()
            time.sleep(0.1)
            timers.append(signal.getitimer(signal.ITIMER_REAL)[1])
            return Answer("local context", ["local.md"], "local")

        answer, reply = race(client, local, grace=0.0)
        assert answer is not None and answer.source == "local" and timers == [0.0]
        assert reply == ({"error": "busy"} if sent else None)


def _acknowledge_later(server: socket.socket, after: float, reply: dict | None = None, then: float = 0.0):
    """The server's acknowledgement (one space), then perhaps its reply, from another process (see _reply_later)."""
    code = ("import socket, sys, time; time.sleep(float(sys.argv[1])); s = socket.socket(fileno=int(sys.argv[2]));\n"
            "try:\n s.sendall(b' ')\n if sys.argv[3]:\n  time.sleep(float(sys.argv[4])); s.sendall(sys.argv[3].encode())\n"
            "except OSError:\n pass\ns.close()")
    child = subprocess.Popen([sys.executable, "-c", code, str(after), str(server.fileno()),
                              json.dumps(reply) if reply is not None else "", str(then)], pass_fds=[server.fileno()])
    server.close()
    return child


def test_a_server_acknowledging_in_its_time_while_the_local_recall_runs_is_waited_for():
    client, server = socket.socketpair()
    client.settimeout(30)
    _acknowledge_later(server, 0.05, {"context": "worth the wait", "selected": ["f.md"]}, then=0.2)
    log: list[str] = []
    started = time.monotonic()
    answer, reply = race(client, _local(log, 5.0), grace=0.0, ack_by=started + 0.15)
    assert answer is not None and answer.source == "server" and answer.selected == ["f.md"]
    assert log == ["local started"] and time.monotonic() - started < 4  # stopped once the server said it took it


def test_an_acknowledgement_after_its_time_leaves_the_race_on():
    client, server = socket.socketpair()
    client.settimeout(30)
    _acknowledge_later(server, 0.15)
    log: list[str] = []
    started = time.monotonic()
    answer, reply = race(client, _local(log, 0.4), grace=0.0, ack_by=started + 0.05)
    assert answer is not None and answer.source == "local" and log == ["local started", "local finished"]
    assert reply is None
    server.close()


def test_a_local_recall_done_early_leaves_the_server_the_rest_of_its_time_to_acknowledge():
    """The server answers better (dense, checked against the project): a local answer ready before the server's
    time to say it read the question is up does not pre-empt a live server."""
    client, server = socket.socketpair()
    client.settimeout(30)
    _acknowledge_later(server, 0.1, {"context": "the better answer", "selected": ["g.md"]}, then=0.1)
    log: list[str] = []
    answer, reply = race(client, _local(log), grace=0.0, ack_by=time.monotonic() + 0.3)
    assert answer is not None and answer.source == "server" and answer.selected == ["g.md"]
    assert log == ["local started", "local finished"]
