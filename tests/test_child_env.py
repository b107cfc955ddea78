"""The Python processes memdir starts (the Stop worker, the warm recall server, the token store's filler) never
import a module of the project they were started from: each runs with -P, and an empty or `.` entry in PYTHONPATH
must not put the working directory (Claude Code's: the project) back on sys.path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import constants as C

PROBE = "memdir_planted_probe"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / f"{PROBE}.py").write_text("print('PLANTED')\n", encoding="utf-8")
    return project


def _spawned(site: str, project: Path, tmp_path: Path, monkeypatch) -> tuple[list[str], dict[str, str]]:
    """The argv and environment `site` starts its child with (posix_spawn, or Popen where it is missing)."""
    seen: list[tuple[list[str], dict[str, str]]] = []

    def spawn(path, argv, env, **kwargs):
        seen.append((list(argv), dict(env)))
        return 1

    monkeypatch.setattr(os, "posix_spawn", spawn)
    monkeypatch.chdir(project)
    if site in ("worker", "worker-popen"):
        from memdir.entry.hooks import HookPayload, stop_output

        if site == "worker-popen":  # Windows
            monkeypatch.delattr(os, "posix_spawn")
            monkeypatch.setattr(subprocess, "Popen", lambda argv, env=None, **k: seen.append(
                (list(argv), dict(os.environ if env is None else env))))
        stop_output(HookPayload(session_id="s", transcript_path=str(tmp_path / "t.jsonl"), cwd=str(project),
                                hook_event_name="Stop"))
    elif site == "server":
        from memdir.stages.recall import server_socket

        monkeypatch.setattr(server_socket, "socket_path", lambda env=None: str(tmp_path / "run" / "recall.sock"))
        monkeypatch.setattr(server_socket, "make_private_folder", lambda path: True)
        assert server_socket.start_in_background()
    else:
        from memdir.stages.recall import token_store

        folder = tmp_path / "memory"
        (folder / C.STATE_DIRNAME / "cache").mkdir(parents=True)
        monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
        assert token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)
    monkeypatch.undo()  # subprocess.Popen and os.posix_spawn back for the probe
    [(argv, env)] = seen
    return argv, env


@pytest.mark.parametrize("site", ["worker", "worker-popen", "server", "filler"])
@pytest.mark.parametrize("pythonpath", [":{x}", "{x}:", "{x}::{y}", ".{sep}{x}", "./"])
def test_no_child_imports_a_module_planted_in_the_project(tmp_path, monkeypatch, site, pythonpath):
    """`PYTHONPATH=:/x` (or `/x:`, `.`) puts the working directory on sys.path whatever -P says: a project's own
    `json.py` or `enum.py` ran in the worker's place, and a planted `encodings` package even before the filler's
    first line. The children get PYTHONPATH without such entries, every other entry kept in its order."""
    project = _project(tmp_path)
    x, y = tmp_path / "x", tmp_path / "y"
    monkeypatch.setenv("PYTHONPATH", pythonpath.format(x=x, y=y, sep=os.pathsep).replace(":", os.pathsep))
    argv, env = _spawned(site, project, tmp_path, monkeypatch)
    flags = [arg for arg in argv[1:5] if arg in ("-S", "-P")]  # after -X utf8
    assert "-P" in flags
    probe = subprocess.run([sys.executable, *flags, "-c", f"import {PROBE}"], env=env, cwd=project,
                           capture_output=True, text=True, timeout=60)
    assert "PLANTED" not in probe.stdout and probe.returncode != 0, probe.stdout
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    assert kept == [str(p) for p in (x, y) if str(p) in pythonpath.format(x=x, y=y, sep=os.pathsep)]


@pytest.mark.parametrize("site", ["worker", "server", "filler"])
@pytest.mark.parametrize("pythonpath", ["src", "src{sep}{x}", "{project}", "{project}/src{sep}{x}"])
def test_no_child_imports_through_an_entry_naming_the_project(tmp_path, monkeypatch, site, pythonpath):
    """A relative PYTHONPATH entry (`src`, what a src-layout project exports) is resolved against the working
    directory the child starts in: the project's, as is `$PWD` or `$PWD/src` written out. Each put the project's
    own modules before the standard library's in the worker, the server and the filler; they are dropped too."""
    project = _project(tmp_path)
    (project / "src").mkdir()
    (project / "src" / f"{PROBE}.py").write_text("print('PLANTED')\n", encoding="utf-8")
    x = tmp_path / "x"
    monkeypatch.setenv("PYTHONPATH", pythonpath.format(x=x, project=project, sep=os.pathsep))
    argv, env = _spawned(site, project, tmp_path, monkeypatch)
    flags = [arg for arg in argv[1:5] if arg in ("-S", "-P")]  # after -X utf8
    probe = subprocess.run([sys.executable, *flags, "-c", f"import {PROBE}"], env=env, cwd=project,
                           capture_output=True, text=True, timeout=60)
    assert "PLANTED" not in probe.stdout and probe.returncode != 0, probe.stdout
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    assert kept == ([str(x)] if "{x}" in pythonpath else [])


def test_the_filler_does_not_copy_the_project_back_onto_its_path(tmp_path, monkeypatch):
    """The filler starts with -S and sets sys.path to the hook's own. A hook started with `PYTHONPATH=:/x` (or
    `src`) has the project on its sys.path: copied as it was, the filler imported the project's `memdir` (or
    `json`) right after child_env had kept it off at startup."""
    project = _project(tmp_path)
    planted = project / "memdir"
    planted.mkdir()
    (planted / "__init__.py").write_text("print('PLANTED')\nraise SystemExit(3)\n", encoding="utf-8")
    x = tmp_path / "x"
    monkeypatch.setenv("PYTHONPATH", f"{os.pathsep}{x}")
    monkeypatch.setattr(sys, "path", [str(project), str(x), *sys.path])  # as the hook's startup made it
    argv, env = _spawned("filler", project, tmp_path, monkeypatch)
    run = subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True, timeout=60)
    assert "PLANTED" not in run.stdout, run.stdout


def test_memdirs_own_folder_named_in_pythonpath_stays_when_it_is_the_project(monkeypatch):
    """Working on memdir itself from its checkout, run through PYTHONPATH: that folder is the project and memdir's
    own, and a child without it could not import memdir at all."""
    from memdir.prompt_scope import child_env

    own = os.path.dirname(os.path.dirname(os.path.abspath(C.__file__)))
    monkeypatch.chdir(own)
    monkeypatch.setenv("PYTHONPATH", f"{own}{os.pathsep}{os.pathsep}{os.path.join(own, 'tests')}")
    assert child_env(os.environ)["PYTHONPATH"] == own


@pytest.mark.parametrize("site", ["worker", "server"])
@pytest.mark.parametrize("base", [".local", "{project}/.local"])
def test_no_child_runs_a_pth_file_of_a_user_base_in_the_project(tmp_path, monkeypatch, site, base):
    """The worker and the server run `site`, which reads the user site under PYTHONUSERBASE: relative (`.local`, as
    a Makefile or direnv sets it) or written out below the project, its .pth files and usercustomize.py were the
    project's, and ran at the child's start. Such a PYTHONUSERBASE is dropped (the user's own ~/.local stays)."""
    project = _project(tmp_path)
    import sysconfig

    user_site = sysconfig.get_path("purelib", f"{os.name}_user", vars={"userbase": str(project / ".local")})
    os.makedirs(user_site)
    Path(user_site, "planted.pth").write_text("import sys; print('PLANTED')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONUSERBASE", base.format(project=project))
    monkeypatch.delenv("PYTHONNOUSERSITE", raising=False)
    argv, env = _spawned(site, project, tmp_path, monkeypatch)
    probe = subprocess.run([sys.executable, "-P", "-c", "pass"], env=env, cwd=project, capture_output=True, text=True,
                           timeout=60)
    assert "PLANTED" not in probe.stdout
    assert "PYTHONUSERBASE" not in env
