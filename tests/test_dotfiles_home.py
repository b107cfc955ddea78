"""A home folder that is a git repository (dotfiles) and a project in it with no repository of its own.

Claude Code keys the memory folder by the home's repository (the first `.git` above the folder it starts in), so
memdir shares that folder; but the project is the folder itself (memdir.locate.home_repository, one rule): `memdir
sync` names it across machines, and the MCP server's decision tools read its journal, as the hooks and the CLI do.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest

from memdir import constants as C, locate, syncconfig
from memdir.entry.cli import main

MEMORY = "---\nname: deploy\ndescription: how we ship\ntype: project\n---\nShip on Fridays.\n"


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


@pytest.fixture
def dotfiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(home, project, memory folder): the home a git repository with its own remote, the project a folder in it
    with none, the memory folder where Claude Code keeps the project's memory (keyed by the home)."""
    home = (tmp_path / "home").resolve()
    app = home / "code" / "app"
    app.mkdir(parents=True)
    _git(home, "init", "-q")
    _git(home, "remote", "add", "origin", "git@github.com:me/dotfiles.git")
    monkeypatch.setenv("HOME", str(home))
    memory = Path(locate.resolve(str(app)).path)
    assert memory.parent.name == locate.sanitize(str(home))  # Claude Code's folder: the home keys it
    return home, app, memory


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_sync_names_the_project_not_the_home_and_never_touches_the_homes_repository(
        dotfiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`memdir sync` took the home as the project: it read the home's `.git/config` and pushed the project's
    memory to the branch of the user's dotfiles remote (`memdir/github.com-me-dotfiles-...`), while the Stop
    worker's background sync took the project itself and failed at every session ('has no git remote')."""
    from memdir.gitsync import background_sync
    from memdir.paths import project_root

    home, app, memory = dotfiles
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text(MEMORY)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    read: list[Path] = []
    real_remote = syncconfig.project_remote
    monkeypatch.setattr(syncconfig, "project_remote", lambda root: read.append(Path(root)) or real_remote(root))
    home_git = _files(home / ".git")
    cli = ["--cwd", str(app), "sync", "--remote", str(remote)]

    assert main(cli) == 1
    err = capsys.readouterr().err
    assert str(app) in err and "--project NAME" in err and err.count("\n") == 1
    assert "git remote add" not in err  # run in the project, it would add a remote to the home's repository
    assert not (memory / C.STATE_DIRNAME).exists()  # nothing changed
    assert main([*cli, "--project", "app"]) == 0
    assert "pushed" in capsys.readouterr().out
    branches = subprocess.run(["git", "--git-dir", str(remote), "for-each-ref", "--format=%(refname)"],
                              capture_output=True, text=True, check=True).stdout.split()
    assert branches == [f"refs/heads/{syncconfig.branch_for('app')}"]
    monkeypatch.setenv(syncconfig.AUTO_SYNC_ENV, "1")
    assert "nothing to push" in str(background_sync(memory, project_root(app)))  # the worker: the same branch
    assert home not in read and _files(home / ".git") == home_git


@pytest.mark.parametrize("opt_in", ["environment", "folder config"])
def test_the_mcp_decision_tools_read_the_journal_the_cli_and_hooks_write(
        dotfiles, opt_in: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """With OrchestKit's layout on, `memdir remember` and the prompt hook use the project's
    `.claude/memory/decisions.jsonl`; `memdir mcp` took the home as the project and read `~/.claude/memory/`
    (opted in by the environment) or, as the memory folder lies inside the home, ignored the folder's
    `orchestkit_compat` and read the memory folder's own journal: recent_decisions said 'No decisions recorded
    yet'. It also warned '<home> is not a project' though Claude Code started it in the project."""
    from memdir.entry import mcp_server

    home, app, memory = dotfiles
    if opt_in == "environment":
        monkeypatch.setenv(C.ORCHESTKIT_COMPAT_ENV, "1")
    else:
        syncconfig.save_config(memory, {C.ORCHESTKIT_COMPAT_KEY: True})
    assert main(["--cwd", str(app), "remember", "We chose Postgres over MySQL because one database is simpler",
                 "--success"]) == 0
    assert (app / C.ORCHESTKIT_DECISIONS_DIR / C.DECISIONS_JOURNAL).is_file()
    served: dict[str, object] = {}
    monkeypatch.setattr(mcp_server, "serve", lambda folder, **kw: served.update(folder=folder, **kw))
    monkeypatch.setenv(C.PROJECT_DIR_ENV, str(app))  # as Claude Code starts an MCP server
    capsys.readouterr()

    assert main(["mcp"]) == 0
    assert "not a project" not in capsys.readouterr().err
    server = mcp_server.build_server(served["folder"], project=served["project"])
    answer = anyio.run(server.call_tool, "recent_decisions", {})
    assert "We chose Postgres over MySQL" in str(answer)
    assert not (home / ".claude" / "memory").exists()


def test_mcp_started_in_the_home_itself_still_warns(dotfiles, monkeypatch, capsys) -> None:
    from memdir.entry import mcp_server

    home, _, _ = dotfiles
    monkeypatch.setattr(mcp_server, "serve", lambda folder, **kw: None)
    assert main(["--cwd", str(home), "mcp"]) == 0
    assert f"{home} is not a project" in capsys.readouterr().err


def test_in_a_subfolder_of_a_repository_sync_and_mcp_take_the_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other case of a folder without `.git`: a subfolder of an ordinary repository (no dotfiles home). The
    repository is the project for sync (its remote names it) and for the decision tools, as it keys the folder."""
    from memdir import gitsync
    from memdir.entry import mcp_server

    repo = (tmp_path / "repo").resolve()
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    _git(repo, "init", "-q")
    taken: dict[str, object] = {}
    monkeypatch.setattr(gitsync, "sync", lambda folder, root, **kw: taken.update(sync=root) or gitsync.SyncResult("u", "b"))
    monkeypatch.setattr(mcp_server, "serve", lambda folder, **kw: taken.update(mcp=kw["project"]))
    assert main(["--cwd", str(sub), "sync"]) == 0
    assert main(["--cwd", str(sub), "mcp"]) == 0
    assert taken == {"sync": repo, "mcp": repo} and locate.resolve(str(sub)).project_root == str(repo)


@pytest.mark.parametrize("dotfiles_repository", [True, False])
def test_in_the_home_itself_the_memory_folders_own_config_still_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        dotfiles_repository: bool) -> None:
    """Started in the home folder (a dotfiles repository or no repository), the project is the home and the
    memory folder (~/.claude/projects/...) lies inside it. The folder's `orchestkit_compat` was ignored there as a
    file a cloned repository could have planted, while its `sync_remote` counted: one rule, two answers. A folder
    under the user's own config home came from no repository; both now read it."""
    home = (tmp_path / "home").resolve()
    home.mkdir()
    if dotfiles_repository:
        _git(home, "init", "-q")
    monkeypatch.setenv("HOME", str(home))
    memory = Path(locate.resolve(str(home)).path)
    syncconfig.save_config(memory, {C.ORCHESTKIT_COMPAT_KEY: True, syncconfig.PROJECT_KEY: "home"})
    assert syncconfig.configured(memory, home, syncconfig.PROJECT_KEY) == "home"
    assert main(["--cwd", str(home), "remember", "We chose Postgres over MySQL because one database is simpler",
                 "--success"]) == 0
    assert str(home / C.ORCHESTKIT_DECISIONS_DIR / C.DECISIONS_JOURNAL) in capsys.readouterr().out
