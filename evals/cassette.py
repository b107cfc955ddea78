"""Cassettes: what the model answered, recorded against the request memdir sent, replayed in CI.

One JSON file per (request, response) pair, keyed by a hash of the normalised request. Normalising
drops only what differs between two runs of the same session: the `metadata` field (user ids), the
run's temporary memory folder, which the system prompt and tool results name and the model's file paths
repeat, and the times of files written during the run (the existing-memories list shows each file's
mtime). The harness registers the folder per session (`volatile`); it becomes `<memory-dir>` in the
cassette and is put back, as this run's folder, in a replayed answer. Everything else counts: a changed
prompt template, excerpt or tool schema changes the key, and the miss report diffs what the model would
now be sent against the nearest recorded request.
"""

from __future__ import annotations

import calendar
import difflib
import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from memdir.errors import MemdirError
from memdir.evals.request_text import render_request
from memdir.record import Record

MEMORY_DIR = "<memory-dir>"
RUN_TIME = "<during-run>"
# Also with milliseconds: the `modified:` stamp a memory written during the run shows when the model Reads it.
STAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z\b")
MANIFEST = "sessions.json"
VOLATILE_FIELDS = ("metadata",)


class CassetteError(MemdirError):
    """A cassette file that cannot be used; the message is one line naming the file and the fix."""


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _substitute(value: object, pairs: Iterable[tuple[str, str]]) -> dict:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for old, new in pairs:
        if old:
            text = text.replace(_escaped(old), _escaped(new))
    return json.loads(text)


def _run_stamps(text: str, since: float) -> str:
    """Manifest stamps (`2026-11-23T15:21:05Z`, a file's mtime) of files written during this run, which differ
    between runs; a stamp from before the run (a copied real folder keeps its files' times) is kept."""

    def swap(match: re.Match) -> str:
        seconds = calendar.timegm(time.strptime(match.group(0)[:19], "%Y-%m-%dT%H:%M:%S"))
        return RUN_TIME if seconds >= since else match.group(0)

    return STAMP.sub(swap, text)


def normalise(body: Mapping, volatile: Mapping[str, str], since: float | None = None) -> dict:
    """`body` without its volatile parts: `volatile` maps this run's text to its placeholder; stamps at or after
    `since` (the run's start) become `<during-run>`."""
    kept = {key: value for key, value in body.items() if key not in VOLATILE_FIELDS}
    longest_first = sorted(volatile.items(), key=lambda pair: -len(pair[0]))
    normalised = _substitute(kept, longest_first)
    if since is None:
        return normalised
    return json.loads(_run_stamps(json.dumps(normalised, ensure_ascii=False), since))


def restore(body: Mapping, volatile: Mapping[str, str]) -> dict:
    """A recorded answer with its placeholders replaced by this run's text (the first text per placeholder)."""
    back: dict[str, str] = {}
    for real, placeholder in volatile.items():
        back.setdefault(placeholder, real)
    return _substitute(dict(body), [(placeholder, real) for placeholder, real in back.items()])


def request_key(normalised: Mapping) -> str:
    canonical = json.dumps(normalised, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class Entry(Record):
    key: str
    session: str
    request: dict
    response: dict
    path: Path


def _slug(session: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", session).strip("_")[:60] or "session"


class Cassette:
    """A folder of recorded pairs (`<session>.<key>.json`) and `sessions.json`, the sessions it covers
    (a session that sent no request is covered too: replaying it checks that it still sends none).
    Other files in it (a README) are ignored."""

    def __init__(self, folder: Path, *, create: bool = False) -> None:
        self.folder = folder
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        elif not folder.is_dir():
            raise CassetteError(f"{folder}: no such cassette folder; record one with `memdir eval run ... --record {folder}`")
        self.entries: dict[str, Entry] = {}
        for path in sorted(folder.glob("*.json")):
            if path.name != MANIFEST:
                entry = self._load(path)
                self.entries[entry.key] = entry
        self.sessions = self._load_sessions(folder / MANIFEST)
        self.written: set[str] = set()

    @staticmethod
    def _load_sessions(path: Path) -> list[str]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise CassetteError(f"{path}: not a readable JSON file ({exc}); re-record the cassette") from None
        sessions = data.get("sessions") if isinstance(data, dict) else None
        if not isinstance(sessions, list) or not all(isinstance(s, str) for s in sessions):
            raise CassetteError(f'{path}: must be {{"sessions": ["sessions2/...", ...]}}; re-record the cassette')
        return sessions

    @staticmethod
    def _load(path: Path) -> Entry:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CassetteError(f"{path}: not a readable JSON file ({exc}); re-record it or delete it") from None
        if not isinstance(data, dict) or not all(isinstance(data.get(k), dict) for k in ("request", "response")):
            raise CassetteError(f"{path}: a cassette entry needs the objects `request` and `response`; re-record it")
        return Entry(key=request_key(data["request"]), session=str(data.get("session", "")), request=data["request"],
                     response=data["response"], path=path)

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)

    def put(self, key: str, session: str, request: dict, response: dict) -> None:
        path = self.folder / f"{_slug(session)}.{key}.json"
        text = json.dumps({"session": session, "request": request, "response": response}, indent=1,
                          ensure_ascii=False, sort_keys=True)
        old = self.entries.get(key)
        if old is not None and old.path != path:
            old.path.unlink(missing_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        self.entries[key] = Entry(key=key, session=session, request=request, response=response, path=path)
        self.written.add(key)

    def finish(self, sessions: set[str]) -> list[Path]:
        """After a run that recorded `sessions`: list them as covered, and remove their entries that this run
        did not write (requests memdir no longer sends). Returns the removed files."""
        stale = [e for e in self.entries.values() if e.session in sessions and e.key not in self.written]
        for entry in stale:
            entry.path.unlink(missing_ok=True)
            del self.entries[entry.key]
        self.sessions = sorted(set(self.sessions) | sessions)
        (self.folder / MANIFEST).write_text(json.dumps({"sessions": self.sessions}, indent=1) + "\n", encoding="utf-8")
        return [e.path for e in stale]

    def nearest(self, request: dict, session: str) -> Entry | None:
        """The recorded request most like `request`, one of the same session first."""
        mine = render_request(request).splitlines()

        def score(entry: Entry) -> tuple[bool, float]:
            theirs = render_request(entry.request).splitlines()
            return entry.session == session, difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio()

        return max(self.entries.values(), key=score, default=None)


def miss_diff(request: dict, nearest: Entry | None) -> str:
    """A unified diff of what the model would be sent now against the nearest recorded request."""
    now = render_request(request).splitlines(keepends=True)
    if nearest is None:
        return "".join(difflib.unified_diff([], now, "(the cassette is empty)", "this run"))
    before = render_request(nearest.request).splitlines(keepends=True)
    label = f"recorded {nearest.path.name} (session {nearest.session})"
    return "".join(difflib.unified_diff(before, now, label, "this run", n=3))
