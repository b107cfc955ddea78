"""`memdir sync` (memdir/gitsync.py, memdir/gitmerge.py): two machines, a bare remote on local disk, no network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memdir import gitcommit, gitmerge, gitrepo, gitsync, syncconfig
from memdir.entry.cli import main

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class Machine:
    """One machine: its own Claude config folder, a checkout of the project somewhere, its memory folder."""

    def __init__(self, root: Path, checkout: str, origin: str) -> None:
        self.home = root / "claude"
        self.project = root / checkout
        self.project.mkdir(parents=True)
        (self.project / ".git").mkdir()  # all memdir reads of a checkout: a .git folder and its config
        (self.project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {origin}\n')
        self.memory = self.home / "projects" / str(self.project).replace("/", "-") / "memory"

    def write(self, name: str, text: str) -> None:
        path = self.memory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def read(self, name: str) -> str:
        return (self.memory / name).read_text()

    def sync(self, remote: Path | str | None = None) -> gitsync.SyncResult:
        return gitsync.sync(self.memory, self.project, remote=str(remote) if remote else None)

    def files(self) -> dict[str, bytes]:
        return {name: (self.memory / name).read_bytes() for name in gitrepo.disk_files(self.memory)}


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return bare


@pytest.fixture
def laptop(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "laptop", "code/app", "git@GitHub.com:Me/App.git")


@pytest.fixture
def desktop(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "desktop", "work/elsewhere/app-checkout", "https://github.com/Me/App")


def _remote_objects(bare: Path) -> bytes:
    return subprocess.run(["git", "--git-dir", str(bare), "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=True).stdout


def _remote_branches(bare: Path) -> list[str]:
    out = subprocess.run(["git", "--git-dir", str(bare), "for-each-ref", "--format=%(refname)"],
                         capture_output=True, check=True, text=True).stdout
    return out.split()


def test_remote_urls_normalise_to_one_project() -> None:
    same = ["git@GitHub.com:Me/App.git", "https://github.com/Me/App", "ssh://git@github.com:22/Me/App.git/",
            "https://user@GITHUB.com/Me/App.git", "git+ssh://git@github.com/Me/App"]
    assert {syncconfig.normalize_remote_url(url) for url in same} == {"github.com/Me/App"}
    assert syncconfig.normalize_remote_url("https://github.com/Me/Other") != "github.com/Me/App"
    assert syncconfig.normalize_remote_url("file:///srv/git/app.git") == "/srv/git/app.git"
    branch = syncconfig.branch_for("github.com/Me/App")
    assert branch.startswith("memdir/github.com-Me-App-") and branch != syncconfig.branch_for("github.com/me/app")


def test_sync_across_different_checkout_paths(laptop: Machine, desktop: Machine, remote: Path) -> None:
    laptop.write("MEMORY.md", "- [deploy](deploy.md)\n")
    laptop.write("deploy.md", "ship on fridays\n")
    laptop.write("team/ops.md", "pager rota\n")

    first = laptop.sync(remote)
    second = desktop.sync(remote)

    assert first.pushed and not second.pushed
    assert desktop.files() == laptop.files()
    assert sorted(second.pulled) == ["MEMORY.md", "deploy.md", "team/ops.md"]
    assert len(_remote_branches(remote)) == 1  # one branch for the project, whichever path it is at
    desktop.write("deploy.md", "ship on mondays\n")
    assert desktop.sync().pushed  # the remote was stored: `memdir sync` alone
    laptop.sync()
    assert laptop.read("deploy.md") == "ship on mondays\n"


def test_concurrent_edits_keep_both(laptop: Machine, desktop: Machine, remote: Path) -> None:
    laptop.write("MEMORY.md", "- [deploy](deploy.md)\n- [style](style.md)\n")
    laptop.write("deploy.md", "ship on fridays\n")
    laptop.write("style.md", "tabs\n")
    laptop.sync(remote)
    desktop.sync(remote)
    laptop.write("deploy.md", "ship on mondays (laptop)\n")
    laptop.write("MEMORY.md", "- [deploy](deploy.md)\n- [style](style.md)\n- [laptop](laptop.md)\n")
    laptop.write("laptop.md", "from the laptop\n")
    laptop.sync()
    desktop.write("deploy.md", "ship on tuesdays (desktop)\n")
    desktop.write("MEMORY.md", "- [deploy](deploy.md)\n- [desk](desk.md)\n")  # added one, removed style
    desktop.write("desk.md", "from the desktop\n")
    (desktop.memory / "style.md").unlink()
    gitcommit.commit(desktop.memory, "later edit")  # a hook commit: the desktop's edit is the newer one

    result = desktop.sync()
    laptop.sync()

    assert desktop.files() == laptop.files()
    assert desktop.read("deploy.md") == "ship on tuesdays (desktop)\n"
    assert [c.path for c in result.conflicts] == ["deploy.md"]
    assert any("kept both edits of deploy.md" in line for line in result.describe())
    history = [gitrepo.read_blob(desktop.memory, f.new_blob) for change in gitrepo.changes(desktop.memory, "deploy.md")
               for f in change.files if f.path == "deploy.md" and f.new_blob]
    assert b"ship on mondays (laptop)\n" in history  # the other edit is reachable by `memdir history`
    # both sides' new lines (each after the line it followed), the desktop's removal of style honoured
    assert desktop.read("MEMORY.md") == "- [deploy](deploy.md)\n- [laptop](laptop.md)\n- [desk](desk.md)\n"
    assert desktop.read("laptop.md") == "from the laptop\n" and not (desktop.memory / "style.md").exists()


def test_a_planted_secret_never_reaches_the_remote(laptop: Machine, desktop: Machine, remote: Path) -> None:
    laptop.write("deploy.md", "ship on fridays\n")
    laptop.sync(remote)
    laptop.write("deploy.md", f"ship with {TOKEN}\n")
    laptop.write("leak.md", f"GITHUB_TOKEN={TOKEN}\n")

    result = laptop.sync()

    assert [path for path, _ in result.left_out] == ["deploy.md", "leak.md"]
    assert TOKEN.encode() not in _remote_objects(remote)
    assert laptop.read("deploy.md") == f"ship with {TOKEN}\n"  # the local file is the user's: left as it is
    desktop.sync(remote)
    assert desktop.read("deploy.md") == "ship on fridays\n" and not (desktop.memory / "leak.md").exists()


def test_history_holding_a_secret_is_never_pushed(laptop: Machine, remote: Path) -> None:
    laptop.write("deploy.md", "ship on fridays\n")
    gitcommit.commit(laptop.memory, "start")
    env = {"GIT_DIR": str(gitrepo.git_dir(laptop.memory)), "GIT_WORK_TREE": str(laptop.memory),
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(laptop.home), "PATH": "/usr/bin:/bin"}
    laptop.write("deploy.md", f"token {TOKEN}\n")  # committed around memdir, by plain git
    subprocess.run(["git", "read-tree", "main"], env=env, check=True)
    subprocess.run(["git", "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "bypass"], env=env,
                   check=True)
    assert TOKEN.encode() in gitrepo.read_blob(laptop.memory, gitrepo.committed_files(laptop.memory,
                                                                                       gitrepo.head(laptop.memory))["deploy.md"])

    with pytest.raises(syncconfig.SyncError, match="nothing pushed.*secret"):
        laptop.sync(remote)
    assert TOKEN.encode() not in _remote_objects(remote)


def test_offline_or_no_remote_is_one_line_and_changes_nothing(laptop: Machine, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    laptop.write("deploy.md", "ship on fridays\n")
    before = sorted(p.relative_to(laptop.memory) for p in laptop.memory.rglob("*"))
    cli = ["--dir", str(laptop.memory), "--cwd", str(laptop.project), "sync"]

    assert main(cli) == 1
    assert main([*cli, "--remote", str(tmp_path / "nowhere.git")]) == 1
    assert main([*cli, "--remote", "https://user:hunter2@example.invalid/me/memory.git"]) == 1

    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and "no sync remote set" in err[0] and "cannot reach" in err[1] and "password" in err[2]
    assert "hunter2" not in "".join(err)
    assert sorted(p.relative_to(laptop.memory) for p in laptop.memory.rglob("*")) == before  # no repo, no config


def test_cli_sync_stores_the_remote_and_reports(laptop: Machine, remote: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    laptop.write("deploy.md", "ship on fridays\n")
    cli = ["--dir", str(laptop.memory), "--cwd", str(laptop.project), "sync"]
    assert main([*cli, "--remote", str(remote), "--auto", "on"]) == 0
    assert "pushed" in capsys.readouterr().out
    assert syncconfig.auto_sync(laptop.memory, laptop.project, env={})
    assert not syncconfig.auto_sync(laptop.memory, laptop.project, env={syncconfig.AUTO_SYNC_ENV: "0"})
    assert main(cli) == 0 and "nothing to push" in capsys.readouterr().out


def test_a_project_without_a_remote_needs_a_name(tmp_path: Path, remote: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "a.md").write_text("a\n")
    with pytest.raises(syncconfig.SyncError, match="no git remote") as no_repository:
        gitsync.sync(memory, tmp_path, remote=str(remote))
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.raises(syncconfig.SyncError, match="no git remote") as no_remote:
        gitsync.sync(memory, tmp_path / "repo", remote=str(remote))
    assert "git remote add" in str(no_remote.value) and "git remote add" not in str(no_repository.value)
    assert gitsync.sync(memory, tmp_path, remote=str(remote), project="notes").pushed


def test_a_folder_config_inside_the_repository_cannot_aim_sync(laptop: Machine, remote: Path) -> None:
    inside = laptop.project / ".claude" / "memory"
    syncconfig.save_config(inside, {syncconfig.REMOTE_KEY: str(remote), syncconfig.AUTO_KEY: True})
    with pytest.raises(syncconfig.SyncError, match="no sync remote set"):
        gitsync.sync(inside, laptop.project)
    assert not syncconfig.auto_sync(inside, laptop.project, env={})


def test_memory_md_line_merge_is_idempotent() -> None:
    base = b"- a\n- b\n"
    ours = b"- a\n- b\n- ours\n"
    theirs = b"- a\n- theirs\n"
    merged = gitmerge.merge_lines(base, ours, theirs)
    assert merged == b"- a\n- theirs\n- ours\n"
    assert gitmerge.merge_lines(base, merged, theirs) == merged


def test_edit_against_delete_keeps_the_edit(laptop: Machine, desktop: Machine, remote: Path) -> None:
    laptop.write("deploy.md", "v1\n")
    laptop.sync(remote)
    desktop.sync(remote)
    (laptop.memory / "deploy.md").unlink()
    laptop.sync()
    desktop.write("deploy.md", "v2 from the desktop\n")
    result = desktop.sync()
    laptop.sync()
    assert laptop.read("deploy.md") == "v2 from the desktop\n"
    assert [c.how for c in result.conflicts] == ["edited here, deleted on the other machine"]


_KILLER = """
import os, signal, sys
from pathlib import Path
from memdir import gitmerge, gitsync, safefs_write

point = sys.argv[3]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "mid-apply":  # the first memory file is written, the rest and the branch are not
    real_write, done = safefs_write.write_bytes, []
    def write_then_die(root, rel, data, **kwargs):
        real_write(root, rel, data, **kwargs)
        if not rel.startswith(".memdir"):
            die()
    gitmerge.safefs_write.write_bytes = write_then_die
elif point == "before-push":  # merged and committed here, not pushed
    gitsync._push = die
elif point == "after-fetch":
    real_fetch = gitsync._fetch
    gitsync._fetch = lambda *a: (real_fetch(*a), die())
gitsync.sync(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def _sync_killed(machine: Machine, point: str) -> None:
    import sys

    done = subprocess.run([sys.executable, "-c", _KILLER, str(machine.memory), str(machine.project), point],
                          capture_output=True)
    assert done.returncode == -9, done.stderr.decode()


def _diverged(laptop: Machine, desktop: Machine, remote: Path) -> None:
    for name in ("a.md", "b.md", "c.md"):
        laptop.write(name, f"{name} v1\n")
    laptop.write("MEMORY.md", "- a\n- b\n- c\n")
    laptop.sync(remote)
    desktop.sync(remote)
    for name in ("a.md", "b.md"):
        laptop.write(name, f"{name} from the laptop\n")
    laptop.write("MEMORY.md", "- a\n- b\n- c\n- laptop\n")
    laptop.sync()
    desktop.write("c.md", "c from the desktop\n")
    desktop.write("MEMORY.md", "- a\n- b\n- c\n- desktop\n")


def _check_converged(laptop: Machine, desktop: Machine) -> None:
    desktop.sync()
    laptop.sync()
    assert laptop.files() == desktop.files()
    assert laptop.read("a.md") == "a.md from the laptop\n" and laptop.read("c.md") == "c from the desktop\n"
    assert laptop.read("MEMORY.md") == "- a\n- b\n- c\n- laptop\n- desktop\n"
    for machine in (laptop, desktop):
        fsck = gitrepo.run(machine.memory, "fsck", "--no-dangling", check=False)
        assert fsck.returncode == 0, fsck.stderr
        assert gitrepo.committed_files(machine.memory, gitrepo.head(machine.memory)) == {
            name: gitrepo.blob_id(data) for name, data in machine.files().items()}


@pytest.mark.slow  # a Python process per kill: over 2 s on a loaded machine
@pytest.mark.parametrize("point", ["after-fetch", "mid-apply", "before-push"])
def test_a_sync_killed_anywhere_leaves_both_sides_consistent(laptop: Machine, desktop: Machine, remote: Path,
                                                             point: str) -> None:
    _diverged(laptop, desktop, remote)
    before = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "--all"], capture_output=True).stdout
    _sync_killed(desktop, point)
    after = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "--all"], capture_output=True).stdout
    assert after == before  # the remote never saw half a sync: it moves only by a whole push
    _check_converged(laptop, desktop)


def test_the_stop_worker_syncs_only_when_turned_on(laptop: Machine, remote: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from memdir.entry import worker

    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(laptop.project),
                                      "message": {"role": "user", "content": "hello"}}) + "\n")
    monkeypatch.setenv("MEMDIR_PATH", str(laptop.memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    laptop.write("deploy.md", "ship on fridays\n")
    syncconfig.save_config(laptop.memory, {syncconfig.REMOTE_KEY: str(remote)})
    request = json.dumps({"session_id": "s", "transcript": str(transcript), "cwd": str(laptop.project)})

    assert worker.main([request]) == 0
    assert _remote_branches(remote) == []  # off by default: nothing pushed
    monkeypatch.setenv(syncconfig.AUTO_SYNC_ENV, "1")
    assert worker.main([request]) == 0
    assert len(_remote_branches(remote)) == 1
    assert "sync: synced with" in (laptop.memory / ".memdir" / "hook.log").read_text()


def test_team_memory_goes_to_a_team_remote_alone(laptop: Machine, desktop: Machine, remote: Path,
                                                 tmp_path: Path) -> None:
    team_remote = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(team_remote)], check=True)
    laptop.write("personal.md", "mine only\n")
    laptop.write("team/MEMORY.md", "- [ops](ops.md)\n")
    laptop.write("team/ops.md", "pager rota\n")
    laptop.write("team/leak.md", f"GITHUB_TOKEN={TOKEN}\n")

    pushed = gitsync.sync(laptop.memory, laptop.project, remote=str(team_remote), team=True)
    pulled = gitsync.sync(desktop.memory, desktop.project, remote=str(team_remote), team=True)

    assert pushed.pushed and [p for p, _ in pushed.left_out] == ["leak.md"]
    assert _remote_branches(team_remote)[0].startswith("refs/heads/memdir-team/")
    objects = _remote_objects(team_remote)
    assert b"mine only" not in objects and TOKEN.encode() not in objects  # team files only, no secret
    assert sorted(pulled.pulled) == ["MEMORY.md", "ops.md"] and desktop.read("team/ops.md") == "pager rota\n"
    with pytest.raises(syncconfig.SyncError, match="no sync remote set"):
        laptop.sync()  # the team remote is stored apart: personal memory never goes there


@pytest.mark.slow
def test_a_short_soak_loses_no_version() -> None:
    from benchmarks.sync_soak import soak

    outcome = soak(rounds=40, seed=5)
    assert outcome["versions lost"] == 0 and outcome["folders identical"] is True
    assert outcome["conflicts kept both"]  # the soak did exercise the merge


def test_a_remote_url_cannot_run_a_command(laptop: Machine, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for url in (f"ext::sh -c touch% {marker}", f"--upload-pack=touch {marker}"):
        with pytest.raises(syncconfig.SyncError):
            laptop.sync(url)
    assert not marker.exists()


def test_a_first_sync_imports_the_old_history_and_pushes_it(laptop: Machine, desktop: Machine, remote: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder whose versions so far live only in `.memdir/history/` keeps them all when sync makes its first commit."""
    from memdir import githistory
    from memdir.model import Memory
    from memdir.store import MemoryStore

    monkeypatch.setenv(githistory.ENV, "0")  # an older memdir: versions kept in .memdir/history/ only
    store = MemoryStore(laptop.memory)
    rel = store.save(Memory(name="deploy", description="deploys", type="project", body="version one")).rel_path
    store.save(Memory(name="deploy", description="deploys", type="project", body="version two"), rel_path=rel)
    assert not gitrepo.exists(laptop.memory)
    monkeypatch.setenv(githistory.ENV, "1")

    assert laptop.sync(remote).pushed
    desktop.sync(remote)

    bodies = [gitrepo.read_blob(desktop.memory, f.new_blob or "").decode()
              for c in reversed(gitrepo.changes(desktop.memory, rel)) for f in c.files if f.path == rel]
    assert [b for b in bodies if "version one" in b] and "version two" in bodies[-1]


def test_the_folder_config_counts_when_memdir_runs_from_a_folder_above_it(tmp_path: Path, remote: Path) -> None:
    """`memdir sync --remote URL`, then `memdir sync` from the home folder (no git repository there, so
    it is the 'project root'): the remote the first one stored must be found, not 'no sync remote set'."""
    home = Path.home()  # each test's own (tests/conftest.py)
    memory = home / ".claude" / "projects" / "app" / "memory"
    memory.mkdir(parents=True)
    syncconfig.save_config(memory, {syncconfig.REMOTE_KEY: str(remote), syncconfig.PROJECT_KEY: "app"})
    assert syncconfig.settings(memory, home).url == str(remote)


def _push_hostile_commit(remote: Path, tmp_path: Path, files: dict[str, str]) -> None:
    """Someone with push access to the remote (not through memdir) adds `files` to every memdir branch."""
    branch = next(ref for ref in _remote_branches(remote) if ref.startswith("refs/heads/memdir/"))
    work = tmp_path / "hostile-clone"
    env = {"GIT_AUTHOR_NAME": "e", "GIT_AUTHOR_EMAIL": "e@e", "GIT_COMMITTER_NAME": "e", "GIT_COMMITTER_EMAIL": "e@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "clone", "-q", "-b", branch.removeprefix("refs/heads/"), str(remote), str(work)],
                   check=True, env=env)
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    subprocess.run(["git", "-C", str(work), "add", "-A", "-f"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "commit", "-q", "-m", "hostile"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", f"HEAD:{branch}"], check=True, env=env)


@pytest.mark.parametrize("ahead", [False, True])  # a fast-forward, or a merge with a local change
def test_a_pull_never_writes_a_secret_or_a_state_file_into_the_folder(laptop: Machine, remote: Path,
                                                                       tmp_path: Path, ahead: bool) -> None:
    laptop.write("user_a.md", "a\n")
    laptop.sync(remote)
    _push_hostile_commit(remote, tmp_path, {"user_tok.md": f"token {TOKEN}\n"})
    if ahead:
        laptop.write("user_b.md", "b\n")
    with pytest.raises(syncconfig.SyncError, match="secret"):
        laptop.sync()
    assert not (laptop.memory / "user_tok.md").exists()
    laptop.write("user_c.md", "c\n")
    _push_hostile_commit(remote, tmp_path / "2", {"user_tok.md": "gone\n", ".memdir/proposals/x.md": "planted\n",
                                                  "logs/2026/x.md": "planted\n"})
    result = laptop.sync()
    assert (laptop.memory / "user_tok.md").read_text() == "gone\n"  # a tracked memory: taken
    assert not (laptop.memory / ".memdir" / "proposals" / "x.md").exists()
    assert not (laptop.memory / "logs").exists() and "logs/2026/x.md" not in result.pulled


def test_a_remote_that_never_answers_is_one_short_line(laptop: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)  # accepts the connection (in the kernel), never says a word
    monkeypatch.setattr(gitsync, "_ANSWER_TIMEOUT", 1.0)
    laptop.write("user_a.md", "a\n")
    try:
        with pytest.raises(syncconfig.SyncError) as failed:
            laptop.sync(f"git://127.0.0.1:{server.getsockname()[1]}/memory")
    finally:
        server.close()
    assert "no answer in 1s; nothing changed" in str(failed.value) and "ls-remote" not in str(failed.value)
    assert not (laptop.memory / ".memdir").exists()
