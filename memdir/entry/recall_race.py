"""The prompt hook's recall: the warm server's answer, or this process's own, whichever comes first.

Thin when the server is up (issue 26): the request is sent before anything of the recall stack is
imported or the transcript is read, and a reply within GRACE_SECONDS is used as it is. A server that
has acknowledged the question (recall.server sends one space on accepting it) is alive and working: its
answer is waited for up to TAKEN_GRACE_SECONDS, since a local recall racing it would mostly take its CPU.
A server silent past the grace (stuck, far behind; the prompt hook gives it ACK_SECONDS from the question's sending)
is raced instead of waited for: this process starts its own lexical recall, having spent the grace
importing it, and whichever answer is ready first is used. A stuck server therefore costs about
nothing over no server at all, never its timeout plus a local recall after it.

Neither side records what it surfaced: the hook claims the answer it used (memdir.entry.prompt_claim), so a
memory the losing side picked is not marked as shown in the session.
"""

from __future__ import annotations

import time

# _signal, _thread and the reply reader are imported where a connection is raced: with no server
# (MEMDIR_RECALL_SERVER=0, or none running) the hook pays only for `Answer`. A connection is early_ask's bare
# `_socket` one or a `socket.socket`: both are read the same way, and `socket` itself is never imported here.

# How long a server that has not even said it read the question is given, counted from the race's start,
# which the local recall's imports take anyway: a live server's acknowledgement comes within milliseconds of
# the question (sent before the hook resolved its folder), and any more would be pure wait over no server.
GRACE_SECONDS = 0.005
# A live server acknowledges a question (recall.server.TAKEN) within this long of its sending under load
# (the hook sends it before resolving its folder, so this has mostly passed when the race starts). Measured
# with a warm server at 200 memories: the race starts 19-29 ms after the question went out, the
# acknowledgement long in by then; at 25 ms, a stuck server made the faster hook (rank index) sit idle for
# the rest of the window, +5.8 ms paired over no server at all.
ACK_SECONDS = 0.015
# Once the server has said it read the question (it is alive, not stuck before reading), its answer is
# waited for this long from the race's start before a local recall competes with it for the CPU: a warm
# server answers 20,000 memories in about 0.15 s, where a local recall takes seconds (issue 26).
TAKEN_GRACE_SECONDS = 0.3


def _interrupt_signal() -> int:
    """The signal that cuts `local` short: ours for the race's moment, never left installed."""
    import _signal  # type: ignore[import-not-found]  # signal's C half, which typeshed has no stub for

    return getattr(_signal, "SIGUSR1", _signal.SIGINT)


class Answer:
    """What recall gave for this prompt: the context to inject and the memories it holds (rel paths); per
    memory the line saying what its check against the code found (the warm server's: recall.inject's
    verification_line), for a twin hook that renders part of the answer again (memdir.entry.prompt_claim); and
    the prompt's words common to the folder (recall.api.RecallResult.common), which bring no decision alone."""

    __slots__ = ("context", "selected", "source", "checks", "common")

    def __init__(self, context: str, selected: list[str], source: str, checks: dict[str, str] | None = None,
                 common: set[str] | None = None) -> None:
        self.context, self.selected, self.source = context, selected, source
        self.checks = checks or {}
        self.common = common or set()


def from_reply(reply: dict | None, expect: dict | None = None) -> Answer | None:
    """The server's usable answer, or None (no reply, an error or "busy" reply, a malformed one, or one
    resolved for another folder, index or engine than `expect` names: a question sent before this
    process had resolved them, memdir.entry.early_ask)."""
    if not isinstance(reply, dict) or "error" in reply:
        return None
    if expect and any(reply.get(key) != value for key, value in expect.items()):
        return None
    selected = reply.get("selected")
    if not isinstance(selected, list) or not all(isinstance(p, str) for p in selected):
        return None
    checks = reply.get("checks")
    if not isinstance(checks, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in checks.items()):
        checks = None  # a server from before they were sent, or a malformed reply: the answer without them
    common = reply.get("common")
    words = set(common) if isinstance(common, list) and all(isinstance(w, str) for w in common) else None
    return Answer(str(reply.get("context") or ""), selected, "server", checks, words)


def race(conn, local, grace: float = GRACE_SECONDS, expect: dict | None = None,
         prepare=None) -> tuple[Answer | None, dict | None]:
    """(the answer to use, the server's reply when it was read). `conn`: a connection the request
    was sent on (server_socket.send), or None for no server; `local()`: this process's Answer.

    The server's reply within `grace` (TAKEN_GRACE_SECONDS once the server has said it read the question)
    is used without starting `local`. Past it, `local` runs in this (the main) thread while another waits
    for the server; a usable reply interrupts `local` (a signal to the main thread, whose handler
    raises) and is used instead. `prepare()`: what `local` needs
    first (its imports), done during the grace instead of sleeping through it: a server that never
    answers then costs next to nothing over no server at all.
    """
    if conn is None:
        return local(), None
    from memdir.stages.recall.socket_place import receive

    try:
        started = time.monotonic()
        ready = _took_question(conn, 0.0)
        if not ready:
            if prepare is not None:
                prepare()
            ready = _took_question(conn, max(0.0, grace - (time.monotonic() - started)))
        if ready == "taken":  # a live server is on it: its answer, not a local race, is the fast way
            ready = _took_question(conn, max(0.0, max(grace, TAKEN_GRACE_SECONDS) - (time.monotonic() - started)))
        if ready == "answer":
            reply = receive(conn)
            answer = from_reply(reply, expect)
            return (answer if answer is not None else local()), reply
        return _race_local(conn, local, expect)
    finally:
        try:
            conn.shutdown(2)  # SHUT_RDWR: wakes a thread still blocked reading it (a close alone leaves it blocked)
        except OSError:
            pass
        conn.close()


def _took_question(conn, timeout: float) -> str:
    """What the server has sent within `timeout`: "answer" (its reply has begun, or the connection
    closed), "taken" (only the byte recall.server sends once it has read the question, now consumed), or
    "" (nothing)."""
    from _socket import MSG_PEEK  # the C module: a bare connection (early_ask) needs no `socket` import

    # The connection's own timeout, not `select`: one extension module less to load in every hook that asks a
    # server (a stuck server's whole cost over no server is such loads, issue 26).
    previous = conn.gettimeout()
    conn.settimeout(timeout)  # 0.0: a non-blocking look
    try:
        head = conn.recv(64, MSG_PEEK)
    except (BlockingIOError, TimeoutError):
        return ""
    except OSError:
        return "answer"  # receive() meets the same error and says None
    finally:
        conn.settimeout(previous)
    if not head or head.strip():
        return "answer"
    conn.recv(len(head))  # whitespace only: the server's acknowledgement (JSON allows it before the reply)
    return "taken"


class _ServerFirst(BaseException):
    """Raised in the main thread, by a signal, when the server's answer arrives during `local()`.
    A BaseException, as KeyboardInterrupt is: recall's own `except Exception` must not swallow it."""


def _race_local(conn, local, expect: dict | None = None) -> tuple[Answer | None, dict | None]:
    # The C modules, not `signal` and `threading`: `signal` builds its enums on import and `threading` its
    # WeakSets, about 3 ms of CPU that a stuck server made this process pay over no server at all (issue 26:
    # the stuck-server row measured +2.7 to +5.6 ms, paired).
    import _signal
    import _thread

    from memdir.stages.recall.socket_place import receive

    box: dict = {}
    interrupt = _interrupt_signal()
    lock = _thread.allocate_lock()
    main = _thread.get_ident()

    def wait_for_server() -> None:
        reply = receive(conn)
        with lock:
            box["reply"] = reply
            if from_reply(reply, expect) is None or "winner" in box:
                return
            box["winner"] = "server"
        # A real signal, not _thread.interrupt_main: it also cuts a blocking call short (a sleep, a read).
        _signal.pthread_kill(main, interrupt)

    def server_first(signum, frame) -> None:
        raise _ServerFirst

    try:
        if not hasattr(_signal, "pthread_kill"):
            raise ValueError("no pthread_kill")
        previous = _signal.signal(interrupt, server_first)  # ValueError outside the main thread
    except ValueError:
        reply = receive(conn)  # no way to interrupt `local`: wait for the server as before
        answer = from_reply(reply, expect)
        return (answer if answer is not None else local()), reply
    try:
        _thread.start_new_thread(wait_for_server, ())
        try:
            answer = local()
        finally:
            with lock:
                box.setdefault("winner", "local")
        if box["winner"] == "server":
            time.sleep(0.05)  # its signal is on its way (sent just after "winner" was set): take it here
    except _ServerFirst:
        pass
    finally:
        # Safe: the signal is sent at most once, and only after "server" won, which is waited for above.
        _signal.signal(interrupt, previous)
    if box["winner"] == "server":
        return from_reply(box["reply"], expect), box["reply"]
    return answer, box.get("reply")
