"""A disk that is full, read-only or not ours (issue 22, finding 7), under every CLI command and hook.

The failures are injected at the system calls (the suite runs as root here, where chmod stops
nothing): every open for writing, write, fsync, rename, link, mkdir and unlink fails with the
errno, and under ENOSPC a buffered write stores half its bytes and then fails, as a filling disk
does. The promises: one `memdir: error:` line naming the state and the fix, no traceback; the
memory files and MEMORY.md keep their bytes; no history version is torn (0 bytes) or left half
written; and a real partial write (RLIMIT_FSIZE in a child process) loses nothing either.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import history
from tests.hostile.conftest import TIMEOUT, count_lost, one_clear_line, run_inproc, snapshot

REAL = ("---\nname: Real\ndescription: editor choice vim\ntype: user\n---\n"
        "The user edits with vim, in a terminal, with the default key bindings.\n")
WORDS = {errno.ENOSPC: "the disk is full", errno.EROFS: "read-only", errno.EPERM: "permission denied",
         errno.EACCES: "permission denied", errno.EDQUOT: "the disk is full"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class _HalfWriter:
    """A file opened for writing on a filling disk: half of the first write lands, then ENOSPC."""

    def __init__(self, real, code: int) -> None:
        self._real, self._code = real, code

    def write(self, data):
        self._real.write(data[: len(data) // 2])
        self._real.flush()
        raise OSError(self._code, os.strerror(self._code))

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._real.close()


def _writing(mode: str) -> bool:
    return any(ch in mode for ch in "wax+")


@contextlib.contextmanager
def failing_disk(code: int):
    """Every way memdir writes fails with `code` while the block runs (reads still work)."""
    real = {name: getattr(os, name) for name in ("open", "write", "fsync", "replace", "rename", "link", "mkdir",
                                                 "unlink", "rmdir", "ftruncate", "fdopen", "makedirs")}
    real_open = builtins.open

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    def os_open(path, flags, *args, **kwargs):
        if flags & _WRITE_FLAGS and (code != errno.ENOSPC or flags & os.O_CREAT and flags & os.O_EXCL):
            raise OSError(code, os.strerror(code), path)
        return real["open"](path, flags, *args, **kwargs)

    def fdopen(fd, mode="r", *args, **kwargs):
        handle = real["fdopen"](fd, mode, *args, **kwargs)
        return _HalfWriter(handle, code) if _writing(mode) else handle

    def open_(file, mode="r", *args, **kwargs):
        if _writing(mode):
            raise OSError(code, os.strerror(code), file)
        return real_open(file, mode, *args, **kwargs)

    def makedirs(name, mode=0o777, exist_ok=False):
        if not os.path.isdir(name):
            raise OSError(code, os.strerror(code), name)

    patches = {"open": os_open, "fdopen": fdopen, "makedirs": makedirs,
               **{name: fail for name in ("write", "fsync", "replace", "rename", "link", "mkdir", "ftruncate")}}
    if code != errno.ENOSPC:  # a full disk still deletes; a read-only one does not
        patches.update(unlink=fail, rmdir=fail)
    for name, func in patches.items():
        setattr(os, name, func)
    builtins.open = io.open = open_  # type: ignore[assignment]
    try:
        yield
    finally:
        for name, func in real.items():
            setattr(os, name, func)
        builtins.open = io.open = real_open  # type: ignore[assignment]


@pytest.fixture
def folder(memory, hostile_root):
    (memory / "user_real.md").write_text(REAL)
    (memory / "MEMORY.md").write_text("- [Real](user_real.md) — editor choice vim\n")
    code, _, err = run_inproc_plain("--dir", str(memory), "restore", "Real")  # no version yet: one line
    assert code == 2, err
    transcript = hostile_root / "inputs" / "disk.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(memory.parent),
                                      "timestamp": "2026-03-02T10:00:00Z", "message": {
                                          "role": "user", "content": "Remember that I deploy on Fridays."}}) + "\n")
    return memory, transcript


def run_inproc_plain(*argv: str):
    from memdir.entry.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _commands(memory: Path, transcript: Path) -> list[tuple[str, ...]]:
    d = ("--dir", str(memory))
    return [
        (*d, "path"), (*d, "list"), (*d, "list", "--json"), (*d, "show", "Real"),
        (*d, "remember", "The user deploys on Fridays", "--type", "project"),
        (*d, "remember", "Team uses trunk-based development", "--type", "feedback", "--team"),
        (*d, "remember", "Ship it", "--success"), (*d, "forget", "Real"), (*d, "history", "Real"),
        (*d, "restore", "Real"), (*d, "index"), (*d, "index", "--rebuild"), (*d, "index", "--capped"),
        (*d, "doctor"), (*d, "doctor", "--fix"), (*d, "recall", "which editor does the user use"),
        (*d, "extract", str(transcript), "--engine", "offline"), ("batch", str(transcript), "--engine", "offline"),
        (*d, "dream", "--engine", "offline"), (*d, "consolidate", "--engine", "offline"), (*d, "verify"), (*d, "status"),
        (*d, "graph", "export"),
        ("install", "--scope", "user"), ("uninstall", "--scope", "user"), ("demo",),
    ]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EPERM, errno.EACCES, errno.EDQUOT],
                         ids=errno.errorcode.get)
def test_every_command_on_a_failing_disk_is_one_line(code, folder, tally, monkeypatch):
    memory, transcript = folder
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    keep = {"user_real.md", "MEMORY.md"}
    for argv in _commands(memory, transcript):
        before = snapshot(memory)
        with failing_disk(code):
            status, out, err = run_inproc(tally, *argv)
        if argv[0] == "batch":  # a report per transcript on stdout, exit 1 when one failed
            assert status in (0, 1) and "Errno" not in out, (argv, out)
            continue
        report = argv[2:3] in (("doctor",), ("status",)) and status == 1  # a health report: exit 1 means unhealthy
        assert status == 0 or one_clear_line(status, err) or report, (argv, err)
        if "remember" in argv or "forget" in argv:  # they must write: the line says why they could not
            assert status == 2 and WORDS[code] in err, (argv, err)
        assert count_lost(tally, before, snapshot(memory), keep=keep) == 0, argv
        assert not _torn_versions(memory), argv
        assert not [p for p in memory.rglob("*") if ".tmp-" in p.name or p.name.endswith(".partial")], argv
    assert tally.tracebacks == 0


def _torn_versions(memory: Path) -> list[str]:
    root = memory / ".memdir" / "history"
    found = []
    for kept in root.rglob("*.md") if root.is_dir() else []:
        if kept.is_file() and kept.stat().st_size == 0 and not kept.stem.endswith("-empty"):
            found.append(str(kept))
    return found


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EPERM], ids=errno.errorcode.get)
def test_hooks_and_the_worker_stay_quiet_on_a_failing_disk(code, folder, tally, monkeypatch):
    from memdir.entry.hooks import main as hook
    from memdir.entry.worker import main as worker

    memory, transcript = folder
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    before = snapshot(memory)
    payload = {"session_id": "s", "cwd": str(memory.parent), "prompt": "which editor does the user use",
               "source": "startup", "transcript_path": str(transcript)}
    for call in (lambda: hook(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=io.StringIO()),
                 lambda: hook(["session-start"], stdin=io.StringIO(json.dumps(payload)), stdout=io.StringIO()),
                 lambda: worker([json.dumps({"cwd": str(memory.parent), "transcript": str(transcript)})])):
        tally.tried += 1
        with failing_disk(code):
            try:
                status = call()
            except Exception as exc:  # noqa: BLE001 - a hook's traceback would reach Claude Code's transcript
                tally.tracebacks += 1
                tally.notes.append(f"traceback: hook on {errno.errorcode[code]}: {type(exc).__name__}: {exc}")
                raise
        assert status in (0, 1)
    assert count_lost(tally, before, snapshot(memory), keep={"user_real.md", "MEMORY.md"}) == 0
    assert not _torn_versions(memory)


def test_memory_tool_on_a_full_disk_is_a_tool_error(folder, tally):
    from anthropic.lib.tools import ToolError

    from memdir.entry.memory_tool import MemdirMemoryTool

    memory, _ = folder
    tool = MemdirMemoryTool(memory)
    before = snapshot(memory)
    for command in ({"command": "create", "path": "/memories/user_new.md", "file_text": REAL.replace("Real", "New")},
                    {"command": "str_replace", "path": "/memories/user_real.md", "old_str": "in a terminal", "new_str": "in an IDE"},
                    {"command": "delete", "path": "/memories/user_real.md"}):
        tally.tried += 1
        with failing_disk(errno.ENOSPC), pytest.raises(ToolError) as refused:
            tool.call(command)
        assert "\n" not in str(refused.value) and "full" in str(refused.value), refused.value
    assert count_lost(tally, before, snapshot(memory)) == 0


# --- a real partial write: the file size limit stops write() part-way --------------------------
def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # CPython ignores SIGXFSZ: write() fails with EFBIG


def _memdir(tally, memory: Path, *argv: str, limited: bool = False) -> subprocess.CompletedProcess:
    tally.tried += 1
    proc = subprocess.run([sys.executable, "-m", "memdir.entry.main", "--dir", str(memory), *argv],
                          capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=_small_files if limited else None)
    if "Traceback" in proc.stderr:
        tally.tracebacks += 1
        tally.notes.append(f"traceback: memdir {' '.join(argv)} (file size limit): {proc.stderr.splitlines()[-1]}")
    return proc


def test_a_write_cut_short_keeps_no_empty_version_and_loses_nothing(folder, tally):
    memory, _ = folder
    for argv in (("forget", "Real"), ("remember", "The user edits with vim. " * 8, "--type", "user", "--name", "Real")):
        proc = _memdir(tally, memory, *argv, limited=True)
        assert proc.returncode == 2 and proc.stderr.startswith("memdir: error: "), proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "ulimit -f" in proc.stderr
        assert (memory / "user_real.md").read_text() == REAL
        assert not _torn_versions(memory)
        assert not [p for p in memory.rglob("*") if p.name.endswith(".partial") or ".tmp-" in p.name]
    proc = _memdir(tally, memory, "restore", "Real")  # nothing complete was kept, so nothing to restore
    # (with the git history on, the same refusal reads "every version ... holds what it holds now")
    assert proc.returncode == 2 and ("no kept versions" in proc.stderr or "holds what it holds now" in proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (memory / "user_real.md").read_text() == REAL


def test_restore_never_brings_back_a_torn_version(folder, tally):
    """0-byte versions an older memdir left on a full disk: skipped by default, refused by number."""
    memory, _ = folder
    assert _memdir(tally, memory, "forget", "Real").returncode == 0  # a complete version of REAL
    (memory / "user_real.md").write_text(REAL.replace("vim", "emacs"))
    torn = memory / ".memdir" / "history" / "user_real.md" / "29991231T235959.999999Z-0001-updated.md"
    torn.write_bytes(b"")  # newest, 0 bytes, not marked as an empty memory
    listing = _memdir(tally, memory, "history", "Real").stdout
    assert "empty: left by a failed write; not restored" in listing
    proc = _memdir(tally, memory, "restore", "Real", "--version", "1")
    assert proc.returncode == 2 and "is empty, left by a write that failed" in proc.stderr
    assert "emacs" in (memory / "user_real.md").read_text()
    assert _memdir(tally, memory, "restore", "Real").returncode == 0  # the newest intact version
    assert (memory / "user_real.md").read_text() == REAL


def test_an_empty_memory_is_kept_and_restored_as_empty(folder, tally):
    memory, _ = folder
    (memory / "user_blank.md").write_bytes(b"")
    kept = history.keep(memory / ".memdir", memory, "user_blank.md", "updated")
    assert kept is not None and kept.name.endswith("-updated-empty.md") and kept.read_bytes() == b""
    (memory / "user_blank.md").write_text(REAL.replace("Real", "Blank"))
    chosen = history.pick(memory / ".memdir", "user_blank.md", None)
    assert chosen.was_empty and chosen.action == "updated" and not history.torn(chosen)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS], ids=errno.errorcode.get)
def test_consolidate_on_a_failing_disk_is_one_line_and_loses_nothing(code, memory, tally):
    """A merge has to write (the kept memory, history, MEMORY.md): when the disk refuses, one line, every byte kept."""
    (memory / "user_real.md").write_text(REAL)
    (memory / "user_real_again.md").write_text(REAL.replace("name: Real", "name: Real again"))
    (memory / "MEMORY.md").write_text("- [Real](user_real.md) — editor choice vim\n")
    before = snapshot(memory)
    with failing_disk(code):
        status, _, err = run_inproc(tally, "--dir", str(memory), "consolidate", "--engine", "offline")
    assert one_clear_line(status, err), err
    assert count_lost(tally, before, snapshot(memory)) == 0
    assert not _torn_versions(memory)
    assert tally.tracebacks == 0
