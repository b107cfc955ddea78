"""The token store's fill (recall.token_store): the memories it is to hold, their entries kept or made, the file
written; and the filler process's time bound and its sweep of temp files no writer finished. Run in the detached
filler that a prompt hook starts (token_store.spawn_fill), or by hand: never on a prompt's path.
"""

from __future__ import annotations

import os
import time
from array import array
from binascii import hexlify, unhexlify

from memdir import constants as C, safefs, safefs_write
from memdir.stages.recall import token_cache
from memdir.stages.recall.lexical import document_tokens
from memdir.stages.recall.token_store import (
    FULL,
    KEY,
    LOCK_FILE,
    OFFSET,
    STORE_FILE,
    TRAILER,
    Table,
    _finish,
    _open,
    encode,
    parse,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def fill(memory_dir: Path) -> tuple[int, int]:
    """Bring the store up to the folder: every memory worth offering (recall.manifest.offered), scanned as the
    prompt hook scans it (memdir.header_cache), its entry kept (once checked as a hook checks it: a broken or
    planted one is made again) or made. (memories tokenised, entries written): nothing is written when the store
    already holds every memory and nothing else. Entries are copied from the old store one by one, in key order,
    into the one buffer written: it holds the new file once (~120 MB at 20,000 real-sized memories), no more.
    A folder past the store's limits gets its newest memories that fit (`_chosen`), and one line in the hook log."""
    tag = token_cache.fingerprint()
    if not tag or not hasattr(os, "pread"):
        return 0, 0
    wanted = _wanted(memory_dir)
    old = _open(memory_dir, tag)
    out, offsets, keys = bytearray(), array("Q", [0]), []
    try:
        chosen, made, tried, full = _chosen(old, wanted)
        remade = len(made)
        room = C.TOKEN_STORE_MAX_BYTES - TRAILER - OFFSET - len(chosen) * (KEY + OFFSET)
        for raw in sorted(chosen):
            entry = made.pop(raw, None)  # let go as it is copied: the buffer holds it now
            if entry is None and old is not None:
                entry = old.entry(old.find(raw))
                if entry is None or parse(entry, raw) is None:
                    tried += 1
                    entry = encode(raw, document_tokens(*wanted[raw]))
                    remade += entry is not None
            if entry is not None and len(out) + len(entry) <= room:  # a remade entry larger than its old one
                out += entry
                offsets.append(len(out))
                keys.append(raw)
        unchanged = remade == 0 and (old.n if old is not None else 0) == len(keys)
        if unchanged and old is not None and old.stale:
            now = time.time()  # this machine's clock, which Table.stale reads it with, not the file system's
            os.utime(old.fd, (now, now))  # checked now: not stale for another TOKEN_STORE_REFRESH_S
    except OSError:
        return 0, 0  # the old store could not be read through: the next filler makes it again
    finally:
        if old is not None:
            os.close(old.fd)
    if unchanged:
        written = 0  # nothing new, nothing gone
    else:
        data = _finish(out, keys, offsets, tag)
        if len(keys) > C.TOKEN_STORE_MAX_ENTRIES or len(data) > C.TOKEN_STORE_MAX_BYTES:
            return tried, 0  # never: _chosen kept within both
        safefs_write.write_bytes(memory_dir, STORE_FILE, data, durable=False)
        written = len(keys)
    if full:
        _say_past_limits(memory_dir, len(wanted), len(keys))
    _mark(memory_dir, full)
    stored = set(keys)
    token_cache.prune(memory_dir, {hexlify(k) for k in wanted if k not in stored})  # what only it holds, if any
    return tried, written


def _wanted(memory_dir: Path) -> dict[bytes, token_cache.Fields]:
    """Every memory worth offering (recall.manifest.offered), newest first, by the key of its words' fields: scanned
    as the prompt hook scans it (memdir.header_cache); of two with the same fields, the newer."""
    from memdir.header_cache import HeaderCache
    from memdir.stages.recall.manifest import fields_of, offered

    wanted: dict[bytes, token_cache.Fields] = {}
    for header in offered(HeaderCache(memory_dir).scan().headers):  # newest first
        fields = fields_of(header)
        wanted.setdefault(unhexlify(token_cache.digest(fields)), fields)
    return wanted


def _say_past_limits(memory_dir: Path, wanted: int, kept: int) -> None:
    """One line in the hook log: the folder has more memories than the store holds, and which it holds."""
    from memdir.hooklog import log

    log(memory_dir, "token store", f"the folder has {wanted:,} memories to rank, past the store's limits "
        f"({C.TOKEN_STORE_MAX_ENTRIES:,} entries, {C.TOKEN_STORE_MAX_BYTES:,} bytes): it holds the newest "
        f"{kept:,} of {wanted:,}, and prompts tokenise the older ones they rank")


def _chosen(old: Table | None, wanted: dict[bytes, token_cache.Fields]) -> tuple[list[bytes], dict[bytes, bytes],
                                                                                  int, bool]:
    """The memories the store is to hold: `wanted`'s, newest first, until one passes TOKEN_STORE_MAX_ENTRIES or
    TOKEN_STORE_MAX_BYTES; with the entries made here for those the old store lacks, how many were tokenised, and
    whether the folder is past the limits. Above ~170,000 real-sized memories a fill made every entry and then
    wrote nothing, as the store was past its limits: no store ever, and the whole folder tokenised again by a
    filler a minute. The size of an entry kept is its old table's (checked when it is copied)."""
    room = C.TOKEN_STORE_MAX_BYTES - TRAILER - OFFSET
    chosen: list[bytes] = []
    made: dict[bytes, bytes] = {}
    tried = 0
    for raw, fields in wanted.items():
        if len(chosen) >= C.TOKEN_STORE_MAX_ENTRIES:
            return chosen, made, tried, True
        i = old.find(raw) if old is not None else -1
        size = old.offsets[i + 1] - old.offsets[i] if old is not None and i >= 0 else 0
        if not 0 < size <= C.TOKEN_STORE_ENTRY_MAX_BYTES:
            tried += 1
            entry = encode(raw, document_tokens(*fields))
            if entry is None:
                continue
            made[raw], size = entry, len(entry)
        room -= size + KEY + OFFSET
        if room < 0:
            made.pop(raw, None)
            return chosen, made, tried, True
        chosen.append(raw)
    return chosen, made, tried, False


def _mark(memory_dir: str | os.PathLike, full: bool) -> None:
    """Say in the lock file's first byte whether this fill found the folder past the store's limits, which
    `spawn_fill` reads: a full store waits TOKEN_STORE_FULL_RETRY_S for the next filler, not TOKEN_STORE_RETRY_S
    (its oldest memories are tokenised by every prompt that ranks them, and no filler would store them)."""
    try:
        fd = safefs.open_file(memory_dir, LOCK_FILE, os.O_RDWR | (os.O_CREAT if full else 0))
    except (OSError, ValueError):
        return
    try:
        if full or os.pread(fd, 1, 0) == FULL:
            os.pwrite(fd, FULL if full else b"\n", 0)
            now = time.time()  # as spawn_fill stamps it: the clock the wait is read with
            os.utime(fd, (now, now))
    except OSError:
        pass
    finally:
        os.close(fd)


def _bounded():  # -> the SIGALRM handler it replaced (signal's handler type: not imported here)
    """End this filler TOKEN_STORE_FILL_MAX_S from now, whatever it inherited: posix_spawn passes on the signal mask
    and an ignored SIGALRM (a host that blocks it in its threads, or ignores it), under which the bound never came.
    Reached, it unwinds first, so that a write under way removes its temp file (the store's is up to
    TOKEN_STORE_MAX_BYTES, in a folder `doctor` does not look in); one that cannot unwind is ended all the same."""
    import signal

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(C.TOKEN_STORE_STOP_GRACE_S)
        raise SystemExit(1)

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(C.TOKEN_STORE_FILL_MAX_S)
    return previous


def _sweep(memory_dir: Path) -> None:
    """Remove the temp files of cache writes that never finished (a filler or a hook killed while writing): one
    untouched for TOKEN_STORE_FILL_MAX_S belongs to no writer still running, as no writer of the cache runs longer.
    Its age is read on the clock that stamped it, the file system's (memdir.fsio.folder_now): on a network file
    system whose server runs behind this machine, this machine's clock made a temp file just created look old, and
    the sweep removed it under its writer."""
    import stat

    from memdir.fsio import folder_now, is_temp_file

    try:
        with safefs.open_dir(memory_dir, f"{C.STATE_DIRNAME}/cache") as dfd:
            temps = [name for name in os.listdir(dfd) if is_temp_file(name)]
            now = folder_now(dfd) if temps else 0.0  # a write to the folder: only when there is something to age
            for name in temps:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > C.TOKEN_STORE_FILL_MAX_S:
                    os.unlink(name, dir_fd=dfd)
    except (OSError, ValueError):
        pass  # left for the next filler
