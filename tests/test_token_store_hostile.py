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


# A filler whose write takes past its bound (os.replace held up: the write's last step), under the SIGALRM
# disposition the process it came from passed on.
BOUNDED = """
import os, signal, sys, time
if sys.argv[2] == "ignored":
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
elif sys.argv[2] == "blocked":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
from memdir import constants as C, safefs_write
C.TOKEN_STORE_FILL_MAX_S = 1
from memdir.stages.recall import token_store
replace = os.replace
def held_up(*args, **kwargs):
    time.sleep(30)
    return replace(*args, **kwargs)
os.replace = held_up
token_store.fill = lambda d: safefs_write.write_bytes(d, token_store.STORE_FILE, b"x" * 4096, durable=False)
token_store.main([sys.argv[1], "99"])
"""


@pytest.mark.parametrize("inherited", ["default", "ignored", "blocked"])
def test_hostile_a_filler_ends_at_its_bound_and_leaves_no_temp_file(tmp_path, inherited):
    """posix_spawn passes on the signal mask and an ignored SIGALRM: the bound must hold under either. And the
    bound reached mid-write must not leave the store's temp file (up to 1 GB) where `doctor` never looks."""
    import subprocess
    import sys

    from tests.conftest import REPO

    folder, _, _ = _small(tmp_path)
    before = _cache_files(folder)
    child = subprocess.Popen([sys.executable, "-c", BOUNDED, str(folder), inherited], cwd=REPO)
    try:
        child.wait(timeout=20)  # 30 s held up: the bound (1 s) ended it
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert _cache_files(folder) == before


def test_hostile_a_filler_removes_temp_files_no_writer_finished(tmp_path):
    """A filler or hook killed while writing (the OOM killer, a hook's timeout, a reboot) leaves a temp file in the
    cache folder; the next filler removes it once no running writer can own it, and leaves a recent one alone."""
    folder, _, _ = _small(tmp_path)
    cache = folder / C.STATE_DIRNAME / "cache"
    old, recent = cache / f".{C.TOKEN_STORE_NAME}{C.TEMP_MARKER}12345-0a0b0c0d", cache / f".headers{C.TEMP_MARKER}7-1"
    for temp in (old, recent):
        temp.write_bytes(b"x" * 4096)
    past = time.time() - C.TOKEN_STORE_FILL_MAX_S - 60
    os.utime(old, (past, past))
    assert token_store.main([str(folder)]) == 0
    assert not old.exists() and recent.exists()


@pytest.mark.parametrize("skew", [-C.TOKEN_STORE_FILL_MAX_S - 300, C.TOKEN_STORE_FILL_MAX_S + 300, 0])
def test_hostile_the_sweep_reads_ages_on_the_file_system_s_clock(tmp_path, monkeypatch, skew):
    """A network file system stamps files with its server's clock. One 20 minutes behind this machine's made a temp
    file another writer had just created look older than any writer runs: the sweep removed it under that writer
    (whose rename then failed, and its work with it). One 20 minutes ahead kept a dead writer's for 20 minutes more.
    Here this machine's clock is off by `skew` seconds instead: ages read on it are off the same way."""
    from memdir.stages.recall import token_fill

    cache = tmp_path / "memory" / C.STATE_DIRNAME / "cache"
    cache.mkdir(parents=True)
    dead, live = cache / f".{C.TOKEN_STORE_NAME}{C.TEMP_MARKER}12345-0a0b0c0d", cache / f".headers{C.TEMP_MARKER}7-1"
    for temp in (dead, live):
        temp.write_bytes(b"x" * 4096)  # stamped by the file system's clock: now
    past = os.stat(live).st_mtime - C.TOKEN_STORE_FILL_MAX_S - 60  # on the same clock: no writer is that old
    os.utime(dead, (past, past))
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    token_fill._sweep(tmp_path / "memory")
    assert (dead.exists(), live.exists()) == (False, True)


def test_hostile_the_filler_run_in_a_process_that_goes_on_leaves_no_alarm_behind(tmp_path):
    """main() by hand or from a test runs in a process that lives on: its 900 s bound, left armed, ended that
    process (a pytest worker: "Alarm clock") 15 minutes later, whatever it was doing by then."""
    import signal

    folder, _, _ = _small(tmp_path)
    handler = signal.getsignal(signal.SIGALRM)
    assert token_store.main([str(folder)]) == 0
    assert signal.alarm(0) == 0  # nothing was pending
    assert signal.getsignal(signal.SIGALRM) == handler


def test_hostile_a_memory_copied_into_another_file_is_served_from_the_store_alone(tmp_path, monkeypatch):
    """Two files of the same text (a memory copied into another folder) are one key: the store holds it, so the
    token cache is not read for them, as for any pool the store holds whole."""
    from memdir.stages.recall import token_cache
    from memdir.stages.recall.lexical import document_tokens
    from tests.test_token_store import _as_tuple

    folder, fields, _ = _small(tmp_path)
    monkeypatch.setattr(token_cache, "_load", lambda *a: pytest.fail("the token cache was read"))
    pool = [*fields, fields[0]]
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, pool)] == [_as_tuple(document_tokens(*f)) for f in pool]


def test_hostile_a_process_without_stdio_still_hands_the_lock_down(tmp_path, monkeypatch):
    """With descriptors 0-2 closed (a daemon using the Python API) the lock file opens as one of them, which the
    spawn's file actions replace with /dev/null: the filler ran without the lock, so the next
    hook could start a second one (and a test or benchmark waiting on the lock did not wait)."""
    folder, _, _ = _small(tmp_path)
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    handed: list[tuple[int, tuple[int, int], set[int]]] = []

    def spawn(path, argv, env, file_actions=(), **kwargs):
        fd = int(argv[-1])
        st = os.fstat(fd)
        handed.append((fd, (st.st_dev, st.st_ino), {action[1] for action in file_actions}))
        return 1

    monkeypatch.setattr(os, "posix_spawn", spawn)
    saved = [os.dup(std) for std in (0, 1, 2)]
    try:
        for std in (0, 1, 2):  # a daemon's: no stdin, stdout or stderr
            os.close(std)
        spawned = token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)
    finally:
        for std, fd in enumerate(saved):
            os.dup2(fd, std)
            os.close(fd)
    assert spawned
    [(fd, inode, replaced)] = handed
    st = os.stat(folder / token_store.LOCK_FILE)
    assert inode == (st.st_dev, st.st_ino) and fd not in replaced
