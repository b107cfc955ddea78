"""What the forward read (memdir/transcript_stream.py) must know of the whole file before it gives out a message:
each line's link (uuid, parent, whether it is a prompt), for the rewound branches, and each tool call's name.

They are kept in a private SQLite database that spills to a temporary file and is gone when closed (stdlib), not in
Python objects: a link per line held in memory took 586 MB for 3 million tiny lines. What is rewound is exactly what
`memdir.transcript.rewound` finds in memory for the backward read; only uuids, parents and tool names are written, a
uuid in Claude Code's form as its 16 bytes (`_link_key`): with its text, 1.5 million tiny lines (207 MB) took 305 MB
of the temporary folder at the read's peak, now 156 MB (3 million lines, 415 MB: 614 MB, now 319 MB; the slow test in
tests/test_transcript_links_tempfile.py holds it under the transcript's size).
"""

from __future__ import annotations

import errno
import re
import sqlite3
from collections.abc import Iterator, Mapping

BATCH_ROWS = 10_000  # rows written at once: Python holds no more than this many links at a time
CACHE_KIB = 4096  # the database's page cache; beyond it, pages go to its temporary file

# Exactly `rewound`'s rule: when several prompts share one parent (no parent counts as one), all but the last line
# were rewound, and so is everything under them (UNION takes each uuid once, so a cycle in parentUuid ends).
_ROOTS = """INSERT OR IGNORE INTO dead SELECT uuid FROM (
    SELECT uuid, idx, max(idx) OVER (PARTITION BY parent) AS last FROM prompts) WHERE idx < last"""
_DESCENDANTS = """WITH RECURSIVE under(uuid) AS (
    SELECT uuid FROM dead UNION SELECT links.uuid FROM links JOIN under ON links.parent = under.uuid)
    INSERT OR IGNORE INTO dead SELECT uuid FROM under"""


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # as Claude Code writes them

StoreError = sqlite3.Error  # what the database raises when its temporary file cannot be written


def store_failure(exc: sqlite3.Error) -> OSError:
    """The database's failure as the disk error it is (its temporary file could not be written: the temporary folder
    full, a file size limit), for `memdir.errors.os_error_line` to tell in one line with the fix."""
    import tempfile

    full = "full" in str(exc)
    return OSError(errno.ENOSPC if full else errno.EIO,
                   f"reading the transcript needs a temporary file that could not be written ({exc}); free space in "
                   "the temporary folder or set TMPDIR (SQLITE_TMPDIR) to a folder with room", tempfile.gettempdir())


class Links:
    """Links and tool calls added one line at a time (`add`), then `settle()`; then `is_dead` and `calls`."""

    def __init__(self) -> None:
        # "": a private database on a temporary file, deleted when closed. Used by one reader at a time (a generator),
        # which may be resumed on another thread than the one that made it.
        self._db = sqlite3.connect("", check_same_thread=False)
        self._db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self._db.executescript("""
            CREATE TABLE links (uuid BLOB, parent BLOB);
            CREATE TABLE prompts (idx INTEGER, uuid BLOB, parent BLOB);
            CREATE TABLE calls (id BLOB PRIMARY KEY, name BLOB) WITHOUT ROWID;
            CREATE TABLE dead (uuid BLOB PRIMARY KEY) WITHOUT ROWID;""")
        self._links: list[tuple[bytes, bytes]] = []
        self._prompts: list[tuple[int, bytes, bytes | None]] = []
        self._calls: list[tuple[bytes, bytes]] = []
        self._lines = 0
        self._any_dead = False

    def add(self, link: tuple[str, str | None, bool], calls: Mapping[str, str]) -> None:
        """One line's link (as `memdir.transcript.link` gives it) and the tool calls it makes (id -> name)."""
        uuid, parent, prompt = _link_key(link[0]), link[1], link[2]
        if parent is not None:
            self._links.append((uuid, _link_key(parent)))
        if prompt:
            self._prompts.append((self._lines, uuid, None if parent is None else _link_key(parent)))
        self._calls.extend((_key(call), _key(name)) for call, name in calls.items())
        self._lines += 1
        if len(self._links) + len(self._prompts) + len(self._calls) >= BATCH_ROWS:
            self._write()

    def _write(self) -> None:
        self._db.executemany("INSERT INTO links VALUES (?, ?)", self._links)
        self._db.executemany("INSERT INTO prompts VALUES (?, ?, ?)", self._prompts)
        self._db.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?)", self._calls)  # the first name of an id kept
        self._links, self._prompts, self._calls = [], [], []

    def settle(self) -> None:
        """Find the rewound lines, once every line is added."""
        self._write()
        self._db.execute(_ROOTS)
        if self._db.execute("SELECT 1 FROM dead LIMIT 1").fetchone():
            self._db.execute("CREATE INDEX links_parent ON links (parent)")
            self._db.execute(_DESCENDANTS)
            self._any_dead = True

    def is_dead(self, uuid: str) -> bool:
        """Whether the line with this uuid is on a rewound branch."""
        return self._any_dead and self._db.execute("SELECT 1 FROM dead WHERE uuid = ?", (_link_key(uuid),)).fetchone() is not None

    def calls(self) -> Mapping[str, str]:
        """Every tool call's name by its id, read from the database when asked."""
        return _Calls(self._db)

    def close(self) -> None:
        self._db.close()


class _Calls(Mapping[str, str]):
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __getitem__(self, key: str) -> str:
        row = self._db.execute("SELECT name FROM calls WHERE id = ?", (_key(key),)).fetchone() if isinstance(key, str) else None
        if row is None:
            raise KeyError(key)
        return _text(row[0])

    def __iter__(self) -> Iterator[str]:
        return (_text(row[0]) for row in self._db.execute("SELECT id FROM calls"))

    def __len__(self) -> int:
        return self._db.execute("SELECT count(*) FROM calls").fetchone()[0]


def _link_key(text: str) -> bytes:
    """A uuid or parent as stored: a uuid in Claude Code's form (lowercase, hyphenated) as its 16 bytes, any other text
    as 0xff and its bytes (`_key`), with one more 0xff when that would make 16: no two texts are stored alike, as
    UTF-8 never holds 0xff. Other spellings of one uuid (capitals) stay as many keys as the backward read sees."""
    if len(text) == 36 and _UUID.fullmatch(text):
        return bytes.fromhex(text.replace("-", ""))
    raw = _key(text)
    return b"\xff" + raw + (b"\xff" if len(raw) == 15 else b"")


def _key(text: str) -> bytes:
    """Text as stored: bytes, so that a lone surrogate or a NUL a transcript holds is kept as it is."""
    return text.encode("utf-8", "surrogatepass")


def _text(stored: bytes) -> str:
    return stored.decode("utf-8", "surrogatepass")
