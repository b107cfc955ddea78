"""benchmarks.warm_server's watch of the warm server (its pid file, /proc): a pid file being written, or a server
gone, never stops the run."""

from __future__ import annotations

import os

from benchmarks import hook_budgets, warm_server


def test_an_empty_pid_file_is_nothing_to_watch(tmp_path, monkeypatch):
    monkeypatch.setattr(warm_server.time, "sleep", lambda s: None)
    sock = str(tmp_path / "recall.sock")
    open(f"{sock}.pid", "w").close()  # the server writes it after listening: read at the wrong moment
    assert warm_server.wait_until_idle(sock) is True
    assert warm_server.server_rss(sock) is None


def test_a_gone_server_is_idle_and_a_live_one_is_measured(tmp_path, monkeypatch):
    monkeypatch.setattr(warm_server.time, "sleep", lambda s: None)
    sock = str(tmp_path / "recall.sock")
    with open(f"{sock}.pid", "w") as handle:
        handle.write("999999999")  # past pid_max: no such process
    assert warm_server.wait_until_idle(sock) is True
    with open(f"{sock}.pid", "w") as handle:
        handle.write(str(os.getpid()))
    assert warm_server.wait_until_idle(sock, limit=5) is True  # no time between two reads: no CPU used
    assert (warm_server.server_rss(sock) or 0) > 0


def test_the_slow_server_verdict_is_judged_on_pairs_not_on_noise():
    """Never worse than no server: a hook a steady 5 ms slower is worse however noisy the runs; one that is
    as fast, with the noise of a busy machine, is not, even when its median happens to be higher."""
    import random

    rng = random.Random(1)
    none = [0.070 + rng.uniform(-0.01, 0.01) for _ in range(25)]
    slower = [t + 0.005 + rng.uniform(-0.001, 0.001) for t in none]
    assert hook_budgets.slow_verdict(200, slower, none).startswith("MISSED")
    same = [t + rng.uniform(-0.004, 0.0042) for t in none]
    assert hook_budgets.slow_verdict(200, same, none).startswith("met")
    low, high = hook_budgets.median_interval([0.001] * 10)
    assert low == high == 0.001


def test_the_stuck_servers_queue_is_drained_so_the_next_hook_still_reaches_it(tmp_path):
    """The slow-server row's listener never answers; left undrained, its queue filled after 128 hooks and the next
    hook's connection was refused, so it started a real server and the row measured that (speed19)."""
    import socket

    path = str(tmp_path / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(2)
    listener.setblocking(False)
    queued = 0
    while True:  # hooks connect and leave, until the queue (its backlog, and one more on Linux) is full
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.setblocking(False)
        refused = client.connect_ex(path) != 0
        client.close()
        if refused:
            break
        queued += 1
        assert queued < 50
    assert queued >= 2 and hook_budgets.drain(listener) == queued
    after = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    after.setblocking(False)
    assert after.connect_ex(path) == 0
    after.close()
    listener.close()
