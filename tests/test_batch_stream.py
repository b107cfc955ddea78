"""`memdir batch` reads a transcript forward, a window at a time, and gives the same messages as the whole read.

Before, batch parsed the whole transcript into memory first (a 315 MB session took 458 MB); the slow test
below measures a ~100 MB one. benchmarks/batch_memory.py measures a real session repeated to N MB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.evals.realdata_path import main_sessions
from memdir.stages.extractor.batch import windows
from memdir.transcript import read_transcript
from memdir.transcript_stream import iter_messages, transcript_windows


def _line(kind: str, uuid: str, content, parent: str | None, mid: str | None = None, **extra) -> str:
    message: dict = {"role": kind, "content": content}
    if mid:
        message["id"] = mid
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "cwd": "/repo",
                       "timestamp": "2026-03-02T09:00:00Z", "message": message, **extra})


def _tricky(path: Path) -> Path:
    """A rewind, a response split over two lines, a sidechain, metadata, a bad line, an oversized line."""
    lines = [
        json.dumps({"type": "summary", "summary": "old"}),
        _line("user", "u1", "first prompt, later rewound", None),
        _line("assistant", "a1", [{"type": "text", "text": "On it."}], "u1", mid="m1"),
        _line("user", "u1b", "the prompt that replaced it", None),
        _line("assistant", "a2", [{"type": "text", "text": "Part one."}], "u1b", mid="m2"),
        _line("assistant", "a3", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
              "a2", mid="m2"),
        _line("user", "r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 300}], "a3"),
        _line("user", "side", "a subagent's line", "r1", isSidechain=True),
        "{not json",
        _line("user", "big", "y" * 5000, "r1"),
        _line("user", "u3", "Remember that we deploy on Fridays.", "r1"),
        _line("assistant", "a4", [{"type": "text", "text": "Noted."}], "u3", mid="m4"),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_forward_read_gives_exactly_the_whole_reads_messages(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "TRANSCRIPT_LINE_MAX_BYTES", 2000)  # the "big" line is over it, both ways
    monkeypatch.setattr("memdir.transcript.TRANSCRIPT_LINE_MAX_BYTES", 2000)
    monkeypatch.setattr("memdir.transcript_stream.TRANSCRIPT_LINE_MAX_BYTES", 2000)
    path = _tricky(tmp_path / "t.jsonl")

    streamed = list(iter_messages(path))

    assert streamed == read_transcript(path).messages
    assert [m.uuid for m in streamed] == ["u1b", "a3", "r1", "u3", "a4"]  # rewound, sidechain, big: left out


@pytest.mark.parametrize("cursor", [None, "a3", "u3", "a4", "gone"])
def test_windows_follow_the_cursor_as_before(tmp_path, cursor):
    path = _tricky(tmp_path / "t.jsonl")

    got = [[m.uuid for m in w] for w in transcript_windows(path, cursor, 2)]

    assert got == [[m.uuid for m in w] for w in windows(read_transcript(path).messages, cursor, 2)]


def test_a_json_list_transcript_is_still_windowed(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": f"message {i}"} for i in range(5)]))

    assert [[m.uuid for m in w] for w in transcript_windows(path, "msg-1", 2)] == [["msg-2", "msg-3"], ["msg-4"]]


def test_the_real_sessions_read_forward_as_they_read_whole(realdata):
    for path in main_sessions(realdata):
        assert list(iter_messages(path)) == read_transcript(path).messages, path


def _count_and_peak(tmp_path: Path, script: str, path: Path, **env: str) -> tuple[int, int]:
    """Run `script` (which prints one count) in a child reading `path` with the code under test, and return the count
    and the child's own peak memory in MB. VmHWM, its high-water mark since exec; not ru_maxrss: Linux carries it
    across fork and exec, so in CI's one-process slow run the child reported pytest's own 208 MB."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    peak = 'print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) >> 10)\n'
    done = subprocess.run([sys.executable, "-c", script + peak, str(path)], capture_output=True, text=True, timeout=600,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **env})
    assert done.returncode == 0, done.stderr[-2000:]
    count, peak_mb = (int(value) for value in done.stdout.split())
    return count, peak_mb


WALK = """
import sys
from pathlib import Path
from memdir.config import Settings
from memdir.stages.extractor.batch import run_batch
report = run_batch([Path(sys.argv[1])], settings=Settings(engine="offline"), engine="offline", dry_run=True)
assert not report.errors, report.errors
print(sum(row.windows for row in report.rows.values()))
"""


@pytest.mark.slow  # writes and reads a 100 MB transcript (about 10 s); .ci/run runs it with --slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the walk's peak memory from /proc (Linux)")
def test_batch_of_a_100_mb_transcript_stays_well_under_its_size_in_memory(tmp_path):
    path = tmp_path / "big.jsonl"
    filler = "z" * 20_000
    with open(path, "w", encoding="utf-8") as out:
        parent = None
        for i in range(5000):  # ~100 MB: each turn a short prompt and a long answer
            out.write(_line("user", f"u{i}", f"look at file {i}", parent) + "\n")
            out.write(_line("assistant", f"a{i}", [{"type": "text", "text": filler}], f"u{i}", mid=f"m{i}") + "\n")
            parent = f"a{i}"
    size_mb = path.stat().st_size >> 20
    assert size_mb >= 95

    walked, peak_mb = _count_and_peak(tmp_path, WALK, path, MEMDIR_ENGINE="offline")
    assert walked == 5000 * 2 // 20  # every window was walked
    assert peak_mb < 80, f"peak RSS {peak_mb} MB for a {size_mb} MB transcript"  # the whole read took ~200 MB


FORWARD = """
import sys
from pathlib import Path
from memdir.transcript_stream import iter_messages
print(sum(1 for _ in iter_messages(Path(sys.argv[1]))))
"""


@pytest.mark.slow  # writes and reads a million lines (about 25 s); .ci/run runs it with --slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the read's peak memory from /proc (Linux)")
def test_a_million_tiny_lines_are_read_forward_in_memory_that_does_not_grow_with_the_lines(tmp_path):
    # hostile20: a link per line kept in memory for the rewinds took 586 MB for 3 million tiny lines. A million
    # here, half of them prompts and the first one rewound, so that every line's link and its branch are needed; the
    # other half each of a type of its own, which the forward read does not report (read_transcript counts them).
    path = tmp_path / "tiny.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "user", "uuid": "old", "parentUuid": None,
                              "message": {"role": "user", "content": "rewound"}}) + "\n")
        out.write(json.dumps({"type": "progress", "uuid": "old-1", "parentUuid": "old"}) + "\n")
        parent = None
        for i in range(500_000):
            uuid = f"{i:08x}-0000-4000-8000-000000000000"
            if i % 2:
                out.write(json.dumps({"type": f"kind-{i}", "uuid": uuid, "parentUuid": parent}) + "\n")  # unknown types
            else:
                out.write(json.dumps({"type": "user", "uuid": uuid, "parentUuid": parent,
                                      "message": {"role": "user", "content": "x"}}) + "\n")
            parent = uuid
    read, peak = _count_and_peak(tmp_path, FORWARD, path)
    assert read == 250_000  # every prompt but the rewound one
    assert peak < 40, f"peak RSS {peak} MB for a million tiny lines"  # links in memory: 239 MB; types counted: 47


WINDOWS = """
import sys
from pathlib import Path
from memdir.transcript_stream import transcript_windows
print(sum(len(window) for window in transcript_windows(Path(sys.argv[1]), None, 20)))
"""


@pytest.mark.slow  # writes and reads a 100 MB JSON list (about 5 s); .ci/run runs it with --slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the read's peak memory from /proc (Linux)")
def test_a_100_mb_json_list_transcript_is_windowed_in_memory_well_under_its_size(tmp_path):
    # hostile20: a JSON-list transcript was parsed whole, 220 MB for a 100 MB one.
    path = tmp_path / "big.json"
    filler = "z" * 20_000
    with open(path, "w", encoding="utf-8") as out:
        out.write("[\n")
        out.write(",\n".join(json.dumps({"role": "assistant" if i % 2 else "user", "content": filler if i % 2 else f"look at {i}"})
                             for i in range(10_000)))
        out.write("\n]\n")
    assert path.stat().st_size >> 20 >= 95
    read, peak = _count_and_peak(tmp_path, WINDOWS, path)
    assert read == 10_000
    assert peak < 60, f"peak RSS {peak} MB for a 100 MB JSON list"  # parsed whole: 205 MB


def test_an_answer_logged_before_its_question_call_is_confirmed_as_in_the_whole_read(tmp_path):
    # read_transcript learns every call before confirming any result; the forward read must too, or the
    # user's answer (or rejection reason) on a line that precedes its call is read as plain tool output.
    path = tmp_path / "t.jsonl"
    answer = _line("user", "r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}], "a1",
                   toolUseResult={"answers": {"Which tabs?": "Always spaces"}})
    ask = _line("assistant", "a1", [{"type": "tool_use", "id": "t1", "name": "AskUserQuestion", "input": {}}],
                "u1", mid="m1")
    path.write_text("\n".join([_line("user", "u1", "set up the linter", None), answer, ask]) + "\n")

    streamed = list(iter_messages(path))

    assert streamed == read_transcript(path).messages
    assert [(m.uuid, m.kind) for m in streamed] == [("u1", "prompt"), ("r1", "answer"), ("a1", None)]


def test_a_transcript_that_grows_while_read_gives_what_it_held_when_the_read_began(tmp_path):
    # A live session keeps appending while batch works through its windows: the second pass stops where the
    # first did, so a writer that never stops cannot keep the read going, and both passes see the same lines.
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_line("user", f"u{i}", f"prompt {i}", f"u{i - 1}" if i else None) for i in range(3)) + "\n")
    stream = iter_messages(path)

    first = next(stream)
    with open(path, "a", encoding="utf-8") as out:
        for i in range(3, 500):
            out.write(_line("user", f"u{i}", f"prompt {i}", f"u{i - 1}") + "\n")

    assert [first.uuid, *(m.uuid for m in stream)] == ["u0", "u1", "u2"]


@pytest.mark.timeout(30)  # the bug this guards is a hang: fail fast instead
@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_transcript_that_is_no_regular_file_is_one_line_and_no_hang(tmp_path, kind):
    import os

    from memdir.errors import MemdirError

    path = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer for ever
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")  # never ends
    with pytest.raises(MemdirError, match="not a regular file"):
        list(iter_messages(path))


def test_lines_of_one_response_join_into_bounded_messages_in_both_reads(tmp_path):
    """A file of many lines under one `message.id` (hostile or broken) is not one message growing with the file."""
    lines = [_line("user", "u0", "start", None)]
    lines += [_line("assistant", f"a{i}", [{"type": "text", "text": f"part {i}"}], "u0" if i == 0 else f"a{i - 1}",
                    mid="msg_same") for i in range(C.RESPONSE_BLOCKS_MAX * 2 + 5)]
    path = tmp_path / "one-id.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    forward = list(iter_messages(path))
    whole = read_transcript(path).messages
    for messages in (forward, whole):
        assert [len(m.content) for m in messages] == [1, C.RESPONSE_BLOCKS_MAX, C.RESPONSE_BLOCKS_MAX, 5]
    assert sum(len(m.content) for m in forward) == C.RESPONSE_BLOCKS_MAX * 2 + 6  # nothing dropped
