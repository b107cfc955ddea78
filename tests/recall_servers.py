"""The warm recall server (recall.server) run in a thread of the test process, as the tests that talk to it start it."""

from __future__ import annotations

import os
import threading
import time

from memdir.stages.recall import server

START_TIMEOUT_S = 10  # generous: two cores shared by several test runs


_STOPS: dict[threading.Thread, tuple[str, threading.Event]] = {}


def serve_in_thread(path: str, idle: float) -> threading.Thread:
    """`server.serve(path, idle=idle)` in a daemon thread, back once the server listens (it writes its pid file
    after listening); the caller joins the thread, which ends `idle` seconds after the last request, or ends it at
    once with `stop_server`."""
    stop = threading.Event()
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"idle": idle, "stop": stop}, daemon=True)
    _STOPS[thread] = (path, stop)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not os.path.exists(path + ".pid") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.path.exists(path + ".pid"), f"the recall server at {path} did not start within {START_TIMEOUT_S} s"
    return thread


def stop_server(thread: threading.Thread, timeout: float = 15) -> None:
    """End a server of `serve_in_thread` now rather than waiting out its idle time (a second of the suite each),
    through its own cleanup: the stop is set, and one connection wakes the accept loop to see it."""
    import contextlib
    import socket

    path, stop = _STOPS.pop(thread)
    stop.set()
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
        wake.settimeout(2)
        wake.connect(path)
    thread.join(timeout=timeout)
    assert not thread.is_alive(), f"the recall server at {path} did not stop within {timeout} s"
