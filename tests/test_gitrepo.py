"""The memory folder's git history (memdir/gitrepo.py, memdir/gitcommit.py): layout, isolation, the secret guard, symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memdir import gitcommit, gitrepo, safefs_write

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _all_objects(folder: Path) -> bytes:
    """Every object in the repository, reachable or not: what a push or a copy of .memdir/git could leak."""
    return gitrepo.run(folder, "cat-file", "--batch-all-objects", "--batch").stdout


def _tree(folder: Path) -> dict[str, bytes]:
    files = gitrepo.committed_files(folder, gitrepo.head(folder))
    return {path: gitrepo.read_blob(folder, blob) for path, blob in files.items()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [deploy](deploy.md)\n")
    (root / "deploy.md").write_text("---\nname: deploy\n---\nship on fridays\n")
    return root


def test_first_commit_creates_the_repository_and_tracks_only_memory_files(folder: Path) -> None:
    (folder / "team").mkdir()
    (folder / "team" / "ops.md").write_text("team note\n")
    (folder / "agent-x").mkdir()
    (folder / "agent-x" / "notes.md").write_text("agent note\n")
    (folder / ".memdir" / "history").mkdir(parents=True)
    (folder / ".memdir" / "history" / "old.md").write_text("state\n")
    (folder / "logs" / "2026").mkdir(parents=True)
    (folder / "logs" / "2026" / "01.md").write_text("daily log\n")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "x.md").write_text("hidden\n")
    (folder / "notes.txt").write_text("not markdown\n")

    result = gitcommit.commit(folder, "import")

    assert result.error is None and result.commit
    assert (folder / ".memdir" / "git" / "HEAD").is_file()
    assert sorted(_tree(folder)) == ["MEMORY.md", "agent-x/notes.md", "deploy.md", "team/ops.md"]
    assert not list((folder / ".memdir" / "git").glob("hooks/*"))
    assert not [p for p in (folder / ".memdir").iterdir() if ".tmp" in p.name]
    config = gitrepo.run(folder, "config", "--local", "--list").stdout.decode()
    assert "core.autocrlf=false" in config and "gc.pruneexpire=never" in config


def test_each_commit_says_what_changed_and_who(folder: Path) -> None:
    gitcommit.commit(folder, "start")
    (folder / "deploy.md").write_text("ship on mondays\n")
    (folder / "new.md").write_text("a new memory\n")
    (folder / "MEMORY.md").unlink()

    result = gitcommit.commit(folder, "between two hooks", author=gitcommit.ANOTHER_WRITER)

    assert (result.written, result.deleted) == (("deploy.md", "new.md"), ("MEMORY.md",))
    last = gitrepo.changes(folder, limit=1)[0]
    assert last.author == "another writer"
    assert last.message.splitlines() == ["between two hooks", "", "updated deploy.md", "created new.md",
                                         "deleted MEMORY.md"]
    assert {(f.status, f.path) for f in last.files} == {("M", "deploy.md"), ("A", "new.md"), ("D", "MEMORY.md")}
    assert gitcommit.commit(folder, "again").commit is None  # nothing changed: no empty commit
    assert len(gitrepo.changes(folder)) == 2


def test_paths_limit_the_commit_to_the_named_files(folder: Path) -> None:
    gitcommit.commit(folder, "start")
    (folder / "deploy.md").write_text("changed by memdir\n")
    (folder / "other.md").write_text("changed by someone else\n")

    result = gitcommit.commit(folder, "memdir's write", paths=["deploy.md", ".memdir/lock", "gone.md"])

    assert result.written == ("deploy.md",) and result.deleted == ()
    assert "other.md" not in _tree(folder)
    assert gitcommit.commit(folder, "sweep", author=gitcommit.ANOTHER_WRITER).written == ("other.md",)


def test_a_secret_on_disk_never_reaches_a_commit(folder: Path) -> None:
    gitcommit.commit(folder, "start")
    clean = (folder / "deploy.md").read_bytes()
    (folder / "deploy.md").write_text(f"the token is {TOKEN}\n")
    (folder / "leak.md").write_text(f"GITHUB_TOKEN={TOKEN}\n")

    result = gitcommit.commit(folder, "sweep")

    assert result.commit is None
    assert [path for path, _ in result.left_out] == ["deploy.md", "leak.md"]
    assert "secret" in result.describe() and TOKEN not in result.describe()
    assert _tree(folder)["deploy.md"] == clean  # the last clean version stays the committed one
    assert "leak.md" not in _tree(folder)
    (folder / "ok.md").write_text("fine\n")
    assert gitcommit.commit(folder, "more").written == ("ok.md",)
    assert TOKEN.encode() not in _all_objects(folder)


def test_symlinks_are_never_followed_or_committed(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("outside the memory folder\n")
    os.symlink(outside / "private.md", folder / "link.md")
    os.symlink(outside, folder / "team")

    gitcommit.commit(folder, "start")

    assert sorted(_tree(folder)) == ["MEMORY.md", "deploy.md"]
    assert b"outside the memory folder" not in _all_objects(folder)


def test_odd_file_names_and_bytes_round_trip(folder: Path) -> None:
    names = ['with space.md', 'quote"d.md', "ünïcode.md", "tab\there.md"]
    for name in names:
        (folder / name).write_bytes(b"crlf\r\nkept\r\n" + name.encode())
    gitcommit.commit(folder, "odd names")
    tree = _tree(folder)
    for name in names:
        assert tree[name] == b"crlf\r\nkept\r\n" + name.encode()


def test_the_users_git_setup_never_leaks_in(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    hooks = home / "hooks"
    hooks.mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-rewrite"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    (home / ".gitconfig").write_text(f"[user]\n\tname = Leaked\n[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n")
    elsewhere = tmp_path / "project.git"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(elsewhere))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Leaked")
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "index"))
    (folder / "deploy.md").write_bytes(b"line\r\n")

    result = gitcommit.commit(folder, "start")

    assert result.error is None
    assert not marker.exists() and not elsewhere.exists()
    assert gitrepo.changes(folder)[0].author == "memdir"
    assert _tree(folder)["deploy.md"] == b"line\r\n"


def test_missing_git_is_one_line_and_the_files_stay(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = gitcommit.commit(folder, "start")
    assert result.commit is None
    assert result.error and "git is not installed" in result.error and "\n" not in result.error
    assert (folder / "deploy.md").read_text().endswith("fridays\n")


def test_commit_waits_for_the_folder_lock(folder: Path) -> None:
    with safefs_write.locked(folder, ".memdir/lock"):
        result = gitcommit.commit(folder, "start", lock_timeout=0.1)
    assert result.error and "locked" in result.error
    assert gitcommit.commit(folder, "start").commit


def test_a_failed_git_leaves_the_branch_where_it_was(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = gitcommit.commit(folder, "start").commit
    (folder / "deploy.md").write_text("next\n")
    real_run = gitrepo.run

    def failing(memory_dir: Path, *args: str, **kwargs):  # fast-import killed mid-stream
        if args[0] == "fast-import":
            kwargs["input"] = kwargs["input"][: len(kwargs["input"]) // 2]
        return real_run(memory_dir, *args, **kwargs)

    monkeypatch.setattr(gitrepo, "run", failing)
    result = gitcommit.commit(folder, "half")
    monkeypatch.undo()
    assert result.error and result.commit is None
    assert gitrepo.head(folder) == first
    assert gitcommit.commit(folder, "again").written == ("deploy.md",)


def test_plain_git_can_read_the_history(folder: Path) -> None:
    gitcommit.commit(folder, "start")
    env = {"PATH": os.environ["PATH"], "GIT_DIR": str(folder / ".memdir" / "git"), "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(folder)}
    shown = subprocess.run(["git", "show", "main:deploy.md"], env=env, capture_output=True, check=True).stdout
    assert shown == (folder / "deploy.md").read_bytes()
