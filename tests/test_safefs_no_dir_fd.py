"""memdir where a folder cannot be held open nor a file opened relative to one without following a link (native
Windows: no O_DIRECTORY, no O_NOFOLLOW, no dir_fd). `import memdir` failed there on os.O_DIRECTORY; now the
commands work, reads and writes by path with every component lstat'ed (memdir.safefs_paths,
memdir.safefs_pathwrite), and links are still refused, never written through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import safefs, safefs_paths, safefs_write
from tests.conftest import REPO

# This Python made to look like Windows' before memdir is imported: the attributes gone, no dir_fd anywhere, no
# folder opened as a file, no folder descriptor listed. Whatever memdir still asked for that way would fail.
WINDOWS_LIKE = """
import os, sys
for name in ("O_DIRECTORY", "O_NOFOLLOW"):
    if hasattr(os, name):
        delattr(os, name)
os.supports_dir_fd = set()

def no_dir_fd(real):
    def call(*args, dir_fd=None, src_dir_fd=None, dst_dir_fd=None, **kwargs):
        if dir_fd is not None or src_dir_fd is not None or dst_dir_fd is not None:
            raise NotImplementedError("dir_fd unavailable on this platform")
        return real(*args, **kwargs)
    return call

real_open = os.open
def win_open(path, flags, mode=0o777, *, dir_fd=None):
    if dir_fd is not None:
        raise NotImplementedError("dir_fd unavailable on this platform")
    if os.path.isdir(path):
        raise PermissionError(13, "Permission denied", path)
    return real_open(path, flags, mode)
os.open = win_open
for name in ("stat", "unlink", "mkdir", "rmdir", "readlink", "rename", "replace", "link", "chmod", "utime"):
    setattr(os, name, no_dir_fd(getattr(os, name)))

def no_fd(real):
    def call(path=".", *args, **kwargs):
        if isinstance(path, int):
            raise TypeError("path should be string, bytes, os.PathLike or None, not int")
        return real(path, *args, **kwargs)
    return call
os.scandir, os.listdir = no_fd(os.scandir), no_fd(os.listdir)
sys.argv = ["memdir", *sys.argv[1:]]
from memdir.entry.main import main
sys.exit(main())
"""

DEPLOYS = "---\nname: Deploys\ndescription: Deploys go out on Tuesdays\ntype: project\n---\nvia the release train\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A memory folder with one memory, a symlinked memory and a symlinked folder holding another."""
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_deploys.md").write_text(DEPLOYS, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(DEPLOYS.replace("Deploys", "Outside"), encoding="utf-8")
    (memory / "linked.md").symlink_to(outside / "secret.md")
    (memory / "team").symlink_to(outside)
    return memory


def _memdir(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(folder.parent), "XDG_CONFIG_HOME": str(folder.parent / "config"),
           "XDG_CACHE_HOME": str(folder.parent / "cache"), "MEMDIR_ENGINE": "offline"}
    return subprocess.run([sys.executable, "-c", WINDOWS_LIKE, "--dir", str(folder), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="the refusals are checked on symlinks")
def test_without_folder_descriptors_the_read_commands_work_and_links_are_refused(folder):
    listed = _memdir(folder, "list")
    assert listed.returncode == 0, listed.stderr
    assert "project_deploys.md" in listed.stdout and "Outside" not in listed.stdout and "secret" not in listed.stdout
    shown = _memdir(folder, "show", "project_deploys.md")
    assert shown.returncode == 0 and shown.stdout.strip() == DEPLOYS.strip()
    linked = _memdir(folder, "show", "linked.md")
    assert linked.returncode != 0 and "symlink" in linked.stderr and "Outside" not in linked.stdout
    recalled = _memdir(folder, "recall", "when do deploys go out")
    assert recalled.returncode == 0 and "release train" in recalled.stdout and "Outside" not in recalled.stdout


def test_without_folder_descriptors_remember_and_forget_work_and_write_through_no_link(folder):
    """They were refused (`writes need O_NOFOLLOW`): Windows users got no memory. Now each write is made by path,
    every component lstat-checked (memdir.safefs_pathwrite); the symlinked memory and folder stay untouched."""
    outside = folder.parent / "outside"
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    done = _memdir(folder, "remember", "--type", "project", "Releases are tagged on Mondays")
    assert done.returncode == 0 and "created project_" in done.stdout, done.stderr
    done = _memdir(folder, "forget", "project_deploys.md")
    assert done.returncode == 0 and "deleted project_deploys.md" in done.stdout, done.stderr
    assert not (folder / "project_deploys.md").exists()
    kept = list((folder / ".memdir" / "history" / "project_deploys.md").iterdir())
    assert [p.read_text(encoding="utf-8") for p in kept] == [DEPLOYS]  # its bytes are kept, as everywhere
    assert "Releases are tagged on Mondays" in (folder / "MEMORY.md").read_text(encoding="utf-8")
    team = _memdir(folder, "remember", "--type", "project", "--team", "Team releases go out on Mondays")
    assert team.returncode != 0 and "symlink" in team.stderr and "Traceback" not in team.stderr
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert (folder / "linked.md").is_symlink() and (folder / "team").is_symlink()


def test_without_folder_descriptors_extraction_saves_memories(folder, tmp_path):
    """The Stop worker's extraction (here `memdir extract`, the same pipeline in-process) saves on native Windows."""
    import json

    transcript = tmp_path / "session.jsonl"
    line = {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z", "cwd": str(tmp_path),
            "message": {"role": "user", "content": "Don't mock the database in integration tests, because mocks "
                                                   "hid a broken migration."}}
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    done = _memdir(folder, "extract", str(transcript))
    assert done.returncode == 0, done.stderr
    assert list(folder.glob("feedback_*.md")) and "feedback_" in (folder / "MEMORY.md").read_text(encoding="utf-8")


def test_the_path_reads_refuse_links_non_files_and_a_file_swapped_after_its_check(folder, monkeypatch):
    """safefs_paths in this process: a link anywhere below the root, a FIFO, and a file replaced between the lstat
    and the open (its inode differs) are refused, never read."""
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    assert safefs.read_text(folder, "project_deploys.md") == DEPLOYS
    for rel in ("linked.md", "team/secret.md"):
        with pytest.raises(safefs.UnsafePath, match="symlink"):
            safefs.read_bytes(folder, rel)
    assert [name for name, kind in safefs.listdir(folder) if kind == "file"] == ["project_deploys.md"]
    with pytest.raises(safefs.UnsafePath, match="symlink"):
        safefs.listdir(folder, "team")
    os.mkfifo(folder / "pipe.md")
    with pytest.raises(safefs.UnsafePath, match="FIFO"):
        safefs.open_file(folder, "pipe.md")
    other = os.lstat(folder.parent / "outside" / "secret.md")
    monkeypatch.setattr(safefs_paths.os, "lstat", lambda path: other if path.endswith("project_deploys.md")
                        else os.stat(path, follow_symlinks=False))
    with pytest.raises(safefs.UnsafePath, match="replaced"):
        safefs.read_bytes(folder, "project_deploys.md")
    with pytest.raises(safefs.UnsafePath, match="symlink"):
        safefs_write.write_bytes(folder, "team/x.md", b"x")


def _prompt_hook(folder: Path, tmp_path: Path, prompt: str) -> subprocess.CompletedProcess:
    """The prompt hook for `prompt`, offline, in a process without folder descriptors nor O_NOFOLLOW."""
    import json

    payload = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
               "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "MEMDIR_ENGINE": "offline", "MEMDIR_PATH": str(folder),
           "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1", "MEMDIR_RECALL_SERVER": "0"}
    return subprocess.run([sys.executable, "-c", WINDOWS_LIKE, "hook", "prompt"], input=json.dumps(payload),
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="the refusals are checked on symlinks")
def test_without_o_nofollow_the_prompt_hook_writes_through_no_link(folder, tmp_path):
    """The prompt hook's own appends outside safefs (the decision inbox, the decisions shown in a session) opened
    their file with O_NOFOLLOW where it exists, and without it followed a link planted at that name: the prompt,
    redacted or not, went to wherever the link pointed. Without O_NOFOLLOW they are not made at all."""

    from memdir import constants as C

    state = folder / C.STATE_DIRNAME
    (state / C.DECISION_SESSIONS_DIRNAME).mkdir(parents=True)
    target = tmp_path / "outside" / "target.txt"
    target.write_text("untouched\n", encoding="utf-8")
    (state / C.DECISION_INBOX).symlink_to(target)
    (state / C.DECISION_SESSIONS_DIRNAME / "s1").symlink_to(target)
    done = _prompt_hook(folder, tmp_path, "when do deploys go out? we decided to use Kafka")
    assert done.returncode == 0, done.stderr
    assert target.read_text(encoding="utf-8") == "untouched\n"


def test_without_o_nofollow_the_prompt_hook_queues_the_prompt_for_decision_capture(folder, tmp_path):
    """Its own writes (the decision inbox, the session's first-prompt marker) were refused without O_NOFOLLOW, so
    no decision was ever captured on native Windows; now each name is lstat-checked, then written."""

    from memdir import constants as C

    done = _prompt_hook(folder, tmp_path, "we decided to use Kafka for the event bus")
    assert done.returncode == 0, done.stderr
    state = folder / C.STATE_DIRNAME
    assert "Kafka" in (state / C.DECISION_INBOX).read_text(encoding="utf-8")
    assert (state / C.DECISION_SESSIONS_DIRNAME / "s1").is_file()


@pytest.mark.parametrize("rel", ["C:/Users/me/.aws/credentials", "team/C:/secret.md", "C:secret.md",
                                 "project_deploys.md:hidden"])
def test_the_path_reads_never_join_a_drive_onto_the_memory_folder(monkeypatch, rel):
    """Native Windows joins paths with ntpath, where a component `C:` is a drive: `join("D:\\\\memory", "C:")` is
    "C:", the current folder of drive C, and what follows was read from there. The memory tool's paths come from
    the model (a prompt it read could name one): `/memories/C:/Users/me/.aws/credentials` read that file. A
    component with a colon (a drive, or an alternate data stream) is refused before anything is looked at."""
    import ntpath
    import types

    looked: list[str] = []

    def lstat(path):  # the memory folder holds one folder, `team`
        looked.append(path)
        if path == root + "\\team":
            return os.lstat(os.curdir)
        raise FileNotFoundError(2, "absent", path)

    fake = types.SimpleNamespace(path=ntpath, fspath=os.fspath, lstat=lstat, open=lambda *a, **k: pytest.fail(a),
                                 fstat=os.fstat, close=os.close, scandir=lambda p: pytest.fail(p), O_RDONLY=0)
    monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    monkeypatch.setattr(safefs_paths, "os", fake)
    root = "D:\\memory"
    with pytest.raises(safefs.UnsafePath):
        safefs.read_bytes(root, rel)
    assert all(path.startswith(root + "\\") for path in looked), looked
