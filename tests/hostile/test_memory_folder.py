"""A memory folder full of traps: symlinks at every level, FIFOs, devices, huge, binary and folder-shaped files.

Every user-facing command and hook runs against each trap. Nothing may be read or written through a
symlink inside the folder (outside stays byte-identical and its content never shows up), nothing
may hang (FIFO traps run as processes with a timeout), a refusal is one clear line, and the real
memory beside the trap is never lost.
"""

from __future__ import annotations

import io
import json
import os

import pytest

from tests.hostile.conftest import CANARY, count_lost, one_clear_line, record_escape, run_cli, run_inproc, snapshot

REAL = "---\nname: Real\ndescription: editor choice vim\ntype: user\n---\nThe user edits with vim.\n"


def _symlink_state(m, o):
    (m / ".memdir").rmdir()
    (m / ".memdir").symlink_to(o, target_is_directory=True)


def _symlink_team(m, o):
    (m / "team").rmdir()
    (m / "team").symlink_to(o, target_is_directory=True)


def _symlink_logs(m, o):
    (m / "logs").symlink_to(o, target_is_directory=True)


def _symlink_memory(m, o):
    (m / "passwd.md").symlink_to(o / "passwd")


def _symlink_index(m, o):
    (m / "MEMORY.md").unlink()
    (m / "MEMORY.md").symlink_to(o / "notes.md")


def _symlink_subfolder(m, o):
    (m / "sub").symlink_to(o, target_is_directory=True)


def _symlink_state_files(m, o):
    state = m / ".memdir"
    (state / "sessions").symlink_to(o, target_is_directory=True)
    for name in ("lock", "runs.jsonl", "hook.log", "notices.json", "pending.json", "extract.lock"):
        (state / name).symlink_to(o / f"state-{name}")
    (state / "history").symlink_to(o, target_is_directory=True)


def _fifo_state_files(m, o):
    for name in ("lock", "runs.jsonl", "hook.log", "notices.json", "pending.json", "extract.lock", "usage.lock"):
        os.mkfifo(m / ".memdir" / name)


def _fifo_memory(m, o):
    os.mkfifo(m / "user_pipe.md")


def _fifo_index(m, o):
    (m / "MEMORY.md").unlink()
    os.mkfifo(m / "MEMORY.md")


def _huge_index(m, o):
    with open(m / "MEMORY.md", "ab") as handle:
        handle.truncate(3 * 1024**3)


def _huge_memory(m, o):
    with open(m / "user_huge.md", "wb") as handle:
        handle.write(b"---\nname: Huge\ndescription: huge\ntype: user\n---\n")
        handle.truncate(3 * 1024**3)


def _binary_memory(m, o):
    (m / "user_binary.md").write_bytes(b"---\nname: Bin\ndescription: bin\ntype: user\n---\n\xff\xfe\x00" * 50)


def _binary_index(m, o):
    (m / "MEMORY.md").write_bytes(b"\xff\xfe- [Real](user_real.md)\x00\n")


def _folder_shaped(m, o):
    (m / "MEMORY.md").unlink()
    (m / "MEMORY.md").mkdir()
    (m / "user_dir.md").mkdir()


def _one_line_file(m, o):
    (m / "user_long.md").write_bytes(b"---\nname: Long\ndescription: long\ntype: user\n---\n" + b"x" * (5 * 1024**2))


def _device(m, o):
    try:
        os.symlink("/dev/zero", m / "user_zero.md")
    except OSError:
        pytest.skip("cannot create a symlink here")


TRAPS = {f.__name__.lstrip("_"): f for f in (
    _symlink_state, _symlink_team, _symlink_logs, _symlink_memory, _symlink_index, _symlink_subfolder,
    _symlink_state_files, _fifo_state_files, _fifo_memory, _fifo_index, _huge_index, _huge_memory, _binary_memory, _binary_index,
    _folder_shaped, _one_line_file, _device)}
AS_PROCESS = {"fifo_memory", "fifo_index", "fifo_state_files"}  # hooks for these also run as real processes, with a timeout

COMMANDS = [
    ("list",), ("list", "--team"), ("show", "passwd"), ("show", "pipe"), ("show", "binary"), ("show", "Real"),
    ("index",), ("index", "--capped"), ("doctor",), ("doctor", "--fix"), ("recall", "which editor does the user use"),
    ("remember", "The user deploys on Fridays", "--type", "project"),
    ("remember", "Team uses trunk-based development", "--type", "feedback", "--team"),
    ("forget", "Real"), ("index", "--rebuild"), ("dream", "--engine", "offline"),
]


@pytest.fixture(params=sorted(TRAPS))
def trapped(request, memory, outside):
    (memory / "user_real.md").write_text(REAL)
    (memory / "MEMORY.md").write_text("- [Real](user_real.md) — editor choice vim\n")
    (memory / ".memdir").mkdir()
    (memory / "team").mkdir(exist_ok=True)
    TRAPS[request.param](memory, outside)
    return request.param, memory


def test_every_command_against_every_trap(trapped, outside, tally):
    name, memory = trapped
    before_outside = snapshot(outside)
    real_before = (memory / "user_real.md").read_bytes()
    for argv in COMMANDS:
        full = ("--dir", str(memory), *argv)
        code, out, err = run_inproc(tally, *full, timeout=20)  # a watchdog turns a blocked call into a counted hang
        assert code != -9, f"{name}: memdir {' '.join(argv)} hung"
        assert code == 0 or one_clear_line(code, err) or argv[0] == "doctor", (name, argv, code, err)
        assert CANARY not in out + err, (name, argv)
        if argv[0] == "forget" and code == 0:  # the one command meant to remove it: its bytes are in history
            kept = [p for p in (memory / ".memdir" / "history").rglob("*") if p.is_file() and not p.is_symlink()]
            assert any(p.read_bytes() == real_before for p in kept), (name, "forgotten memory not kept in history")
            (memory / "user_real.md").write_bytes(real_before)
    assert count_lost(tally, before_outside, snapshot(outside)) == 0, name
    assert not [p for p in outside.rglob("*") if p.relative_to(outside).as_posix() not in before_outside
                and not p.is_dir()], f"{name}: something was written outside the memory folder"
    assert tally.tracebacks == 0 and tally.hangs == 0 and tally.escapes == 0


def test_doctor_calls_every_trap_unhealthy(trapped, tally):
    name, memory = trapped
    code, out, err = run_inproc(tally, "--dir", str(memory), "doctor", "--json")
    report = json.loads(out)
    assert code == 1 and not report["healthy"], (name, report)
    if "symlink" in name:
        assert any(f["code"] == "symlink" for f in report["findings"]), report


def _hook(tally, event: str, payload: dict, env_memory) -> str:
    from memdir.entry.hooks import main

    tally.tried += 1
    out = io.StringIO()
    try:
        code = main([event], stdin=io.StringIO(json.dumps(payload)), stdout=out)
    except Exception as exc:  # noqa: BLE001
        tally.tracebacks += 1
        tally.notes.append(f"traceback: hook {event}: {type(exc).__name__}: {exc}")
        return ""
    assert code == 0
    record_escape(tally, f"hook {event}", out.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("event", ["session-start", "prompt"])
def test_hooks_against_every_trap(trapped, outside, tally, monkeypatch, event):
    name, memory = trapped
    if name in AS_PROCESS:
        payload = json.dumps({"session_id": "s", "cwd": str(outside), "hook_event_name": "x",
                              "prompt": "which editor does the user use", "source": "startup"})
        proc = run_cli(tally, "hook", event, stdin=payload, env={"MEMDIR_PATH": str(memory)}, timeout=20)
        assert proc.returncode == 0 and CANARY not in proc.stdout
        return
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    before = snapshot(outside)
    output = _hook(tally, event, {"session_id": "s", "cwd": str(outside), "prompt": "which editor does the user use",
                                  "source": "startup"}, memory)
    assert CANARY not in output
    assert count_lost(tally, before, snapshot(outside)) == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions, so a read-only folder is writable")
def test_read_only_folder_is_one_line(memory, tally):
    (memory / "user_real.md").write_text(REAL)
    memory.chmod(0o500)
    try:
        code, _, err = run_inproc(tally, "--dir", str(memory), "remember", "x y z", "--type", "user")
        assert one_clear_line(code, err), err
        assert (memory / "user_real.md").read_text() == REAL
    finally:
        memory.chmod(0o700)
