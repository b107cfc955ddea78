"""The prompt hook's question to the warm recall server, sent before the hook imports anything else
(issue 26).

With the server up, a prompt's wait is the server's answer (the query's embedding alone is ~25 ms), and the
sooner the question goes out, the sooner it comes back. Sent after the hook's own imports (json and socket
bring in `re` and `enum`, some 10-15 ms here), the server started that much later. So the raw payload goes
out as read: the server parses it and resolves the folder, index and engine from its cwd, as the hook does
meanwhile, and the hook uses the answer only when it resolved the same (recall_race.from_reply).

Only what a bare start has loaded, `_socket` and memdir.light_json (the C halves of socket and json) and
recall.socket_place. The peer's uid is checked before the prompt is written, as recall.server_socket does.
"""

from __future__ import annotations

import io
import os
import time

from memdir import constants as C


class EarlyQuestion:
    """The connection a prompt's question went out on (a bare `_socket` one) and when it was sent; `conn` None
    when a server is there but did not take the question within HOOK_EARLY_SEND_SECONDS (stuck, or far behind):
    the hook then neither asks it again nor waits for it, and recalls in its own process."""

    __slots__ = ("conn", "sent_at")

    def __init__(self, conn, sent_at: float) -> None:
        self.conn, self.sent_at = conn, sent_at

    @property
    def stuck(self) -> bool:
        return self.conn is None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class Unread:
    """Stdin that could not be read (bytes that are not UTF-8 under a strict locale, a directory, an I/O
    error): reading it again raises the same error, inside memdir.entry.hooks.main's handling, which logs it
    and exits 0. Raised here, before that handling, it was a traceback and exit 1 on the user's prompt."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error

    def read(self, size: int = -1) -> str:
        raise self.error


def read_and_ask(stdin) -> tuple[io.StringIO | Unread, EarlyQuestion | None]:
    """The hook's stdin, read (at most the payload limit and one more character), and the question sent
    on it to the warm server if one may answer it."""
    try:
        raw = stdin.read(C.HOOK_PAYLOAD_MAX_BYTES + 1)
    except Exception as exc:  # noqa: BLE001 - a memory hook never fails the prompt: hooks.main logs it
        return Unread(exc), None
    return io.StringIO(raw), ask_first(raw) if len(raw) <= C.HOOK_PAYLOAD_MAX_BYTES else None


def ask_first(raw: str) -> EarlyQuestion | None:
    """Send the hook payload `raw` to the warm server, unresolved; None when no server may answer it: it
    is off, no server runs, its folder is not private, or it belongs to another user."""
    try:
        import _socket
    except ImportError:  # pragma: no cover - another Python
        return None
    from memdir.stages.recall import socket_place

    if not socket_place.enabled():
        return None
    path = socket_place.socket_path()
    if path is None or socket_place.folder_state(path) != "private":
        return None
    if len(raw) > C.RECALL_REQUEST_MAX_BYTES:
        return None  # its request is longer still (a character is at least a byte, escaped): not even built
    request = _request(raw)
    if len(request) > C.RECALL_REQUEST_MAX_BYTES:
        return None  # the server would read the first MB and refuse it: the hook answers it, as it does anyway
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(C.HOOK_EARLY_SEND_SECONDS)
        conn.connect(path)
        if socket_place.peer_uid(conn) != os.getuid():
            conn.close()
            return None  # never send a prompt to another user's process
        conn.sendall(request)
    except TimeoutError:  # a server holds the socket and reads nothing: asking it again would wait again
        conn.close()
        return EarlyQuestion(None, time.monotonic())
    except (OSError, ValueError):
        conn.close()
        return None
    return EarlyQuestion(conn, time.monotonic())


def _request(raw: str) -> bytes:
    """The question as one JSON line: the payload as a string, this session's per-request environment."""
    from memdir import light_json
    from memdir.stages.recall.socket_place import request_env

    question = {"resolve": True, "record": False, "hook_payload": raw, "env": request_env()}
    return (light_json.dumps(question) + "\n").encode("ascii")
