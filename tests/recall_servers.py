"""The warm recall server (recall.server) run in a thread of the test process, as the tests that talk to it start it."""

from __future__ import annotations

import os
import threading
import time

from memdir.stages.recall import server

START_TIMEOUT_S = 10  # generous: two cores shared by several test runs


def serve_in_thread(path: str, idle: float) -> threading.Thread:
    """`server.serve(path, idle=idle)` in a daemon thread, back once the server listens (it writes its pid file
    after listening); the caller joins the thread, which ends `idle` seconds after the last request."""
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"idle": idle}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not os.path.exists(path + ".pid") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.path.exists(path + ".pid"), f"the recall server at {path} did not start within {START_TIMEOUT_S} s"
    return thread
