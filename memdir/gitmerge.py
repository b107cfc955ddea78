"""Merging two machines' memory histories (for `memdir sync`, memdir/gitsync.py): no edit is ever lost.

A three-way merge per file, done by memdir, not `git merge`: git never touches the work tree (see
memdir/gitrepo.py), and memory files need rules git does not have:
- a file changed on one side only takes that side;
- a file changed differently on both sides keeps the NEWER edit as the current file (the side whose last
  commit touching it is newer; a tie keeps this machine's); the other edit stays in the merged history,
  so `memdir history NAME` lists it and `memdir restore` brings it back. Team memory (`trust_dates=False`)
  keeps THIS machine's edit instead: a commit's date is whatever its pusher set, so anyone who can push to
  the team remote could date an edit in 2099 and win every conflict; what the user has here stays, and the
  teammate's edit is in history, named in the sync report;
- a file edited on one side and deleted on the other keeps the edit (the deletion is in history);
- MEMORY.md (at any level) is merged line by line: it is a list of one-line entries that Claude Code,
  memdir and people all add to, so both sides' new lines are kept and both sides' removals honoured.
  A line merge rather than a rebuild of the index: a rebuild keeps only the lines memdir itself would
  write and would drop the hand-written and Claude Code-written ones.

Applying a merge writes the changed files first and moves the branch last, under the folder lock: a kill
in between leaves files that the next sync commits and merges again to the same result. A file whose bytes
on disk are not the committed ones (changed since, or left out because it holds a secret) is never
overwritten: it stays as it is, and the other machine's version stays in history.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memdir import gitcommit, gitrepo, safefs, safefs_write

INDEX_NAME = "MEMORY.md"
SYNC_AUTHOR = gitcommit.Author("memdir sync", "memdir@memdir.invalid")


@dataclasses.dataclass(frozen=True)
class Conflict:
    """Both machines changed `path`: which one is current, and where the other lives."""

    path: str
    kept: str  # "this machine's" or "the other machine's"
    how: str  # "both edited", "edited here, deleted there", ...
    other: str  # the commit holding the version that is not current

    def describe(self, team: bool = False) -> str:
        command = f"memdir history {'--team ' if team else ''}{self.path}"
        return f"{self.path}: {self.how}; kept {self.kept} version, the other is in `{command}` (commit {self.other[:10]})"


@dataclasses.dataclass
class Merge:
    """The merged tree as changes on top of ours: path -> new bytes (None: delete)."""

    changes: dict[str, bytes | None] = dataclasses.field(default_factory=dict)
    conflicts: list[Conflict] = dataclasses.field(default_factory=list)


def merge_base(memory_dir: Path, ours: str, theirs: str) -> str | None:
    done = gitrepo.run(memory_dir, "merge-base", ours, theirs, check=False)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def plan(memory_dir: Path, ours: str, theirs: str, base_commit: str | None, mine: dict[str, str], *,
         trust_dates: bool = True) -> Merge:
    """What to change in `ours` (whose files are `mine`) to merge `theirs` into it, from their merge base
    (None: unrelated histories, such as two machines that had memories before their first sync). Without
    `trust_dates` (a team remote), a file both sides edited keeps this machine's edit."""
    base = gitrepo.committed_files(memory_dir, base_commit)
    other = gitrepo.committed_files(memory_dir, theirs)
    merge = Merge()
    for path in sorted(set(base) | set(mine) | set(other)):
        b, o, t = base.get(path), mine.get(path), other.get(path)
        if o == t or t == b or not gitrepo.tracked(path):
            continue  # same on both sides, or only we changed it, or never ours to take (`.memdir/`, a .bin...)
        if o == b:
            merge.changes[path] = None if t is None else gitrepo.read_blob(memory_dir, t)
        elif path.rsplit("/", 1)[-1] == INDEX_NAME:
            merge.changes[path] = merge_lines(*(_bytes(memory_dir, blob) for blob in (b, o, t)))
        else:
            _both_changed(memory_dir, merge, path, (o, t), (ours, theirs), base_commit, trust_dates)
    return merge


def _both_changed(memory_dir: Path, merge: Merge, path: str, blobs: tuple[str | None, str | None],
                  tips: tuple[str, str], base: str | None, trust_dates: bool) -> None:
    (o, t), (ours, theirs) = blobs, tips
    if o is None:  # deleted here, edited there: keep the edit
        merge.changes[path] = gitrepo.read_blob(memory_dir, t) if t else None
        merge.conflicts.append(Conflict(path, "the other machine's", "deleted here, edited on the other machine",
                                        ours))
        return
    if t is None:  # edited here, deleted there: keep ours
        merge.conflicts.append(Conflict(path, "this machine's", "edited here, deleted on the other machine", theirs))
        return
    if not trust_dates:
        merge.conflicts.append(Conflict(path, "this machine's", "edited here and by a teammate (a pushed commit's "
                                        "date is the pusher's to set, so the edit here stays)", theirs))
    elif _last_touched(memory_dir, theirs, path, base) > _last_touched(memory_dir, ours, path, base):
        merge.changes[path] = gitrepo.read_blob(memory_dir, t)
        merge.conflicts.append(Conflict(path, "the other machine's (newer)", "edited on both machines", ours))
    else:
        merge.conflicts.append(Conflict(path, "this machine's (newer)", "edited on both machines", theirs))


def _last_touched(memory_dir: Path, tip: str, path: str, base: str | None) -> int:
    """When `path` was last changed on the side ending at `tip` (epoch seconds)."""
    args = ["log", "-1", "--format=%ct", tip, *([f"^{base}"] if base else []), "--", f":(literal){path}"]
    out = gitrepo.run(memory_dir, *args).stdout.decode().strip()
    return int(out) if out.isdigit() else 0


def _bytes(memory_dir: Path, blob: str | None) -> bytes:
    return gitrepo.read_blob(memory_dir, blob) if blob else b""


def merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """A line-by-line three-way merge for an index of one-line entries: ours in order, without the lines
    the other side removed, plus the lines the other side added (each after the line it followed there).
    Merging the result with `theirs` again gives the result: a rerun after a crash changes nothing."""
    b, o, t = (_lines(data) for data in (base, ours, theirs))
    removed = set(b) - set(t)
    result = [line for line in o if line not in removed or not line.strip()]
    present = set(result)
    for position, line in enumerate(t):
        if line in present or line in b:
            continue
        after = next((t[i] for i in range(position - 1, -1, -1) if t[i] in present), None)
        at = len(result) if after is None else max(i for i, x in enumerate(result) if x == after) + 1
        result.insert(at, line)
        present.add(line)
    return b"".join(result)


def _lines(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    return lines


def apply(memory_dir: Path, ours_files: dict[str, str], changes: dict[str, bytes | None]) -> list[str]:
    """Write `changes` to the folder (call under the folder lock), each only where the file on disk is
    still the committed one. Returns the paths left alone because they changed on disk since."""
    kept = []
    for path, data in changes.items():
        if _disk_blob(memory_dir, path) != ours_files.get(path):
            kept.append(path)
        elif data is None:
            safefs_write.unlink(memory_dir, path)
        else:
            safefs_write.write_bytes(memory_dir, path, data)
    return kept


def _disk_blob(memory_dir: Path, path: str) -> str | None:
    try:
        return gitrepo.blob_id(safefs.read_bytes(memory_dir, path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def commit_merge(memory_dir: Path, ours: str, theirs: str, changes: dict[str, bytes | None], message: str) -> str:
    """The merge commit (parents: ours, theirs) of `changes` on top of ours; the branch moves forward only."""
    stream = [b"commit " + gitrepo.REF.encode() + b"\n", b"mark :1\n",
              b"author " + gitcommit._ident(SYNC_AUTHOR) + b"\n", b"committer " + gitcommit._ident(SYNC_AUTHOR) + b"\n",
              gitcommit._data(gitcommit._clean(message).encode("utf-8", "surrogateescape")),
              f"from {ours}\n".encode(), f"merge {theirs}\n".encode()]
    for path, data in sorted(changes.items()):
        if data is None:
            stream.append(b"D " + gitcommit._quote(path) + b"\n")
        else:
            stream += [b"M 100644 inline " + gitcommit._quote(path) + b"\n", gitcommit._data(data)]
    stream.append(b"\nget-mark :1\ndone\n")
    out = gitrepo.run(memory_dir, "fast-import", "--quiet", "--done", input=b"".join(stream)).stdout
    new = out.decode().strip().splitlines()
    if not new or len(new[-1]) != 40:
        raise gitrepo.GitError(f"git fast-import gave no merge commit id in {gitrepo.git_dir(memory_dir)}")
    return new[-1]
