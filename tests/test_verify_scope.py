"""Which project memories are checked against (memdir.verify): never the memory folder itself, never a home
folder that is a git repository only because it keeps dotfiles."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.git_repos import git_in

MEMORY = ("---\nname: deploy\ndescription: deploying goes through the old helper\nmetadata:\n  type: project\n---\n\n"
          "Deploys call `gone_function()` in `src/old_module.py`; `real_func()` reads the config.\n")


@pytest.fixture
def synced_memory(tmp_path):
    """A memory folder that is itself a git repository (`memdir sync` makes it one), holding one memory whose
    function and path are in no project at all."""
    memory = tmp_path / "memory"
    (memory / "notes").mkdir(parents=True)
    (memory / "project_deploy.md").write_text(MEMORY, encoding="utf-8")
    git_in(memory, "init", "-q")
    git_in(memory, "add", "-A")
    git_in(memory, "commit", "-qm", "memories")
    return memory


@pytest.mark.parametrize("how", ["--project", "--cwd", "--cwd below"])
def test_verify_with_the_memory_folder_as_the_project_says_there_is_no_code(synced_memory, cli, how):
    """Checked against itself, the memory vouched for `gone_function` (written in it) and read as stale for
    `src/old_module.py` (not in the memory folder): every memory naming a path was reported stale."""
    memory = synced_memory
    where = (["--dir", str(memory), "verify", "--project", str(memory)] if how == "--project" else
             ["--cwd", str(memory / "notes" if how == "--cwd below" else memory), "--dir", str(memory), "verify"])
    code, out, _ = cli(*where)
    assert code == 0, out
    assert out.count("\n") == 1 and "no project code to verify against" in out and "stale" not in out
    code, out, _ = cli(*where, "--json")
    report = json.loads(out)
    assert code == 0 and report["stale"] == 0 and report["memories"] == {}
    assert "no project code to verify against" in report["note"]


def test_doctor_in_the_memory_folder_reports_no_stale_memory(synced_memory, cli, monkeypatch):
    monkeypatch.chdir(synced_memory)
    _, out, _ = cli("--dir", str(synced_memory), "doctor", "--json")
    assert json.loads(out)["stale_memories"] == 0
    _, out, _ = cli("--dir", str(synced_memory), "doctor")
    assert "is not in the code" not in out


def test_recalled_header_makes_no_claim_when_the_project_is_the_memory_folder(synced_memory):
    """The warm server checks what it recalls against the hook's cwd: in the memory folder, no line saying the
    path is gone (it never was in a project) or that the function is still there (only the memory says so)."""
    from memdir.stages.recall import server

    memory = synced_memory
    reply = server.handle({"memory_dir": str(memory), "query": "how do deploys work, which helper do they call?",
                           "engine": "offline", "cwd": str(memory), "env": {"MEMDIR_PATH": str(memory)}})
    assert reply["selected"] == ["project_deploy.md"]
    assert "is not in the project" not in reply["context"] and "still there" not in reply["context"]
    assert "Checked against the current code" not in reply["context"]


def test_background_check_keeps_no_verdict_found_in_the_memory_folder(synced_memory):
    from memdir.verdicts import Rechecker, Verdicts

    kept = Verdicts()
    checker = Rechecker(kept, budget_s=2)
    root = str(synced_memory)
    checker.later(root, root, ["project_deploy.md"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (checker._queue or not checker._checked):
        time.sleep(0.02)
    time.sleep(0.2)  # the batch taken off the queue is checked (or skipped) just after
    assert kept.get(root, "gone_function") is None and kept.get(f"{root}\0.", "gone_function") is None
    assert not kept._kept


def test_a_memory_folder_inside_the_project_is_still_checked_without_itself(tmp_path):
    """The line drawn: the project at the memory folder, or a folder inside it that is no checkout of its own,
    holds no code; a memory folder inside the project (an agent's project-scope memory) leaves the rest of the
    project to check against."""
    from memdir.verify import holds_no_code

    project = tmp_path / "project"
    (project / ".claude" / "agent-memory" / "x").mkdir(parents=True)
    assert not holds_no_code(project / ".claude" / "agent-memory" / "x", str(project))
    assert holds_no_code(project, str(project)) and holds_no_code(project, str(project / ".claude"))
    assert not holds_no_code(tmp_path / "elsewhere", str(project))
    checkout = project / "vendor" / "lib"  # a checkout of its own kept inside a folder used as memory
    (checkout / ".git").mkdir(parents=True)
    assert not holds_no_code(project, str(checkout))
    os.symlink(project, tmp_path / "link")
    assert holds_no_code(tmp_path / "link", str(project))


@pytest.fixture
def dotfiles_home(tmp_path, monkeypatch):
    """A home folder that is a git repository (dotfiles), with a project of no repository of its own in it, and
    elsewhere in the home a file that happens to give a name the project no longer has."""
    home = tmp_path / "home"
    app = home / "code" / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "old_module.py").write_text("def real_func():\n    pass\n", encoding="utf-8")
    (home / "Downloads").mkdir()
    (home / "Downloads" / "notes.txt").write_text("gone_function was renamed\n", encoding="utf-8")
    git_in(home, "init", "-q")
    monkeypatch.setenv("HOME", str(home))
    return home, app


def test_a_dotfiles_home_is_not_the_project_its_memories_are_checked_against(dotfiles_home, cli, tmp_path):
    """Checked against the whole home, `src/old_module.py` (the project's) read as gone (there is no
    ~/src/old_module.py) and `gone_function` as still there (a download names it); `git ls-files` or the walk
    went through every file of the home."""
    home, app = dotfiles_home
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_deploy.md").write_text(MEMORY, encoding="utf-8")
    code, out, _ = cli("--cwd", str(app), "--dir", str(memory), "verify", "--json")
    report = json.loads(out)
    assert report["project"] == str(app)
    assert report["memories"]["project_deploy.md"]["gone"] == ["`gone_function` is not in the code"]
    assert set(report["memories"]["project_deploy.md"]["found"]) == {"src/old_module.py", "real_func"}


def test_a_dotfiles_home_keys_the_memory_folder_as_claude_code_does_but_not_the_project(dotfiles_home):
    """Claude Code walks up to the first `.git` for the memory folder's key (its findGitRoot), so the home's
    key stays memdir's too (one shared folder); the project's own settings, agent memory and code are its
    folder's: Claude Code reads project settings from the folder it started in."""
    from memdir import enablement, locate, paths

    home, app = dotfiles_home
    assert locate.resolve(str(app)).path == os.path.join(str(home), ".claude", "projects",
                                                        locate.sanitize(os.path.realpath(home)), "memory")
    assert locate.project_root(str(app)) == os.path.realpath(app)
    assert paths.project_root(app) == app.resolve()
    assert locate.project_root(str(home)) == os.path.realpath(home)  # in the home itself: the home's repository
    (app / ".claude").mkdir()
    (app / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}', encoding="utf-8")
    assert enablement.memory_enabled(str(app), env={"HOME": str(home)}).enabled is False


def test_a_repository_of_its_own_in_a_dotfiles_home_is_still_the_project(dotfiles_home):
    from memdir import locate
    from memdir.project_files import project_root

    home, app = dotfiles_home
    git_in(app, "init", "-q")
    assert locate.project_root(str(app / "src")) == os.path.realpath(app)
    assert project_root(str(app / "src")) == str(app)


def test_a_relative_or_empty_home_names_no_home_repository(dotfiles_home, monkeypatch):
    """HOME="" or a relative HOME names no folder: the repository above the project stays its project's."""
    from memdir import locate

    home, app = dotfiles_home
    for odd in ("", "."):
        monkeypatch.setenv("HOME", odd)
        monkeypatch.chdir(app)
        assert locate.project_root(str(app)) == os.path.realpath(home)
