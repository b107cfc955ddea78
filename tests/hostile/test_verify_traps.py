"""`memdir verify` against a repository that tracks FIFOs and devices (issue 22, finding 10).

A tracked symlink to a FIFO hung `verify` (opening a FIFO for reading blocks until a writer comes).
Here every file verify opens on its own (`.gitignore`, Makefile, justfile, package.json) and every
tracked file it searches is, in turn, a FIFO, a symlink to one, or a symlink to a device. verify
runs as a real process with a time limit (the hang guard) and must finish with its usual report,
checking the memory's names against the regular files that remain.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.hostile.conftest import run_cli

MEMORY = ("---\nname: Build\ndescription: how we build\ntype: project\n---\n"
          "Run `make build` and `npm run lint`; the entry point is `app.py`, calling `start_server()`.\n\n"
          "**Why:** x\n**How to apply:** y\n")


def _trapped_project(root, *, fifo_gitignore: bool):
    root.mkdir()
    (root / "app.py").write_text("def start_server():\n    pass\n")
    pipes = root / "pipes"
    pipes.mkdir()
    os.mkfifo(pipes / "fifo")
    (root / "pipe.py").symlink_to(pipes / "fifo")  # the finding: a tracked symlink to a FIFO
    (root / "zero.py").symlink_to("/dev/zero")
    (root / "tty.py").symlink_to("/dev/tty")
    for name in ("Makefile", "justfile") + ((".gitignore",) if fifo_gitignore else ()):
        os.mkfifo(root / name)
    (root / "package.json").symlink_to(pipes / "fifo")
    return root


@pytest.fixture(params=["git", "walk"])
def repo(request, hostile_home):
    """A git repository tracking the traps (verify reads `git ls-files`), or a plain folder (verify walks
    it and reads .gitignore itself, here a FIFO too: git would block on that one, so not in the repo)."""
    if request.param == "walk":
        return _trapped_project(hostile_home / "tree", fifo_gitignore=True)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = _trapped_project(hostile_home / "repo", fifo_gitignore=False)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env, timeout=30)
    subprocess.run(["git", "-C", str(root), "add", "app.py", "pipe.py", "zero.py", "tty.py", "package.json"],
                   check=True, env=env, timeout=30)
    return root


@pytest.mark.parametrize("extra", [(), ("--record",), ("--json",)])
def test_verify_never_opens_a_fifo_or_device(repo, memory, tally, extra):
    (memory / "project_build.md").write_text(MEMORY)
    proc = run_cli(tally, "--dir", str(memory), "verify", "--project", str(repo), *extra, timeout=60)
    assert proc.returncode != -9, "verify hung"
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    if "--json" in extra:
        found = json.loads(proc.stdout)["memories"]["project_build.md"]
        assert "app.py" in found["found"] and "start_server" in found["found"], found  # read from the regular file
        assert not [g for g in found["gone"] if "app.py" in g or "start_server" in g], found
    else:
        assert "1 memories checked" in proc.stdout and "app.py" not in proc.stdout, proc.stdout
    assert tally.hangs == 0 and tally.tracebacks == 0


def test_read_project_file_refuses_what_is_not_a_regular_file(repo):
    from memdir.verify import read_project_file

    assert read_project_file(str(repo / "app.py")) == b"def start_server():\n    pass\n"
    for name in ("pipe.py", "zero.py", "tty.py", "Makefile", "justfile", "package.json", "pipes", "missing.py", "a\0b"):
        assert read_project_file(str(repo / name)) is None, name


def test_verify_never_reads_through_a_symlink_out_of_the_project(hostile_home, memory, tally):
    """A repository tracking `notes.txt -> ../outside/secret.txt`: verify followed it and searched the file outside
    the project (a memory naming a word of it read "still there", an oracle on any file the user can read)."""
    outside = hostile_home / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the key zebra_unique_token is here\n")
    root = hostile_home / "linked"
    root.mkdir()
    (root / "app.py").write_text("def start_server():\n    pass\n")
    (root / "notes.txt").symlink_to(outside / "secret.txt")
    (root / "inside.txt").symlink_to(root / "app.py")  # a link inside the project: app.py is read anyway
    if shutil.which("git"):
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["git", "init", "-q", str(root)], check=True, env=env, timeout=30)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env, timeout=30)
    (memory / "project_zebra.md").write_text("---\nname: Zebra\ndescription: d\ntype: project\n---\n"
                                             "The helper `zebra_unique_token` calls `start_server()`.\n")
    proc = run_cli(tally, "--dir", str(memory), "verify", "--project", str(root), "--json", timeout=60)
    found = json.loads(proc.stdout)["memories"]["project_zebra.md"]
    assert "start_server" in found["found"] and "zebra_unique_token" not in found["found"], found


def test_a_path_a_memory_names_outside_the_project_is_never_looked_up(hostile_home, memory, tally):
    """`../outside/secret.txt` in a memory: verify checked whether it exists outside the project and said "still
    there" or "gone", an oracle on the user's files. It names no file of the project: not checked."""
    (hostile_home / "outside").mkdir()
    (hostile_home / "outside" / "secret.txt").write_text("x\n")
    root = hostile_home / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (memory / "project_paths.md").write_text("---\nname: Paths\ndescription: d\ntype: project\n---\n"
                                             "See `../outside/secret.txt` and `src/app.py`.\n")
    proc = run_cli(tally, "--dir", str(memory), "verify", "--project", str(root), "--json", timeout=60)
    found = json.loads(proc.stdout)["memories"]["project_paths.md"]
    assert found["found"] == ["src/app.py"] and found["gone"] == [], found
    assert found["unchecked"] == ["../outside/secret.txt"], found
