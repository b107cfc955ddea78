"""The prompt hook's recall: the warm server's answer, or this process's own, whichever comes first.

Thin when the server is up (issue 26): the request is sent before anything of the recall stack is
imported or the transcript is read, and a reply within GRACE_SECONDS is used as it is. A server that
is slower than that (busy, far behind, stuck) is raced instead of waited for: this process starts
its own lexical recall, and whichever answer is ready first is used. A slow server therefore costs
at most GRACE_SECONDS over no server at all, never its timeout plus a local recall after it.

Neither side records what it surfaced: the hook records the answer it used (recall.state), so a
memory the losing side picked is not marked as shown in the session.
"""

from __future__ import annotations

import select
import signal
import threading
import time

from memdir.stages.recall import server_socket

GRACE_SECONDS = 0.02  # a warm server answers a 200-memory folder in about this much (lexical + dense)
INTERRUPT = getattr(signal, "SIGUSR1", signal.SIGINT)  # ours for the race's moment; never left installed


class Answer:
    """What recall gave for this prompt: the context to inject and the memories it holds (rel paths)."""

    __slots__ = ("context", "selected", "source")

    def __init__(self, context: str, selected: list[str], source: str) -> None:
        self.context, self.selected, self.source = context, selected, source


def from_reply(reply: dict | None, expect: dict | None = None) -> Answer | None:
    """The server's usable answer, or None (no reply, an error or "busy" reply, a malformed one, or one
    resolved for another folder, index or engine than `expect` names: a question sent before this
    process had resolved them, hooks._ask_early)."""
    if not isinstance(reply, dict) or "error" in reply:
        return None
    if expect and any(reply.get(key) != value for key, value in expect.items()):
        return None
    selected = reply.get("selected")
    if not isinstance(selected, list) or not all(isinstance(p, str) for p in selected):
        return None
    return Answer(str(reply.get("context") or ""), selected, "server")


def race(conn, local, grace: float = GRACE_SECONDS, expect: dict | None = None) -> tuple[Answer | None, dict | None]:
    """(the answer to use, the server's reply when it was read). `conn`: a connection the request
    was sent on (server_socket.send), or None for no server; `local()`: this process's Answer.

    The server's reply within `grace` is used without starting `local`. Past it, `local` runs in this
    (the main) thread while another waits for the server; a usable reply interrupts `local` (a signal
    to the main thread, whose handler raises) and is used instead.
    """
    if conn is None:
        return local(), None
    with conn:
        ready, _, _ = select.select([conn], [], [], grace)
        if ready:
            reply = server_socket.receive(conn)
            answer = from_reply(reply, expect)
            return (answer if answer is not None else local()), reply
        return _race_local(conn, local, expect)


class _ServerFirst(BaseException):
    """Raised in the main thread, by a signal, when the server's answer arrives during `local()`.
    A BaseException, as KeyboardInterrupt is: recall's own `except Exception` must not swallow it."""


def _race_local(conn, local, expect: dict | None = None) -> tuple[Answer | None, dict | None]:
    if not hasattr(signal, "pthread_kill") or threading.current_thread() is not threading.main_thread():
        reply = server_socket.receive(conn)  # no way to interrupt `local`: wait for the server as before
        answer = from_reply(reply, expect)
        return (answer if answer is not None else local()), reply
    box: dict = {}
    lock = threading.Lock()
    main = threading.get_ident()

    def wait_for_server() -> None:
        reply = server_socket.receive(conn)
        with lock:
            box["reply"] = reply
            if from_reply(reply, expect) is None or "winner" in box:
                return
            box["winner"] = "server"
        # A real signal, not _thread.interrupt_main: it also cuts a blocking call short (a sleep, a read).
        signal.pthread_kill(main, INTERRUPT)

    def server_first(signum, frame) -> None:
        raise _ServerFirst

    previous = signal.signal(INTERRUPT, server_first)
    try:
        threading.Thread(target=wait_for_server, daemon=True).start()
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
        signal.signal(INTERRUPT, previous)
    if box["winner"] == "server":
        return from_reply(box["reply"], expect), box["reply"]
    return answer, box.get("reply")
