"""Readers beyond the frontmatter stay bounded (issue 22: "every reader in every process has a time and
memory bound"): a FIFO where a repository's decision journal or MEMORY.md should be, and a hook payload
that never ends, give a clean answer instead of a hang or an unbounded read."""

from __future__ import annotations

import io
import os
import signal
from contextlib import contextmanager

import pytest

from memdir import constants as C
from memdir.decision_context import tail_records
from memdir.entry import hooks
from memdir.tier_status import memory_health


class Blocked(BaseException):
    """Not an OSError: a reader's `except OSError` must not swallow the watchdog."""


@contextmanager
def watchdog(seconds: int = 5):
    def _expired(signum, frame):
        raise Blocked("the reader waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class EndlessStdin(io.StringIO):
    """A payload that never ends: only a bounded read returns."""

    def __init__(self) -> None:
        super().__init__()
        self.consumed = 0

    def read(self, size: int | None = -1) -> str:
        if size is None or size < 0:
            raise AssertionError("unbounded read of the hook's stdin")
        self.consumed += size
        return "x" * size


def test_a_fifo_as_a_repositorys_decision_journal_is_not_waited_on(tmp_path):
    journal = tmp_path / "decisions.jsonl"
    os.mkfifo(journal)
    with watchdog():
        assert tail_records(str(journal), 5) == ([], False)


def test_a_fifo_as_memory_md_is_reported_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / C.INDEX_NAME)
    with watchdog():
        health = memory_health(tmp_path)
    assert health.state == "degraded" and "MEMORY.md" in health.reason


def test_a_hook_payload_that_never_ends_is_read_to_the_cap_then_dropped(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path))
    stdin, stdout = EndlessStdin(), io.StringIO()
    assert hooks.main(["prompt"], stdin=stdin, stdout=stdout) == 0
    assert stdout.getvalue() == "" and stdin.consumed == C.HOOK_PAYLOAD_MAX_BYTES + 1


def test_a_fifo_as_a_file_read_whole_is_refused_in_one_line(tmp_path):
    from memdir.errors import MemdirError
    from memdir.fsio import read_text

    os.mkfifo(tmp_path / "pristine.md")
    with watchdog(), pytest.raises(MemdirError, match="regular files"):
        read_text(tmp_path / "pristine.md")
