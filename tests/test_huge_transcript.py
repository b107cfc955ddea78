"""The Stop worker reads a bounded end of a huge transcript, saves from it, and says what it left unread.

Before, the first Stop of a 1 GB session parsed all of it (240 s, 3.4 GB RSS); benchmarks/huge_transcript.py
measures the real size. Here the budget is shrunk so the same path runs on a few hundred KB.
"""

from __future__ import annotations

import json
from datetime import date

import pytest

from memdir import constants as C
from memdir.config import Settings
from memdir.stages.extractor import state
from memdir.stages.extractor.run import extract_transcript


def _line(uuid: str, role: str, text: str) -> str:
    return json.dumps({"type": role, "uuid": uuid, "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
                       "cwd": "/repo", "message": {"role": role, "content": text if role == "user" else
                                                   [{"type": "text", "text": text}]}})


def test_first_stop_on_a_huge_session_reads_the_end_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "TRANSCRIPT_READ_MAX_BYTES", 3 << 20)
    lines = []
    for i in range(400):  # ~8 MB of old chatter the budget leaves for `memdir batch`
        lines += [_line(f"old-u{i}", "user", f"look at file {i}"), _line(f"old-a{i}", "assistant", "y" * 20_000)]
    lines += [_line("u-last", "user", "Remember that I'm the tech lead for payments."), _line("a-last", "assistant", "Noted.")]
    transcript = tmp_path / "huge.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    memory = tmp_path / "memory"
    memory.mkdir()

    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="offline"),
                                today=date(2026, 3, 2))

    assert result.status == "saved"
    saved = " ".join(path.read_text() for path in memory.glob("*.md") if path.name != "MEMORY.md")
    assert "tech lead for payments" in saved
    assert "read only the last 3 MB of the transcript" in result.reason and "memdir batch" in result.reason
    assert state.load_cursor(memory, "s1")["uuid"] == "a-last"  # the next Stop starts after what was read


@pytest.mark.slow  # two seconds: a real worker process waits out its alarm (.ci/run runs it with --slow)
def test_a_worker_past_its_wall_clock_bound_stops_and_says_so(tmp_path, monkeypatch):
    """The detached Stop worker has a time bound; passing it ends the run like a crash, logged in one line."""
    import subprocess
    import sys
    import textwrap

    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("u1", "user", "Remember that I'm the tech lead for payments.") + "\n")
    memory = tmp_path / "memory"
    memory.mkdir()
    script = textwrap.dedent(f"""
        import runpy, sys, time
        import memdir.constants as C
        import memdir.stages.extractor.schedule as schedule
        C.WORKER_MAX_SECONDS = 1
        def stuck(*a, **k):
            time.sleep(30)
        schedule.request_extraction = stuck
        sys.argv = ["worker", {json.dumps(json.dumps({"cwd": str(tmp_path), "transcript": str(transcript),
                                                       "session_id": "s1"}))}]
        runpy.run_module("memdir.entry.worker", run_name="__main__")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20,
                          env={**__import__("os").environ, "MEMDIR_PATH": str(memory)})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "worker stopped after 1 s" in (memory / ".memdir" / "hook.log").read_text()


def test_the_huge_transcript_benchmark_builds_one_conversation(realdata, tmp_path):
    # mend20: every copy kept the real session's root, so the copies were sibling prompts of one parent and all but
    # the last read as rewound: the benchmark timed a read that dropped nearly everything it parsed.
    from benchmarks.huge_transcript import _real_transcript, build
    from memdir.transcript import read_transcript

    built = read_transcript(build(tmp_path / "huge.jsonl", 3))
    real = read_transcript(_real_transcript())

    assert built.off_branch_lines == 0
    assert len(built.messages) > 2 * len(real.messages)  # the copies are read, not only the real session
    assert [m.uuid for m in built.messages[-len(real.messages):]] == [m.uuid for m in real.messages]  # last, unchanged
