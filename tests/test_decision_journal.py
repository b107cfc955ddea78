"""The Tier 2 journal: SPEC §8 record shape, append-only, locked, durable under concurrency and SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from memdir.decisions import Decision, append, append_lines, journal_path, lock_for, read_journal
from memdir.fsio import try_locked

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def decision(what: str, **kw) -> Decision:
    return Decision(kind=kw.pop("kind", "decision"), what=what, confidence=kw.pop("confidence", 0.8), **kw)


def test_record_shape_is_spec_section_8(tmp_path):
    d = decision("Use cursor-based pagination", why="offsets time out", entities=["cursor-pagination"],
                 category="api", project="shop", source="explicit", scope="team")
    append(tmp_path, [d])
    line = json.loads(journal_path(tmp_path).read_text())
    assert line == {
        "id": d.id, "type": "decision", "content": {"what": "Use cursor-based pagination", "why": "offsets time out"},
        "entities": ["cursor-pagination"],
        "metadata": {"timestamp": d.timestamp, "confidence": 0.8, "category": "api", "project": "shop",
                     "scope": "team", "source": "explicit"},
    }
    assert journal_path(tmp_path) == tmp_path / "decisions.jsonl"
    assert read_journal(tmp_path).decisions == [d]


def test_the_journal_lives_in_the_memory_folder_unless_orchestkit_layout_is_chosen(tmp_path):
    from memdir.paths import decisions_dir

    memory, repo = tmp_path / "memory", tmp_path / "repo"
    assert decisions_dir(memory, repo, compat=False) == memory / ".memdir" / "decisions"
    assert decisions_dir(memory, repo, compat=True) == repo / ".claude" / "memory"


def test_appends_never_rewrite_history_and_corrupt_lines_are_counted(tmp_path):
    append(tmp_path, [decision("First")])
    path = journal_path(tmp_path)
    with open(path, "ab") as handle:
        handle.write(b'{"id": "broken", "type": "decision", "content": \n')  # torn JSON
        handle.write(b'{"id": "x", "type": "unknown-kind", "content": {"what": "y"}, "metadata": {"confidence": 1}}\n')
    before = path.read_bytes()
    append(tmp_path, [decision("Second")])
    assert path.read_bytes().startswith(before)  # earlier bytes untouched, corrupt ones included
    read = read_journal(tmp_path)
    assert [d.what for d in read.decisions] == ["First", "Second"]
    assert read.corrupt_lines == 2


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from memdir.decisions import Decision, append
    root, worker, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    for i in range(count):
        pad = [f"entity-{j}" for j in range(i * 37 % 400)]  # records of very different sizes
        append(root, [Decision(kind="note", what=f"writer {worker} record {i}", entities=pad, confidence=0.5)])
""")


@pytest.mark.slow  # seconds: thousands of files or several processes (.ci/run runs it with --slow)
def test_eight_concurrent_writer_processes_lose_nothing(tmp_path):
    count = 40
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(w), str(count)], cwd=REPO)
             for w in range(8)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    read = read_journal(tmp_path)
    assert read.corrupt_lines == 0
    seen = {(d.what.split()[1], d.what.split()[3]) for d in read.decisions}
    assert len(read.decisions) == 8 * count and len(seen) == 8 * count


KILLED_MID_WRITE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from memdir import decisions
    root, flag = Path(sys.argv[1]), sys.argv[2]
    real_write = os.write
    def half_then_hang(fd, data):
        written = real_write(fd, bytes(data[: len(data) // 2]))
        open(flag, "w").close()
        time.sleep(60)
        return written
    os.write = half_then_hang
    decisions.append(root, [decisions.Decision(kind="decision", what="torn " + "y" * 400, confidence=0.9)])
""")


def test_sigkill_mid_write_leaves_one_corrupt_line_and_the_next_append_is_clean(tmp_path):
    append(tmp_path, [decision("Before the crash")])
    flag = tmp_path / "half-written"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, str(tmp_path), str(flag)], cwd=REPO)
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "writer never reached the middle of its write"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)  # while it holds the lock with half a line written
    proc.wait(timeout=10)
    assert not journal_path(tmp_path).read_bytes().endswith(b"\n")
    with try_locked(lock_for(journal_path(tmp_path))) as free:
        assert free  # the dead writer's lock is gone with it: nobody waits out a lock timeout
    append(tmp_path, [decision("After the crash")])
    read = read_journal(tmp_path)
    assert [d.what for d in read.decisions] == ["Before the crash", "After the crash"]
    assert read.corrupt_lines == 1


LOOPING_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from memdir.decisions import append_lines
    path, n = Path(sys.argv[1]), 0
    while True:
        append_lines(path, [{"n": n, "pad": "z" * 50_000}])
        n += 1
""")


def test_sigkill_at_random_points_never_glues_records(tmp_path):
    path = tmp_path / "journal.jsonl"
    for round_ in range(4):
        size = path.stat().st_size if path.exists() else 0
        proc = subprocess.Popen([sys.executable, "-c", LOOPING_WRITER, str(path)], cwd=REPO)
        deadline = time.monotonic() + 60  # a hang guard: start-up can take seconds on a loaded machine
        while (path.stat().st_size if path.exists() else 0) <= size:  # until it is in its append loop
            assert proc.poll() is None and time.monotonic() < deadline, "the writer never appended"
            time.sleep(0.005)
        time.sleep(0.05 + 0.013 * round_)  # then a few more appends, so each kill lands somewhere else
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        append_lines(path, [{"marker": round_}])
    good = bad = 0
    markers = []
    for raw in path.read_bytes().splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        good += 1
        if "marker" in obj:
            markers.append(obj["marker"])
    assert markers == [0, 1, 2, 3]  # every append after a kill landed whole, on its own line
    assert good > 4 and bad <= 4
