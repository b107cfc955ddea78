"""Every write to the memory folder ends in a commit of its git history (memdir/gitcommit.py, on memdir/gitrepo.py).

- memdir's own writes: the store calls `wrote` once a write has released the folder lock. Outside a
  `batch` that is one commit per write ("deleted deploy.md" / "restored MEMORY.md"); inside one (an
  extraction run, a dream, one CLI command) the writes are one commit at the end, whose message names
  the run and the engine.
- everyone else's (Claude Code's main agent, its extractor, auto dream, a person's editor): `sweep`
  commits whatever changed since the last commit as "another writer", naming the writer when the
  caller knows it (the Stop worker reads the transcript). It runs in the Stop worker and the recall
  server's tick, never in the prompt hook.
- the first commit of a folder imports `.memdir/history/` first, oldest version first, with each
  version's own time, so no kept version is lost.

`MEMDIR_GIT_HISTORY=0` turns all of it off. A missing git or a failing commit never fails the write:
it is logged once per process and the legacy `.memdir/history/` copy still holds the bytes.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import secrets as _random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from memdir import constants as C, gitcommit, gitrepo, history, safefs
from memdir.errors import MemdirError
from memdir.switches import switched_on

ENV = C.GIT_HISTORY_ENV


def enabled() -> bool:
    return switched_on(ENV)


@dataclasses.dataclass
class Batch:
    """Writes to one memory folder that become one commit: `why` is its subject."""

    memory_dir: Path
    why: str
    run: str | None = None
    engine: str | None = None
    verbs: dict[str, str] = dataclasses.field(default_factory=dict)  # path -> created/updated/superseded/...
    kept: dict[str, Path] = dataclasses.field(default_factory=dict)  # path -> the bytes before the batch's first write
    result: gitcommit.CommitResult | None = None


_current: contextvars.ContextVar[Batch | None] = contextvars.ContextVar("memdir_git_batch", default=None)
_warned: set[str] = set()
_kept_outside: dict[tuple[Path, str], Path] = {}  # a write outside a batch: its kept copy, until `wrote`


def new_run_id() -> str:
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{_random.token_hex(3)}"


@contextlib.contextmanager
def batch(memory_dir: Path, why: str, *, run: str | None = None, engine: str | None = None) -> Iterator[Batch]:
    """Writes inside are one commit at the end. A batch inside another for the same folder joins it."""
    outer = _current.get()
    if outer is not None and outer.memory_dir == Path(memory_dir):
        yield outer
        return
    current = Batch(Path(memory_dir), why, run, engine)
    token = _current.set(current)
    try:
        yield current
    finally:
        _current.reset(token)
        if current.verbs:
            current.result = _commit(current.memory_dir, current.why, current.verbs, run=current.run,
                                     engine=current.engine, kept=current.kept)


def wrote(memory_dir: Path, verbs: dict[str, str]) -> gitcommit.CommitResult | None:
    """memdir wrote these paths (relative to the memory folder) and released the lock."""
    if not enabled() or not verbs:
        return None
    current = _current.get()
    if current is not None and current.memory_dir == Path(memory_dir):
        for path, verb in verbs.items():
            current.verbs.setdefault(path, verb)  # the first word says it best: "created", then index updates
        return None
    said = [gitcommit.shown(f"{verb} {path}") for path, verb in verbs.items() if path.rpartition("/")[2] != C.INDEX_NAME]
    subject = ", ".join(said) or "updated the index"
    kept = {path: copy for (folder, path), copy in _kept_outside.items() if folder == Path(memory_dir) and path in verbs}
    for key in [key for key in _kept_outside if key[0] == Path(memory_dir)]:
        del _kept_outside[key]  # a write that failed before `wrote` leaves nothing for a later one
    return _commit(Path(memory_dir), subject, verbs, kept=kept)


def kept(memory_dir: Path, path: str, copy: Path) -> None:
    """memdir is about to replace `path`, whose bytes it kept in `copy`. If another writer made those bytes
    since the last commit, the commit of this write records them first (as theirs): an undo then finds the
    version the write replaced, even when both happened within the same second."""
    if not enabled():
        return
    current = _current.get()
    if current is not None and current.memory_dir == Path(memory_dir):
        current.kept.setdefault(path, copy)  # the batch's first write replaced what was there before it
    else:
        _kept_outside.setdefault((Path(memory_dir), path), copy)


def say(memory_dir: Path, verbs: dict[str, str]) -> None:
    """Inside a batch: the word its commit uses for these paths ("superseded"), before the write that
    would otherwise name them ("deleted"). Outside one: nothing."""
    current = _current.get()
    if current is not None and current.memory_dir == Path(memory_dir):
        for path, verb in verbs.items():
            current.verbs.setdefault(path, verb)


def sweep(memory_dir: Path, writers: dict[str, str] | None = None, *, why: str = "") -> gitcommit.CommitResult | None:
    """Commit every change nobody committed, as "another writer", naming the writer of a path when the
    transcript shows it (`writers`: path -> "Claude Code's main agent"...)."""
    if not enabled() or not Path(memory_dir).is_dir():
        return None
    subject = why or "changes made outside memdir since the last commit"
    return _report(memory_dir, gitcommit.commit(memory_dir, subject, author=gitcommit.ANOTHER_WRITER, by=writers,
                                              first_import=import_legacy))


def _commit(memory_dir: Path, why: str, verbs: dict[str, str], *, run: str | None = None,
            engine: str | None = None, kept: dict[str, Path] | None = None) -> gitcommit.CommitResult:
    lines = [why] + ([""] if run or engine else []) + ([f"run: {run}"] if run else []) + (
        [f"engine: {engine}"] if engine else [])
    result = gitcommit.commit(memory_dir, "\n".join(lines), paths=list(verbs), verbs=verbs, first_import=import_legacy,
                            others=lambda: _replaced_versions(kept or {}))
    return _report(memory_dir, result)


def _replaced_versions(kept: dict[str, Path]) -> list[tuple[int, str, bytes, str]]:
    """The kept copies as versions to commit (gitrepo skips those the history already holds)."""
    items = []
    for path, copy in sorted(kept.items()):
        try:
            data = copy.read_bytes()
        except OSError:
            continue
        stamp = copy.name.split("-", 1)[0]
        items.append((int(_epoch(stamp)), path, data, f"changed outside memdir: {path} (found when memdir wrote it)"))
    return items


def _report(memory_dir: Path, result: gitcommit.CommitResult) -> gitcommit.CommitResult:
    """A failure is logged once per folder and process (the write itself stands; its bytes are in history)."""
    if result.error and str(memory_dir) not in _warned:
        _warned.add(str(memory_dir))
        from memdir.hooklog import log

        log(Path(memory_dir), "history", result.describe())
    return result


# --- the one-time import of .memdir/history/ ------------------------------------------------------
def import_legacy(memory_dir: Path) -> int:
    """Every intact version kept in `.memdir/history/` as a commit, oldest first (called under the lock,
    before the repository's first commit). Versions another path may own are left to the old reader."""
    state_dir = Path(memory_dir) / C.STATE_DIRNAME
    found: list[tuple[str, str, history.Version]] = []
    for rel in history.known_files(state_dir):
        for version in history.versions(state_dir, rel):
            if not version.shared_with and not history.torn(version):
                found.append((version.stamp, rel, version))
    items = []
    for stamp, rel, version in sorted(found, key=lambda item: (item[0], item[1])):
        try:
            data = version.read()
        except OSError:
            continue
        items.append((int(_epoch(stamp)), rel, data, f"imported from .memdir/history: {version.action} {rel} ({version.name})"))
    return gitcommit.import_versions(memory_dir, items) if items else 0


def _epoch(stamp: str) -> float:
    try:
        return datetime.strptime(stamp, "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return time.time()


# --- reading: versions of one file, git's and the old reader's -------------------------------------
@dataclasses.dataclass(frozen=True)
class Row:
    """One version of a file as `memdir history` lists it. A git row holds the bytes after its commit
    (a deletion: the bytes it deleted); an old row holds bytes kept in `.memdir/history/` before a change."""

    number: int
    when: float
    action: str
    who: str
    size: int
    label: str  # a commit id, or the kept file's name
    blob: str | None = None
    old: history.Version | None = None

    @property
    def deletion(self) -> bool:
        """A commit that deleted the file (its bytes are what was deleted)."""
        return self.old is None and self.action == "deleted"

    @property
    def stamp(self) -> str:
        return datetime.fromtimestamp(self.when, UTC).strftime("%Y-%m-%d %H:%M:%S")

    def read(self, memory_dir: Path) -> bytes:
        return self.old.read() if self.old is not None else gitrepo.read_blob(memory_dir, self.blob or "")


def rows(memory_dir: Path, rel: str) -> list[Row]:
    """Versions of `rel` (relative to the memory folder), newest first: every commit that changed it, and
    each version the old reader kept whose bytes no commit holds (kept before git, or between sweeps)."""
    memory_dir = Path(memory_dir)
    found = _git_rows(memory_dir, rel) if enabled() else []
    in_git = {row.blob for row in found}
    for version in history.versions(memory_dir / C.STATE_DIRNAME, rel):
        try:
            data = version.read()
        except OSError:
            continue
        if gitrepo.blob_id(data) not in in_git:
            found.append(Row(0, _epoch(version.stamp), f"kept ({version.action})", "", len(data), version.name,
                             old=version))
    # Same second: the commit is the newer (a kept version is taken before the write, the commit after it).
    found.sort(key=lambda row: (int(row.when), row.old is None, row.when), reverse=True)
    return [dataclasses.replace(row, number=i) for i, row in enumerate(found, 1)]


def _git_rows(memory_dir: Path, rel: str) -> list[Row]:
    try:
        found = []
        for change in gitrepo.changes(memory_dir, rel):
            for file in change.files:
                if file.path == rel and (file.new_blob or file.old_blob):
                    found.append(Row(0, change.time, _verb(change, file), change.author, 0, change.commit[:10],
                                     blob=file.new_blob or file.old_blob))
        sizes = gitrepo.blob_sizes(memory_dir, [row.blob or "" for row in found])
        return [dataclasses.replace(row, size=sizes.get(row.blob or "", 0)) for row in found]
    except gitrepo.GitError:
        return []  # no git: the old reader's versions are all there is


def _verb(change: gitrepo.Change, file: gitrepo.FileChange) -> str:
    """The word the commit message used for this file ("superseded"), else git's own status."""
    named = gitcommit.shown(file.path)  # as the message names it
    for line in change.message.splitlines()[1:]:
        if line.endswith(f" {named}") and not line.startswith(("run:", "engine:", "writer of")):
            return line[: -len(named) - 1].split(" ", 1)[0]
    return {"A": "created", "M": "updated", "D": "deleted"}.get(file.status, "changed")


def known_files(memory_dir: Path) -> list[str]:
    """Every path the git history ever held (deleted memories too)."""
    if not enabled() or not gitrepo.exists(memory_dir):
        return []
    try:
        out = gitrepo.run(memory_dir, "log", "--format=", "--name-only", "-z", gitrepo.REF, check=False).stdout
    except gitrepo.GitError:
        return []
    return sorted({os.fsdecode(name) for name in out.split(b"\0") if name.strip()})


def pick(memory_dir: Path, rel: str, version: str | None, shown: str) -> Row:
    """The row `version` names (its number, commit id or kept file name), or by default the newest whose
    bytes differ from the file's now (a deleted file: its newest version): `memdir restore` undoes."""
    found = rows(memory_dir, rel)
    if all(row.old is not None for row in found):  # no git history: exactly the old reader's choice
        kept = history.pick(memory_dir / C.STATE_DIRNAME, rel, version, shown)
        return next(row for row in found if row.old is not None and row.old.name == kept.name)
    if version is None:
        try:
            now = gitrepo.blob_id(safefs.read_bytes(memory_dir, rel))
        except OSError:
            now = None
        chosen = next((row for row in found if _usable(row) and not row.deletion and _blob(memory_dir, row) != now),
                      None)
        if chosen is None:
            refused = next((row for row in found if not _usable(row)), None)
            if refused is not None and refused.old is not None:  # say why the older one is not restored
                history.pick(memory_dir / C.STATE_DIRNAME, rel, refused.old.name, shown)
            raise MemdirError(f"every version of {rel} holds what it holds now; see `memdir history {shown}`")
    else:
        wanted = version.strip()
        chosen = next((row for row in found if wanted and wanted in (str(row.number), row.label, row.blob or "")
                       or (row.old is not None and wanted in (row.old.name, row.old.path.stem))), None)
        if chosen is None:
            raise MemdirError(f"{rel} has no version {version!r}; `memdir history {shown}` lists them (1 = newest)")
    if chosen.old is not None:  # the old reader's own refusals: torn versions, old shared folders
        history.pick(memory_dir / C.STATE_DIRNAME, rel, chosen.old.name, shown)
    return chosen


def _usable(row: Row) -> bool:
    return row.old is None or not (row.old.shared_with or history.torn(row.old))


def _blob(memory_dir: Path, row: Row) -> str | None:
    return row.blob if row.old is None else gitrepo.blob_id(row.read(memory_dir))


# --- `memdir log` ----------------------------------------------------------------------------------
def log_lines(memory_dir: Path, limit: int = 20, diff: bool = False) -> list[str]:
    """Recent commits across the folder, newest first: when, who, why and each file's change; with
    `diff`, the patch of each commit under it."""
    memory_dir = Path(memory_dir)
    out: list[str] = []
    for change in gitrepo.changes(memory_dir, limit=limit):
        when = datetime.fromtimestamp(change.time, UTC).strftime("%Y-%m-%d %H:%M:%S")
        out.append(f"{change.commit[:10]}  {when} UTC  {change.author}")
        said = dict.fromkeys(line for line in change.message.rstrip("\n").splitlines() if line.strip())
        out += [f"    {line}" for line in said]  # a one-file commit's subject is its only line: once
        if diff:
            patch = gitrepo.run(memory_dir, "show", "--format=", "--no-color", "--no-renames", "--patch",
                                "--no-ext-diff", change.commit).stdout.decode("utf-8", "replace")
            out += [f"    {line}" for line in patch.rstrip("\n").splitlines()]
        out.append("")
    return out


def tidy(memory_dir: Path, loose_limit: int = C.GIT_LOOSE_LIMIT, pack_limit: int = C.GIT_PACK_LIMIT) -> None:
    """Pack the history once loose objects or packs pile up: every commit is one `git fast-import`, which
    leaves its few objects loose (or a pack of its own when large), and git slows down as files pile up.
    Counted here (git's own `gc --auto` samples one folder of 256, so it misses a small repository's pile);
    the repository's config never expires or prunes an object. Run by the Stop worker, off the hook path; a
    failure only leaves the objects as they were."""
    if not enabled() or not gitrepo.exists(memory_dir):
        return
    objects = Path(memory_dir) / C.STATE_DIRNAME / gitrepo.GIT_DIRNAME / "objects"
    with contextlib.suppress(MemdirError, OSError):
        loose = sum(len(os.listdir(entry.path)) for entry in os.scandir(objects)
                    if len(entry.name) == 2 and entry.is_dir(follow_symlinks=False))
        packs = sum(1 for name in os.listdir(objects / "pack") if name.endswith(".pack"))
        if loose > loose_limit or packs > pack_limit:
            gitrepo.run(memory_dir, "gc", "--quiet", timeout=300)
