"""Git repositories for tests: git run with a fixed identity, and a bare repository to add worktrees to."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(*args: str, cwd: Path) -> None:
    """`git ARGS` in `cwd`, committing as a fixed identity, local file clones allowed (submodules)."""
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "protocol.file.allow=always", *args],
                   cwd=cwd, check=True, capture_output=True, timeout=30)


def git_in(repo: Path, *args: str) -> None:
    """`git -C repo ARGS` with nothing of the machine's git configuration: a bare PATH, HOME the repository."""
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(repo)})


def bare_repository(tmp_path: Path) -> Path:
    """`tmp_path/app.git`, a bare clone of a repository with one commit: `git worktree add` works from it."""
    source = tmp_path / "source"
    source.mkdir()
    git("init", "-q", cwd=source)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=source)
    git("clone", "-q", "--bare", str(source), str(tmp_path / "app.git"), cwd=tmp_path)
    return tmp_path / "app.git"
