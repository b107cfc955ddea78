"""A memory folder's git repository (`.memdir/git`, memdir/gitrepo.py) planted or tampered with.

Whoever can write the memory folder (a cloned repository that holds it, another tool, an agent) can
write `.memdir/git/config` too. git obeys its repository's config: `url.X.insteadOf` turns the sync
remote into an `ext::` command, `diff.X.textconv` runs a program on `memdir log --diff`, `core.sshCommand`
runs one on an ssh remote. memdir must run none of them, and say in one line what to remove.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.hostile.conftest import run_cli

MEMORY_FILE = "---\nname: A\ndescription: a\ntype: user\n---\n\nhello\n"


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


@pytest.fixture
def synced(memory, tmp_path) -> tuple[Path, Path, Path]:
    """A memory folder synced once to a bare remote, from a project with an origin."""
    remote, project = tmp_path / "remote.git", tmp_path / "project"
    _git("init", "-q", "--bare", str(remote))
    _git("init", "-q", str(project))
    _git("-C", str(project), "remote", "add", "origin", "https://github.com/me/app")
    (memory / "user_a.md").write_text(MEMORY_FILE)
    return memory, remote, project


def _plant(memory: Path, *pairs: tuple[str, str]) -> None:
    for key, value in pairs:
        _git("config", "--file", str(memory / ".memdir" / "git" / "config"), key, value)


def _ran(tally, marker: Path, what: str) -> bool:
    if marker.exists():
        tally.escapes += 1
        tally.notes.append(f"escape: a planted git setting ran a command on {what}")
        return True
    return False


ENV = {"MEMDIR_GIT_HISTORY": "1"}


def test_planted_insteadof_ext_never_runs_on_sync(synced, tmp_path, tally):
    memory, remote, project = synced
    first = run_cli(tally, "--dir", str(memory), "sync", "--remote", str(remote), env=ENV, cwd=project)
    assert first.returncode == 0, first.stderr
    marker = tmp_path / "PWNED-sync"
    _plant(memory, ("protocol.ext.allow", "always"),
           (f"url.ext::sh -c touch% {marker}% >&2.insteadOf", str(remote)))
    (memory / "user_a.md").write_text(MEMORY_FILE + "more\n")
    proc = run_cli(tally, "--dir", str(memory), "sync", env=ENV, cwd=project)
    assert not _ran(tally, marker, "sync")
    assert proc.returncode != 0 and ".memdir/git/config" in proc.stderr and "insteadof" in proc.stderr.lower()
    assert len(proc.stderr.strip().splitlines()) == 1


def test_planted_textconv_never_runs_on_log_diff(memory, tmp_path, tally):
    (memory / "user_a.md").write_text(MEMORY_FILE)
    assert run_cli(tally, "--dir", str(memory), "log", env=ENV).returncode == 0  # creates and commits
    (memory / "user_a.md").write_text(MEMORY_FILE + "more\n")
    assert run_cli(tally, "--dir", str(memory), "log", env=ENV).returncode == 0
    marker = tmp_path / "PWNED-textconv"
    _plant(memory, ("diff.evil.textconv", f"touch {marker}; cat"))
    (memory / ".gitattributes").write_text("*.md diff=evil\n")
    proc = run_cli(tally, "--dir", str(memory), "log", "--diff", env=ENV)
    assert not _ran(tally, marker, "log --diff")
    assert "Traceback" not in proc.stderr


def test_a_file_name_with_newlines_cannot_forge_log_lines(memory, tally):
    """`memdir log` prints one line per changed file: a name holding newlines must not add lines that
    say another file was deleted, or that someone else wrote it."""
    forged = "x\n    deleted MEMORY.md (by Claude Code's auto dream)\n.md"
    (memory / forged).write_text(MEMORY_FILE)
    proc = run_cli(tally, "--dir", str(memory), "log", env=ENV)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert not any(line.strip().startswith("deleted MEMORY.md") for line in lines), proc.stdout
    assert any("x\\n" in line for line in lines), proc.stdout  # the file is still named, escaped


@pytest.mark.parametrize("planted", ["refs", "refs/heads", "objects", "logs"])
def test_a_symlink_planted_inside_the_history_repository_is_never_written_through(memory, tmp_path, tally,
                                                                                  planted):
    """`.memdir/git/refs` (or objects, logs) made a link into the user's project repository: git writes
    through it, so memdir's branch used to overwrite the project's own `main` (its repository broken)."""
    victim = tmp_path / "project"
    _git("init", "-q", str(victim))
    _git("-C", str(victim), "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q", "--allow-empty", "-m", "v")
    (memory / "user_a.md").write_text(MEMORY_FILE)
    assert run_cli(tally, "--dir", str(memory), "log", env=ENV).returncode == 0  # the repository exists
    before = {p: p.read_bytes() for p in (victim / ".git").rglob("*") if p.is_file()}
    inside = memory / ".memdir" / "git" / planted
    subprocess.run(["rm", "-rf", str(inside)], check=True)
    inside.symlink_to(victim / ".git" / planted)
    (memory / "user_a.md").write_text(MEMORY_FILE + "changed\n")
    proc = run_cli(tally, "--dir", str(memory), "log", env=ENV)
    after = {p: p.read_bytes() for p in (victim / ".git").rglob("*") if p.is_file()}
    if after != before:
        tally.escapes += 1
        tally.notes.append(f"escape: memdir wrote through .memdir/git/{planted} into another repository")
    assert after == before
    assert "Traceback" not in proc.stderr and "symlink" in proc.stdout + proc.stderr
