"""The token store's filler against what a fill cannot change (recall.token_store): memories it cannot hold, a
folder past its limits, and a folder that only shrinks. Each once made prompt hooks start a filler a minute
forever, or left entries on disk forever."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memdir import constants as C, header_cache
from memdir.stages.recall import token_store
from tests.hook_runs import prompt_hook

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_spawn") or not hasattr(os, "pread"),
                                reason="the store and its filler exist where os.pread and posix_spawn do")


def _folder(root: Path, n: int, kind=lambda i: "project") -> Path:
    """`n` memories about deploys, the newest last (one second apart, all long enough ago to be kept)."""
    folder = root / "memory"
    folder.mkdir(exist_ok=True)
    then = time.time() - 3600
    for i in range(n):
        path = folder / f"m{i:03d}.md"
        path.write_text(f"---\nname: note {i}\ndescription: about deploys {i}\ntype: {kind(i)}\n---\n"
                        f"deploys go out on day {i}\n", encoding="utf-8")
        os.utime(path, (then + i, then + i))
    return folder


def _hooks_with_fillers_run_here(folder: Path, tmp_path: Path, monkeypatch, prompts: int,
                                 a_minute_apart: bool = True) -> list[int]:
    """`prompts` prompt hooks a minute and more apart (else at once), each filler they start run to its end here;
    the fillers started. Each hook ranks without the last pool's rank index (as when a new prompt's older matches
    differ), so each reads the token store."""
    monkeypatch.setenv("MEMDIR_PATH", str(folder))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    fillers: list[int] = []

    def spawn(path, argv, env, **kwargs):
        if any("token_store import main" in str(arg) for arg in argv):
            fillers.append(1)
            token_store.fill(folder)
        return 1  # not a child of this process: reaping it finds none

    monkeypatch.setattr(os, "posix_spawn", spawn)
    hook = prompt_hook(tmp_path, "how do deploys go out")
    lock = folder / token_store.LOCK_FILE
    index = folder / C.STATE_DIRNAME / "cache" / C.RANK_INDEX_NAME
    first = hook()
    for _ in range(prompts - 1):
        if lock.exists() and a_minute_apart:  # the retry interval passed
            past = time.time() - C.TOKEN_STORE_RETRY_S - 1
            os.utime(lock, (past, past))
        index.unlink(missing_ok=True)
        assert hook() == first
    return fillers


@pytest.mark.parametrize("odd", ["tab", "racy"])
def test_memories_a_fill_cannot_help_start_no_filler_after_the_first(tmp_path, monkeypatch, odd):
    """A memory whose type holds a tab cannot be stored (a tab separates an entry's terms), so every prompt
    tokenises it and no fill changes that: with TOKEN_STORE_FILL_MIN of them every prompt hook started a filler
    once a minute, forever, each reading and checking the whole store for nothing. A memory changed within the
    header cache's racy window (always, under clock skew) is stored by its text, as any other."""
    many = C.TOKEN_STORE_FILL_MIN + 2
    kind = (lambda i: '"pro\\tject"' if i < many else "project") if odd == "tab" else (lambda i: "project")
    folder = _folder(tmp_path, 30, kind)
    if odd == "racy":
        monkeypatch.setattr(header_cache, "RACY_NS", 10**18)  # every file "just changed": the header cache keeps none
    assert len(_hooks_with_fillers_run_here(folder, tmp_path, monkeypatch, 4)) == 1


def _stored(folder: Path) -> set[bytes]:
    from binascii import hexlify

    from memdir.stages.recall import token_cache

    table = token_store._open(folder, token_cache.fingerprint())
    assert table is not None, "no store was written"
    os.close(table.fd)
    return {hexlify(table.keys[i: i + token_store.KEY]) for i in range(0, len(table.keys), token_store.KEY)}


def _keys_of(folder: Path, names: list[str]) -> set[bytes]:
    from memdir.scan import scan
    from memdir.stages.recall import manifest, token_cache

    return {token_cache.digest(manifest.fields_of(h)) for h in scan(folder).headers if h.rel_path in names}


@pytest.mark.parametrize("limit", ["entries", "bytes"])
def test_a_folder_past_the_store_limits_gets_its_newest_memories_stored_and_one_log_line(tmp_path, monkeypatch, limit):
    """Past TOKEN_STORE_MAX_ENTRIES memories, or TOKEN_STORE_MAX_BYTES of entries (about 170,000 real-sized
    memories), a fill tokenised the whole folder and then wrote nothing: no store ever, and a filler a minute, each
    tokenising every memory again (past its 900 s bound at that size). It now stores the newest memories that fit,
    says so in one line of the hook log, and the next filler waits TOKEN_STORE_FULL_RETRY_S, not a minute."""
    folder = _folder(tmp_path, 12)
    token_store.fill(folder)
    whole = (folder / token_store.STORE_FILE).stat().st_size
    (folder / token_store.STORE_FILE).unlink()
    if limit == "entries":
        monkeypatch.setattr(C, "TOKEN_STORE_MAX_ENTRIES", 5)
    else:
        monkeypatch.setattr(C, "TOKEN_STORE_MAX_BYTES", whole * 5 // 12 + token_store.TRAILER)
    tried, written = token_store.fill(folder)
    assert written == 5 and tried <= 6  # no more tokenised than the one that did not fit
    assert _stored(folder) == _keys_of(folder, [f"m{i:03d}.md" for i in range(7, 12)])  # the five newest
    log = (folder / C.STATE_DIRNAME / "hook.log").read_text(encoding="utf-8").splitlines()
    assert len([line for line in log if "token store" in line]) == 1 and "newest 5 of 12" in log[-1]
    assert (folder / token_store.STORE_FILE).stat().st_size <= C.TOKEN_STORE_MAX_BYTES
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: pytest.fail("a filler started for a full store"))
    lock = folder / token_store.LOCK_FILE
    past = time.time() - C.TOKEN_STORE_RETRY_S - 1
    os.utime(lock, (past, past))
    assert not token_store.spawn_fill(folder, 50)  # its oldest memories, tokenised by every prompt that ranks them
    past = time.time() - C.TOKEN_STORE_FULL_RETRY_S - 1
    os.utime(lock, (past, past))
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: 1)
    assert token_store.spawn_fill(folder, 50)  # an hour on: the folder may have changed
    tried, written = token_store.fill(folder)
    assert tried <= 1 and written == 0  # at most the one that did not fit tried again; the store left as it was


@pytest.mark.parametrize("change", ["shrunk", "unchanged"])
def test_a_store_a_day_old_is_brought_up_to_the_folder_once(tmp_path, monkeypatch, change):
    """A fill drops the entries of deleted memories, but a filler started only for a hook that tokenised new
    ones: a folder that only shrinks (or an old one no longer written to) never got one, and the entries of
    memories deleted long ago stayed on disk for good (~6 KB each). A store older than TOKEN_STORE_REFRESH_S now
    gets one filler from the next prompt hook that reads it; one that finds nothing to change marks it checked,
    so a folder that does not change gets a filler a day, not one a minute."""
    folder = _folder(tmp_path, 30)
    token_store.fill(folder)
    gone = [f"m{i:03d}.md" for i in range(0, 30, 3)] if change == "shrunk" else []
    for name in gone:
        (folder / name).unlink()
    store = folder / token_store.STORE_FILE
    past = time.time() - C.TOKEN_STORE_REFRESH_S - 1
    os.utime(store, (past, past))
    assert len(_hooks_with_fillers_run_here(folder, tmp_path, monkeypatch, 3)) == 1
    kept = [f"m{i:03d}.md" for i in range(30) if f"m{i:03d}.md" not in gone]
    assert _stored(folder) == _keys_of(folder, kept)
    assert time.time() - store.stat().st_mtime < C.TOKEN_STORE_REFRESH_S


@pytest.mark.parametrize("skew", [3 * 86400, -3 * 86400])
def test_a_store_on_a_file_system_whose_clock_is_days_off_gets_one_filler_not_one_a_minute(tmp_path, monkeypatch,
                                                                                            skew):
    """Under clock skew (a file server's clock days behind or ahead of this machine's) every store written looks
    days old, or days ahead, at once. A fill that finds nothing to change marks it checked with this machine's time,
    not the file system's (which left it looking as old as before, and started a filler a minute); one stamped days
    ahead is as unchecked as one stamped days ago (else a shrinking folder's dead entries stayed for good there)."""
    folder = _folder(tmp_path, 30)
    token_store.fill(folder)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)  # this machine's clock, three days off the file system's
    utime = os.utime
    monkeypatch.setattr(os, "utime", lambda path, times=None, **k: utime(path, times or (real(), real()), **k))
    assert len(_hooks_with_fillers_run_here(folder, tmp_path, monkeypatch, 3)) == 1


@pytest.mark.parametrize("skew", [0, 3 * 86400])
def test_a_full_store_gets_one_filler_an_hour_even_under_clock_skew(tmp_path, monkeypatch, skew):
    """Every prompt over a folder past the store's limits tokenises old memories no fill can store: the next
    filler waits TOKEN_STORE_FULL_RETRY_S. The wait is read off the lock file's mtime with this machine's clock;
    stamped by a file system whose clock runs days behind, it never held, and every prompt started a filler."""
    folder = _folder(tmp_path, 30)
    monkeypatch.setattr(C, "TOKEN_STORE_MAX_ENTRIES", 5)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    utime = os.utime
    monkeypatch.setattr(os, "utime", lambda path, times=None, **k: utime(path, times or (real(), real()), **k))
    assert len(_hooks_with_fillers_run_here(folder, tmp_path, monkeypatch, 3, a_minute_apart=False)) == 1
    assert len(_stored(folder)) == 5


@pytest.mark.parametrize("full", [False, True])
def test_a_lock_stamped_before_the_clock_went_back_holds_off_fillers_for_one_interval_not_days(tmp_path, monkeypatch,
                                                                                                full):
    """The wait for the next filler is read off the lock file's mtime. Stamped while this machine's clock ran days
    ahead (corrected since: NTP on a VM resumed, a dead CMOS battery), the mtime is days in the future and the
    wait never ended before the clock caught up: no filler for days, every prompt tokenising the new memories. An
    mtime further ahead than the interval is as stale as one further behind (Table.stale reads the store so)."""
    folder = _folder(tmp_path, 12)
    token_store.fill(folder)
    lock = folder / token_store.LOCK_FILE
    lock.write_bytes(token_store.FULL if full else b"\n")
    ahead = time.time() + 3 * 86400
    os.utime(lock, (ahead, ahead))
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: 1)
    assert token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)
    assert not token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)  # stamped now: the interval holds again
