"""Committing to the memory folder's history (memdir/gitrepo.py's repository): what changed, guarded, in one fast-import.

memdir reads each file itself through `memdir.safefs`, runs the secret guard on exactly those bytes and hands the
same bytes to one `git fast-import` process that writes blobs, tree and commit and moves the branch only forward:
the bytes the guard passed are the bytes committed, and a crash or kill before `fast-import` finishes leaves the
branch where it was. Every commit runs under the folder lock the store uses (`.memdir/lock`). Running git, the
repository's layout and reading it back are memdir/gitrepo.py's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from memdir import constants as C, gitrepo, safefs, safefs_write
from memdir.errors import MemdirError
from memdir.secrets import find_secrets, looks_secret, redact

_LOCK_REL = f"{C.STATE_DIRNAME}/{C.LOCK_NAME}"  # the store's folder lock (memdir/store.py)


@dataclasses.dataclass(frozen=True)
class Author:
    name: str
    email: str


MEMDIR = Author("memdir", "memdir@memdir.invalid")
ANOTHER_WRITER = Author("another writer", "another-writer@memdir.invalid")


@dataclasses.dataclass(frozen=True)
class CommitResult:
    """What one `commit` did. `commit` is None when nothing changed, or when it failed (`error`)."""

    commit: str | None = None
    written: tuple[str, ...] = ()  # created or updated
    deleted: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()  # (path, why): a secret, an unreadable or oversized file
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"history not recorded: {self.error}"
        parts = [f"committed {self.commit[:10]}" if self.commit else "history: nothing changed"]
        parts += [f"left out {path}: {why}" for path, why in self.left_out]
        return "; ".join(parts)



# --- committing ----------------------------------------------------------------------------------
@contextlib.contextmanager
def _folder_lock(memory_dir: Path, timeout: float) -> Iterator[None]:
    with safefs_write.locked(memory_dir, _LOCK_REL, timeout):
        yield


def commit(memory_dir: Path, message: str, *, author: Author = MEMDIR, paths: Iterable[str] | None = None,
           verbs: dict[str, str] | None = None, by: dict[str, str] | None = None,
           first_import: Callable[[Path], int] | None = None, lock_timeout: float = 30.0,
           others: Callable[[], list[tuple[int, str, bytes, str]]] | None = None) -> CommitResult:
    """Commit what changed in the folder since the last commit (only `paths`, when given), under the
    folder lock. A file whose bytes hold a secret, or whose name looks like one, is left out (its last
    committed version stays) and named in the result. `verbs` say what happened to a path in the message
    ("superseded x.md"; default created/updated/deleted); `by` names a path's writer, and the author
    then names the writers of the paths this commit holds. `first_import` runs before the repository's
    first commit (the one-time import of older history). `others` gives versions another writer left that
    memdir's write replaced (its kept copies): each not committed yet is committed first, as another
    writer's, so an undo finds it. Never raises: a failure is `result.error`."""
    memory_dir = Path(memory_dir)
    try:
        with _folder_lock(memory_dir, lock_timeout):
            return commit_locked(memory_dir, message, author=author, paths=paths, verbs=verbs, by=by,
                                 first_import=first_import, others=others)
    except MemdirError as exc:
        return CommitResult(error=str(exc))
    except OSError as exc:
        from memdir.errors import os_error_line

        return CommitResult(error=os_error_line(exc))


def commit_locked(memory_dir: Path, message: str, *, author: Author = MEMDIR, paths: Iterable[str] | None = None,
                  verbs: dict[str, str] | None = None, by: dict[str, str] | None = None,
                  first_import: Callable[[Path], int] | None = None,
                  others: Callable[[], list[tuple[int, str, bytes, str]]] | None = None) -> CommitResult:
    """`commit` for a caller that already holds the folder lock; raises GitError/OSError on failure."""
    memory_dir = Path(memory_dir)
    gitrepo.ensure(memory_dir)
    parent = gitrepo.head(memory_dir)
    if parent is None and first_import is not None:
        first_import(memory_dir)
        parent = gitrepo.head(memory_dir)
    before = gitrepo.committed_files(memory_dir, parent)
    replaced = [item for item in (others() if others else []) if before.get(item[1]) != gitrepo.blob_id(item[2])]
    if replaced and import_versions(memory_dir, replaced, ANOTHER_WRITER):  # rare: no git run when none
        parent = gitrepo.head(memory_dir)
        before = gitrepo.committed_files(memory_dir, parent)
    on_disk = gitrepo.disk_files(memory_dir)
    wanted = sorted(set(on_disk) | set(before)) if paths is None else sorted({p for p in paths if gitrepo.tracked(p)})
    present = set(on_disk)
    changes: list[tuple[str, bytes | None]] = []  # (path, new bytes) or (path, None) for a deletion
    left_out: list[tuple[str, str]] = []
    for path in wanted:
        if path not in present:
            if path in before:
                changes.append((path, None))
            continue
        data, why = _guarded_bytes(memory_dir, path, before.get(path))
        if why:
            left_out.append((path, why))
        elif data is not None:
            changes.append((path, data))
    if not changes:
        return CommitResult(commit=None, left_out=tuple(left_out))
    written = tuple(p for p, d in changes if d is not None)
    deleted = tuple(p for p, d in changes if d is None)
    by = {path: who for path, who in (by or {}).items() if path in written or path in deleted}
    if by:
        author = Author(f"{author.name} ({', '.join(sorted(set(by.values())))})", author.email)
    text = _message(message, written, deleted, before, left_out, verbs or {}, by)
    new = _fast_import(memory_dir, _commit_block(1, author, None, text, parent, changes), 1)
    return CommitResult(commit=new, written=written, deleted=deleted, left_out=tuple(left_out))


def _guarded_bytes(memory_dir: Path, path: str, committed: str | None) -> tuple[bytes | None, str | None]:
    """(the file's new bytes, None) when they changed and may be committed; (None, None) when they did not
    change; (None, why not) when they may not be committed. Only changed bytes are scanned for secrets:
    the committed ones passed the guard already."""
    try:
        data = safefs.read_bytes(memory_dir, path)
    except (FileNotFoundError, NotADirectoryError):
        return None, None  # deleted since the folder was listed: the next commit records it
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    if gitrepo.blob_id(data) == committed:
        return None, None
    if looks_secret(path):
        return None, "its name looks like a secret"
    findings = find_secrets(data.decode("utf-8", "replace"))
    if findings:
        first = findings[0]
        return None, f"holds a secret ({first.kind}, line {first.line}); remove it and it is committed next time"
    return data, None


def _message(message: str, written: tuple[str, ...], deleted: tuple[str, ...], before: dict[str, str],
             left_out: list[tuple[str, str]], verbs: dict[str, str], by: dict[str, str]) -> str:
    """The caller's subject (why), then one line per file (what): created/updated/deleted/left out."""
    body = [_said(verbs.get(path) or ("updated" if path in before else "created"), path) for path in written]
    body += [_said(verbs.get(path) or "deleted", path) for path in deleted]
    body = [line + (f" (by {by[path]})" if path in by else "")
            for line, path in zip(body, [*written, *deleted], strict=True)]
    body = list(dict.fromkeys(body))  # a rename names both paths in one line
    body += [shown(f"left out {path}: {why}") for path, why in left_out]
    return redact("\n".join([_clean(message).strip() or "memory changed", "", *body])) + "\n"


def _said(verb: str, path: str) -> str:
    """"updated x.md", or the verb with `{}` where the path goes ("renamed {} to b.md")."""
    return shown(verb.replace("{}", path) if "{}" in verb else f"{verb} {path}")


def shown(text: str) -> str:
    """A line naming a path, with the path's control characters escaped (`\\n`): a file name holding a
    newline must not add a line of its own to a commit message or to `memdir log`."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], text)


def _clean(text: str) -> str:
    """No control characters but newlines and tabs (they would confuse `log` parsing and terminals)."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", text)


def _ident(author: Author, when: int | None = None) -> bytes:
    name = re.sub(r"[<>\n\x00]", " ", _clean(author.name)).strip() or "unknown"
    email = re.sub(r"[<>\s\x00]", "", author.email) or "unknown@memdir.invalid"
    return f"{name} <{email}> {int(time.time()) if when is None else when} +0000".encode()


def _quote(path: str) -> bytes:
    """A path as fast-import reads it: C-quoted, so spaces, quotes and newlines survive."""
    out = bytearray(b'"')
    for byte in os.fsencode(path):
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def _commit_block(mark: int, author: Author, when: int | None, message: str, parent: str | None,
                  changes: list[tuple[str, bytes | None]]) -> list[bytes]:
    block = [b"commit " + gitrepo.REF.encode() + b"\n", b"mark :%d\n" % mark, b"author " + _ident(author, when) + b"\n",
             b"committer " + _ident(MEMDIR) + b"\n", _data(message.encode("utf-8", "surrogateescape"))]
    if parent:
        block.append(f"from {parent}\n".encode())
    for path, data in changes:
        if data is None:
            block.append(b"D " + _quote(path) + b"\n")
        else:
            block += [b"M 100644 inline " + _quote(path) + b"\n", _data(data)]
    return [*block, b"\n"]


def _fast_import(memory_dir: Path, stream: list[bytes], last_mark: int) -> str:
    """Run one fast-import over `stream` (commits on the branch), all or nothing; the last commit's id.
    fast-import moves the branch forward only: a branch that moved meanwhile makes it fail, not rewrite."""
    stream = [*stream, b"get-mark :%d\ndone\n" % last_mark]
    done = gitrepo.run(memory_dir, "fast-import", "--quiet", "--done", input=b"".join(stream))
    new = done.stdout.decode().strip().splitlines()
    if not new or not re.fullmatch(r"[0-9a-f]{40}", new[-1]):
        raise gitrepo.GitError(f"git fast-import gave no commit id in {gitrepo.git_dir(memory_dir)}")
    return new[-1]


def import_versions(memory_dir: Path, items: list[tuple[int, str, bytes, str]], author: Author = MEMDIR) -> int:
    """One commit per (epoch seconds, path, bytes, message), in order, in one fast-import (call under the
    folder lock). Versions whose bytes or name hold a secret, or that change nothing, are skipped. The
    number of commits made."""
    parent = gitrepo.head(memory_dir)
    last, stream, mark = gitrepo.committed_files(memory_dir, parent), [], 0
    for when, path, data, message in items:
        if not gitrepo.tracked(path) or looks_secret(path) or last.get(path) == gitrepo.blob_id(data):
            continue
        if find_secrets(data.decode("utf-8", "replace")):
            continue
        mark += 1
        stream += _commit_block(mark, author, when, redact(_clean(message)) + "\n", parent if mark == 1 else None,
                                [(path, data)])
        last[path] = gitrepo.blob_id(data)
    if mark:
        _fast_import(memory_dir, stream, mark)
    return mark
