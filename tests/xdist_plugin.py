"""How the suite runs under pytest-xdist (`-n auto` in pyproject.toml's addopts, which loads this plugin).

Tests are handed out one by one, as xdist's default `--dist load` does, except the folders below: each runs
whole on one worker, in file order, as in a serial run.

- tests/hostile/ ends with test_zz_secret_scan.py, which reads back every file the folder's tests wrote (under
  one session folder per worker) looking for planted secrets: split, it would scan a part and pass.
- tests/realclient/ and tests/browser/ share one npm install and one Chromium per session.

A scope of their own, not `xdist_group` marks with `--dist loadgroup`: those work by rewriting node ids, which
pytest 9.2 ignores, so the groups were silently dropped (pytest-xdist issue 1386).

A hung test still fails by name with every thread's stack, as pytest-timeout's thread method does serially:
a worker's stdout is /dev/null, so the stacks go to the stderr the worker started with.
"""

from __future__ import annotations

import faulthandler
import os
import threading

import pytest
from xdist.scheduler import LoadScopeScheduling

WHOLE_FOLDERS = ("tests/hostile/", "tests/realclient/", "tests/browser/")


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its folder when that is kept whole, else the test itself."""
    for folder in WHOLE_FOLDERS:
        if nodeid.startswith(folder):
            return folder
    return nodeid


class FolderScopes(LoadScopeScheduling):
    """xdist's scope scheduler (largest scope first, then one scope per idle worker) with scope_of's scopes."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)

    def remove_node(self, node):
        """A worker is gone: hand its unfinished tests to the others, except the one it was running.

        xdist reports that one as crashed (a hang past pytest-timeout's limit ends the worker). The scope
        scheduler as shipped queues it again with the rest, so a hung test hung every replacement worker in
        turn until xdist stopped restarting them: nine timeouts instead of one.
        """
        workload = self.assigned_work.pop(node)
        pending = [nodeid for unit in workload.values() for nodeid, done in unit.items() if not done]
        if not pending:
            return None
        crashed = pending[0]  # a worker runs its tests in the order they were sent
        workload[self._split_scope(crashed)][crashed] = True
        self.workqueue.update((scope, unit) for scope, unit in workload.items() if not all(unit.values()))
        for other in self.assigned_work:
            self._reschedule(other)
        return crashed


@pytest.hookimpl(optionalhook=True)  # hooks of xdist and pytest-timeout, unknown if either is missing
def pytest_xdist_make_scheduler(config, log):
    """FolderScopes for `-n` alone; a --dist given on the command line is xdist's own."""
    if config.getvalue("dist") == "load":
        return FolderScopes(config, log)
    return None


_stderr: dict[str, int] = {}  # on a worker: a copy of the stderr it started with (fd 2 is captured in tests)


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        _stderr["fd"] = os.dup(2)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    """On a worker, pytest-timeout's thread method, with its report written where it can be read."""
    if "fd" not in _stderr or settings.method != "thread" or not settings.timeout:
        return None  # serial, or not the thread method: pytest-timeout's own timer
    timer = threading.Timer(settings.timeout, _hung, (item, settings.timeout))
    timer.name = f"pytest-timeout {item.nodeid}"
    timer.daemon = True
    timer.start()

    def cancel():  # called by pytest-timeout's own pytest_timeout_cancel_timer
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel
    return True


def _hung(item, timeout: float) -> None:
    """What pytest-timeout's thread method reports (the test's output so far, every thread's stack), then
    the same end: the worker exits, xdist reports the test as crashed and starts another worker."""
    fd = _stderr["fd"]
    os.write(fd, f"\n+++ Timeout: {item.nodeid} ran past {timeout:g} s +++\n".encode())
    capman = item.config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.suspend_global_capture(item)
        for name, text in zip(("stdout", "stderr"), capman.read_global_capture(), strict=True):
            if text:
                os.write(fd, f"~~~ Captured {name} ~~~\n{text}\n".encode(errors="replace"))
    faulthandler.dump_traceback(file=fd, all_threads=True)
    os._exit(1)
