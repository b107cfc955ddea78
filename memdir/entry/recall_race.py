"""The prompt hook's recall: the warm server's answer, or this process's own, whichever comes first.

Thin when the server is up (issue 26): the request is sent before anything of the recall stack is
imported or the transcript is read, and a reply within GRACE_SECONDS is used as it is. A server that
has acknowledged the question (recall.server sends one space on accepting it) is alive and working: its
answer is waited for up to TAKEN_GRACE_SECONDS, since a local recall racing it would mostly take its CPU.
A server silent past the grace (stuck, far behind; the prompt hook gives it ACK_SECONDS from the question's sending)
is raced instead of waited for: this process starts its own lexical recall, having spent the grace
importing it, and whichever answer is ready first is used (the recalling thread looks for the server's reply
every LOOK_SECONDS, on a timer signal: no thread waits for it). A stuck server therefore costs about
nothing over no server at all, never its timeout plus a local recall after it.

Neither side records what it surfaced: the hook claims the answer it used (memdir.entry.prompt_claim), so a
memory the losing side picked is not marked as shown in the session.
"""

from __future__ import annotations

import time

# _signal and the reply reader are imported where a connection is raced: with no server (MEMDIR_RECALL_SERVER=0, or
# none running) the hook pays only for `Answer`. A connection is early_ask's bare `_socket` one or a `socket.socket`:
# both are read the same way, and `socket` itself is never imported here.

# How long a server that has not even said it read the question is given, counted from the race's start,
# which the local recall's imports take anyway: a live server's acknowledgement comes within milliseconds of
# the question (sent before the hook resolved its folder), and any more would be pure wait over no server.
GRACE_SECONDS = 0.005
# A live server acknowledges a question (recall.server.TAKEN) within this long of its sending under load
# (the hook sends it before resolving its folder, so this has mostly passed when the race starts). Measured
# with a warm server at 200 memories: the race starts 19-29 ms after the question went out, the
# acknowledgement long in by then; at 25 ms, a stuck server made the faster hook (rank index) sit idle for
# the rest of the window, +5.8 ms paired over no server at all. The local recall now runs during the window
# (race's `ack_by`): only what is left of it once the local answer is ready is waited for.
ACK_SECONDS = 0.015
# Once the server has said it read the question (it is alive, not stuck before reading), its answer is
# waited for this long from the race's start before a local recall competes with it for the CPU: a warm
# server answers 20,000 memories in about 0.15 s, where a local recall takes seconds (issue 26).
TAKEN_GRACE_SECONDS = 0.3
# While this process recalls, how often it looks whether the server's reply has come (a timer signal, no thread):
# the server's answer cuts the local recall short at most this long after it arrived. A look costs some 10 us.
LOOK_SECONDS = 0.005


def _interrupt_signal() -> int | None:
    """The timer signal that makes `local` look for the server's reply (ours for the race's moment, never left
    installed), or None where there is no interval timer."""
    import _signal  # type: ignore[import-not-found]  # signal's C half, which typeshed has no stub for

    return getattr(_signal, "SIGALRM", None) if hasattr(_signal, "setitimer") else None


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
         prepare=None, ack_by: float | None = None) -> tuple[Answer | None, dict | None]:
    """(the answer to use, the server's reply when it was read). `conn`: a connection the request
    was sent on (server_socket.send), or None for no server; `local()`: this process's Answer.

    The server's reply within `grace` (TAKEN_GRACE_SECONDS once the server has said it read the question)
    is used without starting `local`. Past it, `local` runs in this (the main) thread, which a timer signal
    makes look for the reply every LOOK_SECONDS; a usable reply interrupts `local` (the handler raises) and
    is used instead. `prepare()`: what `local` needs
    first (its imports), done during the grace instead of sleeping through it: a server that never
    answers then costs next to nothing over no server at all. `ack_by` (time.monotonic()): when a live
    server has said it read the question (ACK_SECONDS after it went out); `local` runs meanwhile instead of
    waiting for it, and stops if the server said so by then, to wait for its answer as for one that said so
    before the race.
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
        return _race_local(conn, local, expect, ack_by)
    finally:
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
    """Raised in the main thread, by the timer signal's handler, when the server's answer has come during
    `local()`. A BaseException, as KeyboardInterrupt is: recall's own `except Exception` must not swallow it."""


class _ServerTook(BaseException):
    """Raised likewise when the server said it read the question within its time (`ack_by`): `local` stops and
    the server's answer is waited for."""


class _Reply:
    """The server's reply as it comes, read without blocking (or until a deadline)."""

    __slots__ = ("conn", "chunks", "size", "whole", "reply", "begun")

    def __init__(self, conn) -> None:
        self.conn = conn
        self.chunks: list[bytes] = []
        self.size, self.whole, self.begun = 0, False, False
        self.reply: dict | None = None

    @property
    def taken(self) -> bool:
        """Only the server's acknowledgement has come (whitespace, recall.server.TAKEN)."""
        return self.size > 0 and not self.begun

    def read(self, deadline: float | None = None) -> bool:
        """Read what has come (by `deadline`, time.monotonic(), if given); True once the reply is whole: the server
        closed the connection (`reply` is then what it sent, or None when that is no reply), or broke it, or sent
        more than a reply can hold."""
        from memdir.stages.recall.socket_place import MAX_REPLY, parse_reply

        while not self.whole:
            self.conn.settimeout(0.0 if deadline is None else max(0.0, deadline - time.monotonic()))
            try:
                chunk = self.conn.recv(65536)
            except (BlockingIOError, TimeoutError):
                return False
            except OSError:
                self.whole = True
                break
            if not chunk:
                self.whole = True
                self.reply = parse_reply(b"".join(self.chunks))
                break
            self.chunks.append(chunk)
            self.size += len(chunk)
            self.begun = self.begun or bool(chunk.strip())
            self.whole = self.size > MAX_REPLY
        return True


def _race_local(conn, local, expect: dict | None = None, ack_by: float | None = None,
                carried: _Reply | None = None) -> tuple[Answer | None, dict | None]:
    """`local()` in this thread, looking for the server's reply every LOOK_SECONDS (an interval timer's signal)
    and cut short by a usable one. No thread waits for the server: starting one, and the hand-overs of the
    interpreter lock it took (to start reading, and to end once the connection closed), cost a stuck server
    about 0.45 ms of CPU over no server at all, and more in wall time on a busy machine (issue 26).
    `ack_by`: see `race`; the timer's first look is then. `carried`: what a previous race read of the reply.
    Another thread of this process barely runs meanwhile: each look's socket read hands the interpreter lock over
    and takes it back, which keeps a thread waiting for the lock waking too early to ask for it (CPython's convoy).
    The hook process runs no other thread; a test that plays the server does so from another process."""
    import _signal

    tick = _interrupt_signal()
    if tick is None:  # no interval timer: the reply is used only if it is whole once `local` is done
        answer = local()
        late = carried or _Reply(conn)
        late.read()
        return answer, late.reply
    now = time.monotonic()
    ack_open = [ack_by is not None and ack_by > now]
    armed = [True]
    reply: _Reply | None = None

    def look(signum, frame) -> None:
        if not armed[0] or reply is None:
            return
        if reply.read():
            _signal.setitimer(_signal.ITIMER_REAL, 0.0)  # the server has said all it will: no more looks
            if from_reply(reply.reply, expect) is not None:
                armed[0] = False
                raise _ServerFirst
        elif ack_open[0] and reply.taken:
            armed[0] = False
            raise _ServerTook
        if signum == tick:  # the timer's first look is at ack_by: an acknowledgement after it is too late
            ack_open[0] = False

    try:
        previous = _signal.signal(tick, look)  # ValueError outside the main thread
    except ValueError:
        from memdir.stages.recall.socket_place import receive

        got = receive(conn)  # no way to interrupt `local`: wait for the server as before
        answer = from_reply(got, expect)
        return (answer if answer is not None else local()), got
    reply = carried or _Reply(conn)
    first = ack_by - now if ack_by is not None and ack_open[0] else LOOK_SECONDS
    before = _signal.setitimer(_signal.ITIMER_REAL, max(first, 1e-4), LOOK_SECONDS)
    answer, server = None, ""
    try:
        try:
            look(0, None)  # what came before the timer started
            answer = local()
        finally:
            armed[0] = False
    except _ServerFirst:
        server = "answered"
    except _ServerTook:
        server = "took"
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0.0)
        # Runs a look that is already due first (disarmed, it returns); None: a handler set from C, not Python.
        _signal.signal(tick, _signal.SIG_DFL if previous is None else previous)
        if before[0] > 0:  # a timer this process had set goes on, less the race's time
            _signal.setitimer(_signal.ITIMER_REAL, max(before[0] - (time.monotonic() - now), 1e-6), before[1])
    if not server and ack_by is not None and ack_open[0]:
        # `local` was done before the server's time to say it read the question was up: the rest is waited out,
        # as a live server answers better than this process (dense, and checked against the project)
        reply.read(ack_by)
        server = "took" if reply.taken else "answered" if reply.whole else ""
    return _settle(conn, local, expect, reply, answer, server)


def _settle(conn, local, expect: dict | None, reply: _Reply, answer: Answer | None,
            server: str) -> tuple[Answer | None, dict | None]:
    """The race's outcome once `local` is done or stopped: `server` is "took" (it said it read the question),
    "answered" (its reply came whole) or "" (neither)."""
    if server == "took":  # alive and on it: its answer is waited for, as for one that said so before the race
        reply.read(time.monotonic() + TAKEN_GRACE_SECONDS)
        if reply.whole and from_reply(reply.reply, expect) is not None:
            server = "answered"
        elif answer is None:  # `local` was stopped for it: the race goes on
            return _race_local(conn, local, expect, carried=reply)
    if server == "answered" and from_reply(reply.reply, expect) is not None:
        return from_reply(reply.reply, expect), reply.reply
    if answer is None:  # an answer that came whole but is no use, after `local` was stopped for it
        answer = local()
    return answer, reply.reply
