"""No-loss edits: the previous bytes of a memory file or MEMORY.md, kept before any change.

`.memdir/history/<file key>/<UTC time>-<n>-<action>.md` holds one version each. The file key is one per
path and back (memdir/history_keys.py makes it), so a deleted memory's history is still found by its name
and no memory ever sees another's bytes. Names are made unique with an exclusive create (two forgets in the
same microsecond keep two copies).

The path is relative to the memory folder `.memdir/` sits in, so a team memory is `team/<name>`
and never shares a history with the personal memory of the same name.

Before this scheme the key was the path with `/` turned into `__`, so `ops/notes.md` and
`ops__notes.md` shared one folder, and team memory was filed under its bare name, with the personal
memory of that name. Those folders are still read (users have them on disk); new keys never contain
`__`, and `.memdir/history-since` records when the new keys began, so an old version is told from a
new one. An old version another existing path could also own is shown but never restored silently
(see `pick`), and an old team version is never restored at all (it may be personal bytes).

Every read and write goes through `memdir.safefs` (issue 9): a symlink planted anywhere inside the
memory folder, `.memdir/history/` included, is refused, never followed.

Which bytes memdir's extractor wrote (`authored.json`) is memdir/authored.py's record, not history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from memdir import constants as C, fsio, safefs, safefs_write
from memdir.errors import MemdirError
from memdir.history_keys import (
    HASHED_KEY_PREFIXES,
    decode_key,
    file_key,
    legacy_flat,
    legacy_key,
    secret_name,
    spellings,
)

_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _base(state_dir: Path) -> tuple[Path, str]:
    """(the memory folder every open walks from, the state folder relative to it)."""
    state_dir = Path(state_dir)
    return state_dir.parent, state_dir.name


@dataclasses.dataclass(frozen=True)
class Version:
    """One kept version. `number` 1 is the newest."""

    number: int
    path: Path
    stamp: str
    action: str
    base: Path
    rel: str  # relative to `base`, for symlink-proof reads
    shared_with: tuple[str, ...] = ()  # an old-scheme version: other existing paths it may belong to
    was_empty: bool = False  # kept from a memory that really was empty (so 0 bytes is its true content)

    @property
    def name(self) -> str:
        return self.path.name

    def read(self) -> bytes:
        return safefs.read_bytes(self.base, self.rel)


def history_root(state_dir: Path) -> Path:
    return Path(state_dir) / C.HISTORY_DIRNAME


def _other_owners(base: Path, state_rel: str, rel_path: str) -> tuple[str, ...]:
    """Other paths the old scheme filed in `rel_path`'s old folder that exist (as a memory file or with
    new-scheme history): its other spellings, and team memories of any spelling (team memory's old
    key was its name inside team/, the same as a personal memory's)."""
    owners = []
    for spelling in spellings(legacy_flat(rel_path)):
        for other in (spelling, f"{C.TEAM_DIRNAME}/{spelling}"):
            if other == rel_path:
                continue
            try:
                if safefs.is_regular_file(base, other) or safefs.exists(base, _folder_rel(state_rel, other)):
                    owners.append(other)
            except (OSError, ValueError):
                continue  # not a usable path (e.g. a leading `/`): nobody can own it
    return tuple(owners)


def _since(base: Path, state_rel: str) -> str:
    """The stamp from which this folder's versions are kept one folder per path: an older version
    in a folder the old scheme shared may be another path's. "~" sorts after every stamp: when no
    version was kept with the new keys yet, every version is an old one."""
    try:
        text = safefs.read_text_or(base, f"{state_rel}/{C.HISTORY_SINCE_NAME}", "").strip()
    except OSError:
        return "~"
    return text if re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z", text) else "~"


def _mark_since(base: Path, state_rel: str, stamp: str) -> None:
    """Record when the first version was kept with the new keys (once; never moved later)."""
    if _since(base, state_rel) == "~" and not safefs.exists(base, f"{state_rel}/{C.HISTORY_SINCE_NAME}"):
        safefs_write.write_text(base, f"{state_rel}/{C.HISTORY_SINCE_NAME}", stamp + "\n")


def _folder_rel(state_rel: str, rel_path: str) -> str:
    return f"{state_rel}/{C.HISTORY_DIRNAME}/{file_key(rel_path)}"


def _now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def keep_bytes(state_dir: Path, rel_path: str, data: bytes, action: str) -> Path:
    """Store `data` as a version of `rel_path`; returns the kept file. Never overwrites a version.

    A version is complete or absent: the bytes go to a hidden temp file, are fsynced, then linked
    under the version's name (an exclusive link, so two same-instant copies keep two names). A disk
    that fills up mid-write leaves no 0-byte "previous version" for `restore` to bring back.
    """
    base, state_rel = _base(state_dir)
    folder = _folder_rel(state_rel, rel_path)
    action = re.sub(r"[^a-z-]", "", action.lower()) or "changed"
    stamp = _now_stamp()
    _mark_since(base, state_rel, stamp)
    pattern = f"{stamp}-{{n:04d}}-{action}{_EMPTY if not data else ''}.md"
    if safefs_write.by_path():  # native Windows: no folder descriptor, every component lstat-checked instead
        return base / folder / _keep_by_path(base, folder, stamp, data, pattern)
    with safefs.open_dir(base, folder, create=True) as dfd:
        temp = f".{stamp}-{os.getpid()}-{os.urandom(4).hex()}{_PARTIAL}"
        try:
            fd = os.open(temp, _CREATE_NEW, 0o600, dir_fd=dfd)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            name = _publish(dfd, temp, pattern)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(base / folder)) from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dfd)
        with contextlib.suppress(OSError):
            os.fsync(dfd)
        _prune(dfd)
        return base / folder / name


_PARTIAL = ".partial"  # a version being written: never listed, never restored
_EMPTY = "-empty"  # the memory really was empty when this version was kept (see `pick`)


def _publish(dfd: int, temp: str, pattern: str) -> str:
    """Give the complete temp file its version name (the first `n` free); the name it got."""
    for n in range(1, 10_000):
        name = pattern.format(n=n)  # the counter keeps same-instant copies in order
        try:
            os.link(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
            return name
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
        # A file system without hard links: claim the name, then rename the whole file over the
        # claim (a crash between the two leaves an unmarked 0-byte version, which `pick` refuses).
        try:
            os.close(os.open(name, _CREATE_NEW, 0o600, dir_fd=dfd))
        except FileExistsError:
            continue
        os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return name
    raise MemdirError(f"too many versions kept at the same instant ({pattern.replace('{n:04d}', 'N')})")


def _keep_by_path(base: Path, folder: str, stamp: str, data: bytes, pattern: str) -> str:
    """keep_bytes where folders cannot be held open (memdir.safefs_pathwrite): the complete temp file is renamed over
    an exclusively claimed name, as `_publish` does on a file system without hard links."""
    from memdir import safefs_pathwrite

    temp = f"{folder}/.{stamp}-{os.getpid()}-{os.urandom(4).hex()}{_PARTIAL}"
    try:
        with os.fdopen(safefs_pathwrite.create_new(base, temp, 0o600), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        for n in range(1, 10_000):
            name = pattern.format(n=n)
            try:
                os.close(safefs_pathwrite.create_new(base, f"{folder}/{name}", 0o600))
            except FileExistsError:
                continue
            safefs_pathwrite.rename(base, temp, f"{folder}/{name}")
            _prune_by_path(base, folder)
            return name
        raise MemdirError(f"too many versions kept at the same instant ({pattern.replace('{n:04d}', 'N')})")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(base / folder)) from exc
    finally:
        with contextlib.suppress(OSError):
            safefs_pathwrite.unlink(base, temp)


def _prune_by_path(base: Path, folder: str) -> None:
    """`_prune` by path: the same versions dropped (never the oldest), partial files an hour old (on the file
    system's clock, as `_prune` ages them) removed."""
    entries = [name for name, kind in safefs.listdir(base, folder) if kind == "file"]
    names = sorted(n for n in entries if n.endswith(".md") and not n.startswith("."))
    for old in names[1 : 1 + max(0, len(names) - C.HISTORY_KEEP_PER_FILE)]:
        safefs_write.unlink(base, f"{folder}/{old}")
    partials = [n for n in entries if n.startswith(".") and n.endswith(_PARTIAL)]
    with contextlib.suppress(OSError):
        now = safefs_write.folder_now(base, folder) if partials else 0.0
        for partial in partials:
            with contextlib.suppress(OSError):
                if (st := safefs.lstat(base, f"{folder}/{partial}")) and st.st_mtime < now - 3600:
                    safefs_write.unlink(base, f"{folder}/{partial}")


def keep(state_dir: Path, root: Path, rel_path: str, action: str, max_bytes: int = C.SAFE_READ_MAX_BYTES) -> Path | None:
    """Keep the current bytes of `root/rel_path` before it changes; None when there is no file."""
    base, _ = _base(state_dir)
    full = safefs.rel_to(base, Path(root) / rel_path)  # team memory is `team/<name>`: its own history
    try:
        data = safefs.read_bytes(base, full, max_bytes)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return keep_bytes(state_dir, full, data, action)


def _prune(dfd: int) -> None:
    """Bound the history, but never drop the oldest version: for a file a person wrote, that is the
    original they wrote (MEMORY.md gets a version on every save, and could otherwise lose it)."""
    entries = os.listdir(dfd)
    names = sorted(n for n in entries if n.endswith(".md") and not n.startswith("."))
    excess = max(0, len(names) - C.HISTORY_KEEP_PER_FILE)
    for old in names[1 : 1 + excess]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old, dir_fd=dfd)
    partials = [n for n in entries if n.startswith(".") and n.endswith(_PARTIAL)]
    with contextlib.suppress(OSError):
        # aged on the clock that stamped them (a network file system's server's, which may run far from this machine's)
        now = fsio.folder_now(dfd) if partials else 0.0
        for partial in partials:  # left by a process killed mid-write an hour or more ago
            with contextlib.suppress(OSError):
                if os.stat(partial, dir_fd=dfd, follow_symlinks=False).st_mtime < now - 3600:
                    os.unlink(partial, dir_fd=dfd)


def _listed(base: Path, folder: str, shared_with: tuple[str, ...] = ()) -> list[Version]:
    try:
        entries = safefs.listdir(base, folder)
    except safefs.UnsafePath:
        return []
    out = []
    for name, kind in entries:
        if kind != "file" or name.startswith("."):  # a hidden name is a version still being written
            continue
        stamp, _, rest = name.removesuffix(".md").partition("-")
        action = rest.partition("-")[2] or "changed"
        was_empty = action.endswith(_EMPTY)
        action = action.removesuffix(_EMPTY) or "changed"
        out.append(Version(0, base / folder / name, stamp, action, base, f"{folder}/{name}", shared_with, was_empty))
    return out


def versions(state_dir: Path, rel_path: str) -> list[Version]:
    """Kept versions of `rel_path` (relative to the folder `state_dir` sits in, so a team memory is
    `team/<name>`), newest first, old-scheme versions included and marked when they may be another's."""
    base, state_rel = _base(state_dir)
    history_rel = f"{state_rel}/{C.HISTORY_DIRNAME}"
    since = _since(base, state_rel)
    found = _listed(base, _folder_rel(state_rel, rel_path))
    team = f"{C.TEAM_DIRNAME}/"
    if rel_path.startswith(team):
        # The old scheme filed team memory under its bare name, in the folder of the personal memory of
        # that name: those versions are shown, never restored (team memory must not receive personal bytes).
        bare = rel_path[len(team):]
        old = [v for v in _listed(base, f"{history_rel}/{legacy_key(bare)}") if v.stamp < since]
        found += [dataclasses.replace(v, shared_with=(bare,)) for v in old]
    else:
        old_key = legacy_key(rel_path)
        if old_key == file_key(rel_path):  # one folder for both schemes: its versions before `since` are old
            old = [v for v in found if v.stamp < since]
            found = [v for v in found if v.stamp >= since]
        elif "__" in old_key or secret_name(rel_path):
            old = _listed(base, f"{history_rel}/{old_key}")
        else:
            old = []  # a name with `%`: its old folder could be another path's new one
        owners = _other_owners(base, state_rel, rel_path) if old else ()
        found += [dataclasses.replace(v, shared_with=owners) for v in old]
    found.sort(key=lambda v: v.name, reverse=True)  # names start with the UTC time
    return [dataclasses.replace(v, number=i) for i, v in enumerate(found, 1)]


def known_files(state_dir: Path) -> list[str]:
    """Relative paths that have history (including deleted memories)."""
    base, state_rel = _base(state_dir)
    try:
        entries = safefs.listdir(base, f"{state_rel}/{C.HISTORY_DIRNAME}")
    except safefs.UnsafePath:
        return []
    names: set[str] = set()
    for name, kind in entries:
        if kind != "dir" or name.startswith(HASHED_KEY_PREFIXES):
            continue
        if "__" in name:  # an old-scheme folder: any spelling may be the one the user means
            names.update(s for s in spellings(name) if not (s.startswith("/") or s.endswith("/") or "//" in s))
        else:
            names.add(decode_key(name))
    return sorted(names)


def pick(state_dir: Path, rel_path: str, version: str | None, shown: str | None = None) -> Version:
    """A version by number (1 = newest), by file name, or the newest intact one when `version` is None.
    `shown`: the name as the user gives it to `memdir history` (e.g. `--team deploy.md`).

    A 0-byte version of a memory that was not empty is what an older memdir left when the disk filled
    up mid-write: restoring it would empty the memory, so it is skipped (newest) or refused (by number).
    """
    found = versions(state_dir, rel_path)
    shown = shown or rel_path
    if not found:
        raise MemdirError(f"no kept versions of {rel_path}; see `memdir history {shown}`")
    if version is None:
        chosen = next((v for v in found if not torn(v)), None)
        if chosen is None:
            raise MemdirError(f"every kept version of {rel_path} is empty, left by failed writes; nothing to restore")
    else:
        chosen = next((v for v in found if version.strip() in (str(v.number), v.name, v.path.stem)), None)
    if chosen is None:
        raise MemdirError(f"{rel_path} has no version {version!r}; `memdir history {shown}` lists them (1 = newest)")
    if torn(chosen):
        raise MemdirError(f"version {chosen.number} of {rel_path} is empty, left by a write that failed (disk full?), "
                          f"not by an empty memory; pick another with --version (`memdir history {shown}`)")
    if chosen.shared_with:
        raise MemdirError(
            f"version {chosen.number} of {rel_path} was kept by an older memdir in a folder it shared with "
            f"{' and '.join(chosen.shared_with)}, so it may hold that memory's bytes: read {chosen.rel} "
            f"and copy back by hand what is yours (or pick another version with --version)")
    return chosen


def torn(version: Version) -> bool:
    """A 0-byte version not marked as kept from an empty memory: a failed write, never real content."""
    if version.was_empty:
        return False
    st = safefs.lstat(version.base, version.rel)
    return st is not None and st.st_size == 0


def display(root: Path, kept: Path | None) -> str:
    """A kept path as the user should read it: relative to the memory folder when inside it."""
    if kept is None:
        return ""
    try:
        return kept.relative_to(root).as_posix()
    except ValueError:
        return str(kept)
