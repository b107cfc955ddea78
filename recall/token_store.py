"""Every memory's ranking tokens, made in the background and read at random by the prompt hook (issue 26).

With the recall server down, each new prompt brings other older matches (recall.manifest.older_matches) that
the rank index does not hold. The token cache (recall.token_cache) keeps only the last 600 memories ranked, is
read and parsed whole, and at 5,000 memories had mostly never seen them: tokenising them, loading and saving
that file was a fifth of the hook. This store holds the tokens of every memory of the folder, one entry each,
found through a sorted table of keys: a hook reads the header and the table, then `os.pread`s only the
entries its pool needs. It tokenises itself only what the store lacks (a memory written or edited since the
last fill), through the token cache as before.

Who fills it: the prompt hook that had to tokenise at least TOKEN_STORE_FILL_MIN memories starts a detached
filler (`spawn_fill`: posix_spawn, about a millisecond), which scans the folder as the hook does (header
cache), tokenises every memory the store lacks at background priority, and writes the store anew. Never two
at once: the hook takes the lock file's flock before it spawns and hands the locked descriptor to the filler,
which holds it until it ends; a hook that finds it held, or a fill started less than TOKEN_STORE_RETRY_S ago,
spawns nothing. Chosen over the Stop hook's worker: that one runs an extraction first (a model call, bounded
by its own timeout) and only in sessions with memdir's Stop hook and a transcript; what needs the store is the
prompt hook, which knows when it lacked it, and a folder that gains a memory or two a turn needs a fill only now
and then (those few come from the token cache meanwhile). After a fill the filler prunes the token cache to what
the store could not hold: a hook that meets a memory written since loads a small file, not the 600 memories of
the past prompts. A hook that finds that file past TOKEN_CACHE_KEPT_BESIDE memories starts a filler too. A folder
past the store's limits (about 170,000 real-sized memories) gets its newest memories that fit, one line in the
hook log, and its next filler TOKEN_STORE_FULL_RETRY_S later. The entries of deleted memories go only with a
fill: a store last written or checked TOKEN_STORE_REFRESH_S ago (a day) gets a filler from the next hook that
reads it, so a folder that only shrinks keeps them a day, not for good. The fill itself, and the filler's time
bound and sweep, are recall.token_fill's: never imported on a prompt's path.

Layout: the entries, from the file's start; the keys (16-byte digests of the very text ranked,
recall.token_cache.digest, sorted); their n + 1 offsets (uint64, from 0 to the table's start); a last line of
TRAILER bytes with the format, the tokeniser's fingerprint (recall.token_cache.fingerprint: another stemmer, stop
word or Python, another file) and n. The table last, so the filler writes the entries as it goes, one buffer. An
entry: its key again, five uint32 (stems, words as written, names, related words, 4 for wide counts else 2), its
n-gram count (uint64), the counts of its stems and words (uint16 or uint32), the stem positions of its names and
related words (uint32), and its stems and words, UTF-8, tab-separated, in the order `document_tokens` made them
(the same dicts, so the same floats).

Read as untrusted, as the token cache is: through safefs (never a symlink nor a FIFO), the table bounded by
TOKEN_STORE_MAX_ENTRIES, an entry by TOKEN_STORE_ENTRY_MAX_BYTES, only the entries asked for, each checked
before use (its key, its lengths, counts positive, no term twice, names and related words among its stems).
An entry is used only for the text whose digest it carries, so a planted one can at most reorder memories
the folder holds, never add text to what is injected. Written atomically (temp + rename), not fsynced: a
cache. A broken or missing store costs only the tokenising it was meant to save.
"""

from __future__ import annotations

import os
import sys
import time
from array import array
from binascii import unhexlify

from memdir import constants as C, safefs, safefs_write
from memdir.stages.recall import token_cache
from memdir.stages.recall.lexical import DocTokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

FORMAT = b"memdir-token-store 2"
STORE_FILE = f"{C.STATE_DIRNAME}/cache/{C.TOKEN_STORE_NAME}"
LOCK_FILE = f"{STORE_FILE}.lock"
KEY = 16  # bytes of a digest (token_cache.digest's hex, unhexed)
OFFSET = 8  # bytes of an offset (uint64)
TRAILER = 64  # the last line: the format, the tokeniser's fingerprint and the entry count, padded with spaces
ENTRY_HEAD = KEY + 5 * 4 + 8  # key, five uint32, the n-gram count


class Table:
    """An open store's keys and offsets (read whole: 24 bytes a memory); its entries start the file. `stale`: last
    written or checked by a fill more than TOKEN_STORE_REFRESH_S ago."""

    def __init__(self, fd: int, keys: bytes, offsets: array, stale: bool = False) -> None:
        self.fd, self.keys, self.offsets, self.stale = fd, keys, offsets, stale
        self.n = len(offsets) - 1

    def find(self, key: bytes) -> int:
        """The position of `key` in the sorted keys, -1 when absent (or the keys are not sorted there)."""
        keys, lo, hi = self.keys, 0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            if keys[mid * KEY: mid * KEY + KEY] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < self.n and keys[lo * KEY: lo * KEY + KEY] == key else -1

    def entry(self, i: int) -> bytes | None:
        """Entry `i`'s bytes, None when its offsets are out of order or past the bounds."""
        start, end = self.offsets[i], self.offsets[i + 1]
        if not start < end <= self.offsets[self.n] or end - start > C.TOKEN_STORE_ENTRY_MAX_BYTES:
            return None
        data = os.pread(self.fd, end - start, start)
        return data if len(data) == end - start else None


def _open(memory_dir: str | os.PathLike, tag: str) -> Table | None:
    """The store's table, its descriptor open (the caller closes `table.fd`); None: no store, another
    tokeniser's, or one whose parts do not add up."""
    try:
        fd = safefs.open_file(memory_dir, STORE_FILE)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        words = os.pread(fd, TRAILER, max(size - TRAILER, 0)).split()
        if len(words) != 4 or b" ".join(words[:3]) != FORMAT + b" " + tag.encode():
            raise ValueError("not this tokeniser's store")
        n = int(words[3])
        table_at = size - TRAILER - n * (KEY + OFFSET) - OFFSET
        if not 0 <= n <= C.TOKEN_STORE_MAX_ENTRIES or table_at < 0:
            raise ValueError("more entries than the file holds")
        table = os.pread(fd, size - TRAILER - table_at, table_at)
        offsets = array("Q")
        offsets.frombytes(table[n * KEY:])  # a short read: a length not a multiple of 8, or n + 1 checked below
        if len(offsets) != n + 1 or offsets[0] != 0 or offsets[n] != table_at:
            raise ValueError("its parts do not add up")
    except (OSError, ValueError):
        os.close(fd)
        return None
    # abs: a store stamped days ahead (a file server's clock) is as unchecked as one stamped days ago; a fill marks
    # it checked with this machine's time (recall.token_fill), so either skew costs one filler, not one a minute
    return Table(fd, table[: n * KEY], offsets, abs(time.time() - st.st_mtime) > C.TOKEN_STORE_REFRESH_S)


class Found(dict):
    """What `lookup` found, by key; `stale`: the store is due a fill whatever the prompt tokenised (Table.stale)."""

    stale = False


def lookup(memory_dir: str | os.PathLike, keys: Sequence[bytes]) -> Found:
    """The tokens the store holds for these keys (token_cache.digest's, hex), by key: the others are absent."""
    found = Found()
    tag = token_cache.fingerprint()
    if not tag or not keys or not hasattr(os, "pread"):  # Windows: no pread, no store (nor a filler to make one)
        return found
    table = _open(memory_dir, tag)
    if table is None:
        return found
    found.stale = table.stale
    budget = C.TOKEN_STORE_READ_MAX_BYTES  # a planted store of big entries costs a prompt this much at most
    try:
        for key in keys:
            try:
                raw = unhexlify(key)
            except ValueError:
                continue
            i = table.find(raw)
            data = table.entry(i) if i >= 0 else None
            if data is not None:
                budget -= len(data)
                if budget < 0:
                    break  # the rest is tokenised
            tokens = parse(data, raw) if data is not None else None
            if tokens is not None:
                found[key] = tokens
    except OSError:
        pass  # what was read stands; the rest is tokenised
    finally:
        os.close(table.fd)
    return found


def storable(tokens: DocTokens) -> bool:
    """Whether `encode` can hold these terms: none empty, none holding a tab (an entry's separator; only a type can
    hold one, as document_tokens adds it whole). A memory it cannot hold is tokenised by every prompt and no fill
    changes that, so it never counts towards starting one (`spawn_fill`)."""
    return not ("" in tokens.words or "" in tokens.written or "\t" in "".join(tokens.words)
                or "\t" in "".join(tokens.written))


def encode(raw: bytes, tokens: DocTokens) -> bytes | None:
    """One entry; None when a term cannot be stored (not `storable`) or a count passes 2**32."""
    if not storable(tokens):
        return None
    stems, written = list(tokens.words), list(tokens.written)
    terms = stems + written
    position = {t: i for i, t in enumerate(stems)}
    counts = [*tokens.words.values(), *tokens.written.values()]
    wide = max(counts, default=0) >= 1 << 16
    try:
        head = array("I", [len(stems), len(written), len(tokens.names), len(tokens.related), 4 if wide else 2])
        parts = [raw, head.tobytes(), array("Q", [tokens.gram_length]).tobytes(),
                 array("I" if wide else "H", counts).tobytes(),
                 array("I", [position[t] for t in (*sorted(tokens.names), *sorted(tokens.related))]).tobytes(),
                 "\t".join(terms).encode("utf-8", "surrogatepass")]
    except (OverflowError, KeyError, UnicodeError):
        return None  # KeyError: a name or related word that is not a stem (not document_tokens' own)
    return b"".join(parts)


def parse(data: bytes, raw: bytes) -> DocTokens | None:
    """The entry `data` as DocTokens when it is the entry of `raw` and holds together, else None."""
    if len(data) < ENTRY_HEAD or data[:KEY] != raw:
        return None
    head = array("I", data[KEY: KEY + 20])
    n_stems, n_written, n_names, n_related, width = head
    if width not in (2, 4):
        return None
    counts = array("I" if width == 4 else "H")
    positions = array("I")
    at = ENTRY_HEAD + (n_stems + n_written) * width
    ends = at + (n_names + n_related) * 4
    if ends > len(data):
        return None
    counts.frombytes(data[ENTRY_HEAD:at])
    positions.frombytes(data[at:ends])
    try:
        text = data[ends:].decode("utf-8", "surrogatepass")
    except UnicodeError:
        return None
    terms = text.split("\t") if text else []
    numbers = counts.tolist()  # ints once: `in` and zip on the array make one per item each time
    if len(terms) != n_stems + n_written or not all(numbers) or (positions and max(positions) >= n_stems):
        return None
    words = dict(zip(terms[:n_stems], numbers[:n_stems], strict=True))
    written = dict(zip(terms[n_stems:], numbers[n_stems:], strict=True))
    if len(words) != n_stems or len(written) != n_written:
        return None  # a term twice
    gram_length = array("Q", data[KEY + 20: ENTRY_HEAD])[0]
    return DocTokens(words, written, gram_length, {terms[i] for i in positions[:n_names]},
                     {terms[i] for i in positions[n_names:]})


def _finish(out: bytearray, keys: list[bytes], offsets: array, tag: str) -> bytearray:
    """The entries in `out` (at `offsets`, of `keys`, sorted) followed by the table and the trailer."""
    out += b"".join(keys)
    out += offsets.tobytes()
    out += (FORMAT + f" {tag} {len(keys)}".encode()).ljust(TRAILER - 1) + b"\n"
    return out


def build(tag: str, entries: dict[bytes, bytes]) -> bytearray:
    """The store's bytes for these entries (by raw key)."""
    out, offsets, keys = bytearray(), array("Q", [0]), sorted(entries)
    for key in keys:
        out += entries[key]
        offsets.append(len(out))
    return _finish(out, keys, offsets, tag)


def fill(memory_dir: Path) -> tuple[int, int]:
    """Bring the store up to the folder (recall.token_fill.fill, which says how): (memories tokenised, entries
    written). Here so that the filler's `main`, and a test, reach it as this module's."""
    from memdir.stages.recall import token_fill

    return token_fill.fill(memory_dir)


FULL = b"F"  # the lock file's first byte after a fill that found the folder past the store's limits (token_fill)


_fillers: list[int] = []  # the fillers this process started and has not reaped yet


def _reap() -> None:
    """Reap the fillers this process started that have ended. A prompt hook exits before its filler does (init
    reaps it), but the MCP server and the Python API recall for hours: unreaped, each filler they started stayed
    a zombie until they exited. Called on every spawn_fill, so at most the last one waits for the next recall."""
    for pid in list(_fillers):
        try:
            ended = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            ended = True  # reaped already (SIGCHLD ignored, or a child watcher of the host's)
        if ended and pid in _fillers:
            _fillers.remove(pid)


def spawn_fill(memory_dir: str | os.PathLike, tokenised: int, stale: bool = False) -> bool:
    """Start a detached filler when the hook had to tokenise at least TOKEN_STORE_FILL_MIN memories the store can
    hold (`storable`), or found the store `stale` (Found.stale: a folder that only shrinks asks for no fill, and
    its deleted memories' entries stayed for good), none runs, and none started within TOKEN_STORE_RETRY_S (a
    folder the filler cannot help must not get one per prompt).
    The lock is taken here and its descriptor handed to the filler, which holds it until it ends."""
    if _fillers:
        _reap()
    if ((tokenised < C.TOKEN_STORE_FILL_MIN and not stale) or not hasattr(os, "posix_spawn") or not sys.executable
            or not token_cache.fingerprint()
            or os.environ.get(C.TOKEN_STORE_FILL_ENV, "").strip().lower() in C.SWITCHED_OFF):
        return False
    try:
        fd = safefs.open_file(memory_dir, LOCK_FILE, os.O_RDWR | os.O_CREAT)
    except (OSError, ValueError):
        return False  # no cache folder yet, a read-only folder, something planted at the path
    try:
        st = os.fstat(fd)
        retry = C.TOKEN_STORE_FULL_RETRY_S if st.st_size and os.pread(fd, 1, 0) == FULL else C.TOKEN_STORE_RETRY_S
        # empty: just made, no fill yet. Further ahead than the interval: stamped before this clock went back
        # (days, at times), which held off every filler until it caught up
        if st.st_size and abs(time.time() - st.st_mtime) < retry:
            return False
        import fcntl  # F_DUPFD below; posix_spawn (checked above) is POSIX's anyway

        from memdir import portalock

        try:
            if not portalock.try_lock(fd):
                return False  # a filler holds it
        except OSError:
            return False
        os.pwrite(fd, b"\n", 0)  # the retry interval starts now (the file's mtime), whatever becomes of the filler
        now = time.time()  # stamped with the clock it is read with: a file server's, days off, made it never hold
        os.utime(fd, (now, now))
        # -S -P and this process's own sys.path: the filler imports what this hook imports, from the same places.
        from memdir.prompt_scope import child_env, child_sys_path  # an empty PYTHONPATH entry: the project's modules

        code = (f"import sys; sys.path[:] = {child_sys_path(sys.path, os.environ)!r}; "
                "from memdir.stages.recall.token_store import main; main(sys.argv[1:])")
        devnull = [(os.POSIX_SPAWN_OPEN, i, os.devnull, os.O_RDWR, 0) for i in (0, 1, 2)]
        # An inheritable copy, never 0-2: in a process started with stdin closed the lock opened there, and the
        # file actions put /dev/null in its place, so the filler ran without the lock and a second could start.
        handed = fcntl.fcntl(fd, fcntl.F_DUPFD, 3)
        try:
            _fillers.append(os.posix_spawn(sys.executable, [sys.executable, "-S", *C.PYTHON_UTF8_MODE, "-P", "-c", code,
                                                            os.fspath(memory_dir), str(handed)],
                                           child_env(os.environ), file_actions=devnull, setsid=True))
        finally:
            os.close(handed)
        return True
    except Exception:  # noqa: BLE001 - no filler (no executable, no setsid here...) must never cost the prompt its answer
        return False
    finally:
        os.close(fd)  # the filler's copy keeps the lock


def main(argv: list[str]) -> int:
    """The detached filler: `argv` is the memory folder and the descriptor of the lock it holds (handed down by
    `spawn_fill`); without one (by hand) it takes the lock itself, or leaves when another filler holds it."""
    import signal
    from pathlib import Path

    from memdir.stages.recall.token_fill import _bounded, _sweep

    previous = _bounded()  # a stuck filler ends (and its lock with it); nothing half-written
    try:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, C.DENSE_BACKGROUND_NICE)
        except (OSError, AttributeError):
            pass
        memory_dir = Path(argv[0])
        if len(argv) > 1:  # spawn_fill took the lock and handed its descriptor down
            _sweep(memory_dir)
            fill(memory_dir)
            return 0
        with safefs_write.try_locked(memory_dir, LOCK_FILE) as held:
            if held:
                _sweep(memory_dir)
                fill(memory_dir)
    finally:  # run in a process that goes on (by hand, from a test): no alarm left to end it 15 minutes later
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
