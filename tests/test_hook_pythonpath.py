"""The hook process Claude Code starts with the user's environment: a PYTHONPATH with an empty entry (`:/x` or `/x:`)
puts the working folder, the session's project, on sys.path ahead of the standard library, whatever -P says. A module
the project holds under a name the hook imports (`enum.py`, `encodings/`, `memdir/`) then ran in memdir's place on
every event. memdir.prompt_scope.child_env guards the processes the hook starts; these guard the hook itself."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from memdir.entry.install import _command

# posix alone: a planted `encodings` runs while the interpreter starts, before `open` exists
PLANTED = "import posix; posix.close(posix.open(__file__ + '.ran', posix.O_CREAT | posix.O_WRONLY))\n"


@pytest.mark.parametrize("planted", ["enum.py", "encodings/__init__.py", "memdir/__init__.py"])
@pytest.mark.parametrize("pythonpath", [":/nowhere", "/nowhere:", ".", ""])
@pytest.mark.parametrize("other", [False, True])
def test_no_module_planted_in_the_project_runs_in_the_hook(tmp_path, planted, pythonpath, other):
    """A module under a name the hook imports (at startup, first, or at once), leaving `<its file>.ran` when it runs;
    in both forms install writes: this Python's (without `site`) and another Python's (`--python`, with it)."""
    project = tmp_path / "project"
    (project / planted).parent.mkdir(parents=True)
    (project / planted).write_text(PLANTED)
    python = None
    if other:  # "another" Python: this one behind a script, so the command takes the other form and still runs here
        python = str(tmp_path / "python3")
        with open(python, "w") as script:
            script.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        os.chmod(python, 0o755)
    (tmp_path / "memory").mkdir()
    command = _command(python, "UserPromptSubmit", "")
    assert ("-S" in command) != other
    env = {**os.environ, "PYTHONPATH": pythonpath, "MEMDIR_PATH": str(tmp_path / "memory"), "MEMDIR_ENGINE": "offline",
           "MEMDIR_RECALL_SERVER": "0", "HOME": str(tmp_path / "home")}  # recall in this process: re, enum
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": "how to deploy"}
    done = subprocess.run(["sh", "-c", command], cwd=project, input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)
    assert sorted(p.name for p in project.rglob("*.ran")) == []
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_doctor_names_a_hook_registered_without_E_until_install_runs_again(cli, isolated_home, tmp_path):
    from memdir.entry.install import LAUNCH, exposed_hooks, install

    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = shlex.join([sys.executable, "-S", "-P", "-c", LAUNCH]) + " hook stop"  # registered until 2026-11-27
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": before}]}]}}))
    memory = tmp_path / "memory"
    memory.mkdir()
    assert exposed_hooks() == [(str(path), before)]
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert f"`{before}` reads PYTHONPATH" in out and "run `memdir install` to register the command with -E" in out
    install("user")
    assert exposed_hooks() == []
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert "reads PYTHONPATH" not in out
