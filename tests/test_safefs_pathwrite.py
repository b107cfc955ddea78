"""Writes where a folder cannot be held open (native Windows: safefs.BY_DESCRIPTOR false) are made by path, each
component lstat-checked first (memdir.safefs_pathwrite), and keep the rule the descriptor walk keeps: nothing is
written, removed or moved through a link anywhere below the memory folder. Every case runs on both backends: the
descriptor one (Linux and macOS, unchanged) and the path one, forced here on Linux."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memdir import portalock, safefs, safefs_paths, safefs_pathwrite, safefs_write
from memdir.errors import FolderBusy

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="the refusals are checked on symlinks")


@pytest.fixture(params=["descriptor", "path"])
def backend(request, monkeypatch) -> str:
    if request.param == "path":
        monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    return request.param


@pytest.fixture
def trap(tmp_path: Path) -> tuple[Path, Path]:
    """A memory folder whose `.memdir`, `team/`, `deep/inner` and `linked.md` are symlinks out of it."""
    memory, outside = tmp_path / "memory", tmp_path / "outside"
    memory.mkdir()
    (outside / "inner").mkdir(parents=True)
    (outside / "target.md").write_text("outside\n")
    (memory / "real.md").write_text("real\n")
    (memory / "linked.md").symlink_to(outside / "target.md")
    (memory / ".memdir").symlink_to(outside, target_is_directory=True)
    (memory / "team").symlink_to(outside, target_is_directory=True)
    (memory / "deep").mkdir()
    (memory / "deep" / "inner").symlink_to(outside / "inner", target_is_directory=True)
    return memory, outside


def _outside(outside: Path) -> dict[str, bytes]:
    return {p.relative_to(outside).as_posix(): p.read_bytes() for p in outside.rglob("*") if p.is_file()}


LINKED = ["linked.md", ".memdir/state.json", "team/target.md", "team/new.md", "deep/inner/new.md",
          "deep/inner/x/y.md"]


@pytest.mark.parametrize("rel", LINKED)
def test_no_write_goes_through_a_link_anywhere_below_the_root(backend, trap, rel):
    memory, outside = trap
    before = _outside(outside)
    changes = [lambda: safefs_write.write_text(memory, rel, "planted\n"),
               lambda: safefs_write.append_text(memory, rel, "planted\n"),
               lambda: safefs_write.rename(memory, "real.md", rel),
               lambda: safefs_write.unlink(memory, rel.replace("linked.md", "team/target.md")),
               lambda: safefs_write.mkdirs(memory, rel),
               lambda: safefs_write.locked(memory, rel).__enter__(),
               lambda: safefs.open_file(memory, rel, os.O_RDWR | os.O_CREAT)]
    for change in changes:
        with pytest.raises(safefs.UnsafePath) as refused:
            change()
        assert "symlink" in str(refused.value) and "\n" not in str(refused.value)
    assert _outside(outside) == before and sorted(p.name for p in outside.rglob("*")) == ["inner", "target.md"]
    assert (memory / "real.md").read_text() == "real\n" and (memory / "linked.md").is_symlink()


def test_the_writes_work_on_both_backends(backend, tmp_path):
    memory = tmp_path / "memory"
    safefs_write.write_text(memory, "a/b/one.md", "one\n")
    safefs_write.write_text(memory, "a/b/one.md", "two\n")
    safefs_write.append_text(memory, "logs/day.md", "x\n")
    safefs_write.append_text(memory, "logs/day.md", "y\n")
    assert (memory / "a/b/one.md").read_text() == "two\n" and (memory / "logs/day.md").read_text() == "x\ny\n"
    safefs_write.rename(memory, "a/b/one.md", "c/one.md", create_dst_dir=True)
    assert (memory / "c/one.md").read_text() == "two\n" and not (memory / "a/b/one.md").exists()
    safefs_write.rmdir(memory, "a/b")
    safefs_write.move_folder(memory, "c", "d")
    assert (memory / "d/one.md").exists() and not (memory / "a/b").exists()
    safefs_write.unlink(memory, "d/one.md")
    safefs_write.unlink(memory, "d/one.md")  # missing_ok
    assert not (memory / "d/one.md").exists()
    assert not [p for p in memory.rglob("*") if ".tmp" in p.name or "memdir-tmp" in p.name]
    with safefs_write.locked(memory, ".memdir/lock"), safefs_write.try_locked(memory, ".memdir/lock") as got:
        assert got is False  # a second holder is turned away while the first holds it
    with safefs_write.try_locked(memory, ".memdir/lock") as got:
        assert got is True


def test_a_link_replaced_at_the_target_is_never_written_through(backend, trap):
    """write_bytes replaces: a link at the target is refused first, and a temp file + rename never opens it."""
    memory, outside = trap
    with pytest.raises(safefs.UnsafePath, match="symlink"):
        safefs_write.write_text(memory, "linked.md", "planted\n")
    assert (outside / "target.md").read_text() == "outside\n"


def test_a_file_swapped_between_the_check_and_the_open_is_not_appended_to(monkeypatch, tmp_path):
    """The path backend opens an existing file after its lstat; the file opened must be that file."""
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "log.md").write_text("log\n")
    (tmp_path / "other.md").write_text("other\n")
    other = os.lstat(tmp_path / "other.md")
    real_lstat = os.lstat
    monkeypatch.setattr(safefs_pathwrite.os, "lstat", lambda p: other if str(p).endswith("log.md") else real_lstat(p))
    with pytest.raises(safefs.UnsafePath, match="replaced"):
        safefs_write.append_text(memory, "log.md", "planted\n")
    with pytest.raises(safefs.UnsafePath, match="replaced"):
        safefs_write.locked(memory, "log.md").__enter__()
    assert (memory / "log.md").read_text() == "log\n" and (tmp_path / "other.md").read_text() == "other\n"


class _Reparse:
    """A stat result as native Windows gives it for a junction: a folder, with FILE_ATTRIBUTE_REPARSE_POINT."""

    def __init__(self, real: os.stat_result) -> None:
        self._real = real
        self.st_file_attributes = stat.FILE_ATTRIBUTE_REPARSE_POINT if hasattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT") \
            else 0x400

    def __getattr__(self, name: str):
        return getattr(self._real, name)


@pytest.mark.parametrize("junction", ["team", "team/sub", "notes.md"])
def test_a_reparse_point_is_refused_like_a_symlink(monkeypatch, tmp_path, junction):
    """Windows' junctions are no symlinks to S_ISLNK: their reparse-point attribute is what refuses them."""
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    memory = tmp_path / "memory"
    (memory / "team" / "sub").mkdir(parents=True)
    (memory / "notes.md").write_text("notes\n")
    real_lstat = os.lstat

    def lstat(path):
        st = real_lstat(path)
        return _Reparse(st) if Path(path) == memory / junction else st

    monkeypatch.setattr(safefs_paths.os, "lstat", lstat)
    target = "notes.md" if junction == "notes.md" else f"{junction}/new.md"
    for change in (lambda: safefs_write.write_text(memory, target, "x\n"),
                   lambda: safefs_write.append_text(memory, target, "x\n"),
                   lambda: safefs_write.mkdirs(memory, f"{junction}/deeper")):
        with pytest.raises(safefs.UnsafePath, match="symlink"):
            change()
    assert (memory / "notes.md").read_text() == "notes\n" and not list(memory.rglob("new.md"))


def test_a_name_that_exists_is_never_created_over(monkeypatch, tmp_path):
    """create_new is O_EXCL: a dangling link at the name is not followed to make its target."""
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "claim.md").symlink_to(tmp_path / "made-outside.md")
    with pytest.raises(FileExistsError):
        safefs_pathwrite.create_new(memory, "claim.md")
    assert not (tmp_path / "made-outside.md").exists()


def test_the_lock_waits_then_says_who_holds_it(backend, tmp_path):
    memory = tmp_path / "memory"
    with safefs_write.locked(memory, ".memdir/lock"), pytest.raises(FolderBusy, match="still locked"):
        safefs_write.locked(memory, ".memdir/lock", timeout=0.05).__enter__()
    fd = os.open(memory / ".memdir/lock", os.O_RDWR)
    try:
        assert portalock.try_lock(fd)
        portalock.unlock(fd)
    finally:
        os.close(fd)


def test_the_decision_journal_is_appended_without_o_nofollow_and_never_through_a_link(monkeypatch, tmp_path):
    """Native Windows has neither O_NOFOLLOW nor pread: the journal was refused there (no decision ever kept)."""
    from memdir import decisions

    monkeypatch.delattr(os, "O_NOFOLLOW")
    monkeypatch.delattr(os, "pread")
    journal = tmp_path / "decisions" / "decisions.jsonl"
    journal.parent.mkdir()
    journal.write_bytes(b'{"torn": ')  # a writer died mid-line
    decisions.append_lines(journal, [{"what": "Kafka"}])
    assert journal.read_bytes() == b'{"torn": \n{"what": "Kafka"}\n'
    planted = tmp_path / "planted.jsonl"
    journal.unlink()
    journal.symlink_to(planted)
    with pytest.raises(safefs.UnsafePath, match="symlink"):
        decisions.append_lines(journal, [{"what": "Kafka"}])
    assert not planted.exists()


def test_a_file_another_process_holds_open_is_replaced_once_it_lets_go(monkeypatch, tmp_path):
    """Windows refuses to replace or remove a file another process has open (a hook reading MEMORY.md): the path
    backend retries briefly rather than failing the save; a refusal that lasts is still one error."""
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("old\n")
    real_replace, refusals = os.replace, [2]

    def replace(src, dst):
        if refusals[0]:
            refusals[0] -= 1
            raise PermissionError(13, "The process cannot access the file", dst)
        real_replace(src, dst)

    monkeypatch.setattr(safefs_pathwrite.os, "replace", replace)
    safefs_write.write_text(memory, "MEMORY.md", "new\n")
    assert (memory / "MEMORY.md").read_text() == "new\n"
    refusals[0] = 99
    with pytest.raises(PermissionError):
        safefs_write.write_text(memory, "MEMORY.md", "newer\n")
    assert (memory / "MEMORY.md").read_text() == "new\n" and [p.name for p in memory.iterdir()] == ["MEMORY.md"]


def test_on_windows_the_lock_is_one_byte_far_past_the_content_and_the_position_is_kept(monkeypatch, tmp_path):
    """Without fcntl the lock is msvcrt.locking (a fake here that keeps Windows' rules: one holder per byte range, and
    a held range refuses reads by others, so it must not cover the lock file's own bytes)."""
    import errno
    import sys
    import types

    held: dict[int, int] = {}  # locked offset -> fd holding it

    def locking(fd, mode, nbytes):
        where = os.lseek(fd, 0, os.SEEK_CUR)
        assert nbytes == 1 and where == portalock.LOCK_OFFSET
        if mode == fake.LK_UNLCK:
            assert held.pop(where) == fd
        elif where in held:
            raise OSError(errno.EACCES, "Permission denied")
        else:
            held[where] = fd

    fake = types.SimpleNamespace(LK_UNLCK=0, LK_NBLCK=2, locking=locking)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(portalock, "fcntl", None)
    path = tmp_path / "lock"
    path.write_bytes(b"\n")
    first, second = os.open(path, os.O_RDWR), os.open(path, os.O_RDWR)
    try:
        os.lseek(first, 1, os.SEEK_SET)
        assert portalock.try_lock(first) and os.lseek(first, 0, os.SEEK_CUR) == 1
        assert not portalock.try_lock(second)
        portalock.unlock(first)
        assert portalock.try_lock(second)
        portalock.unlock(second)
    finally:
        os.close(first)
        os.close(second)
