"""The token store's filler as an attacker or an unlucky user meets it (recall.token_store): the processes it
leaves behind, its time bound, and what it leaves on disk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.stages.recall import token_store
from tests.test_token_store import _small, _wait_for_filler

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_spawn") or not os.path.isdir("/proc/self"),
                                reason="fillers are spawned where posix_spawn is; their states read from /proc")


def _state(pid: int) -> str:
    """A process's state letter ("Z": a zombie, ended but not reaped), "" when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return ""


def _until_ended(pid: int, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while _state(pid) not in ("Z", ""):
        assert time.monotonic() < deadline, "the filler did not end"
        time.sleep(0.05)


def test_hostile_a_long_lived_process_is_left_no_zombie_fillers(tmp_path, monkeypatch):
    """The MCP server and the Python API recall through the token cache (recall.rank_index's tokenised(fill=True))
    for hours: every filler they start is their child, and one never reaped stays a zombie until they exit."""
    folder, _, _ = _small(tmp_path)
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    spawned: list[int] = []
    spawn = os.posix_spawn
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: spawned.append(spawn(*a, **k)) or spawned[-1])
    lock = folder / token_store.LOCK_FILE
    try:
        for _ in range(3):  # one a minute at most, for as long as the process lives
            past = time.time() - C.TOKEN_STORE_RETRY_S - 1
            if lock.exists():
                os.utime(lock, (past, past))
            assert token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)
            _wait_for_filler(folder)
            _until_ended(spawned[-1])
        token_store.spawn_fill(folder, 0)  # the next recall, which starts none
        assert [pid for pid in spawned if _state(pid) == "Z"] == []
    finally:
        for pid in spawned:  # this test leaves no zombie either way
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _cache_files(folder: Path) -> set[str]:
    return {p.name for p in (folder / C.STATE_DIRNAME / "cache").iterdir()}
