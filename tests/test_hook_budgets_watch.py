"""benchmarks.hook_budgets' watch of the warm server (its pid file, /proc): a pid file being written, or a server
gone, never stops the run."""

from __future__ import annotations

import os

from benchmarks import hook_budgets


def test_an_empty_pid_file_is_nothing_to_watch(tmp_path, monkeypatch):
    monkeypatch.setattr(hook_budgets.time, "sleep", lambda s: None)
    sock = str(tmp_path / "recall.sock")
    open(f"{sock}.pid", "w").close()  # the server writes it after listening: read at the wrong moment
    assert hook_budgets.wait_until_idle(sock) is True
    assert hook_budgets.server_rss(sock) is None


def test_a_gone_server_is_idle_and_a_live_one_is_measured(tmp_path, monkeypatch):
    monkeypatch.setattr(hook_budgets.time, "sleep", lambda s: None)
    sock = str(tmp_path / "recall.sock")
    with open(f"{sock}.pid", "w") as handle:
        handle.write("999999999")  # past pid_max: no such process
    assert hook_budgets.wait_until_idle(sock) is True
    with open(f"{sock}.pid", "w") as handle:
        handle.write(str(os.getpid()))
    assert hook_budgets.wait_until_idle(sock, limit=5) is True  # no time between two reads: no CPU used
    assert (hook_budgets.server_rss(sock) or 0) > 0
