from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from memdir.config import Settings
from memdir.fsio import locked
from memdir.index import linked_files
from memdir.stages.extractor import state
from memdir.stages.extractor.schedule import request_extraction
from tests import api_payloads as P
from tests.fake_api import FakeAPI


def _user(uuid: str, text: str) -> str:
    return json.dumps({"type": "user", "uuid": uuid, "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
                       "message": {"role": "user", "content": text}})


def _spawn(*argv: str, env: dict) -> subprocess.Popen:
    import os

    return subprocess.Popen([sys.executable, "-m", "memdir.entry.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **env})


@pytest.mark.slow  # seconds: thousands of files or several processes (.ci/run runs it with --slow)
def test_concurrent_extracts_make_one_run_and_one_trailing_run(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_user("u1", "Remember that the staging database is shared with QA.") + "\n")
    memory = tmp_path / "memory"

    def respond(body, n):
        # The first run's answer waits until the second request was stashed: on a loaded machine a
        # process can take seconds to start, and a fixed delay made this test depend on the clock.
        deadline = time.monotonic() + 60
        while n == 0 and not state.pending_path(memory).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return P.message([P.text("Nothing to save.")])

    with FakeAPI(respond) as api:
        env = {"ANTHROPIC_BASE_URL": api.url, "MEMDIR_ENGINE": "llm"}
        first = _spawn("--dir", str(memory), "extract", str(transcript), "--session", "s1", "--json", env=env)
        deadline = time.monotonic() + 10
        while not api.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        with open(transcript, "a") as handle:  # the user's next turn arrives while the first run works
            handle.write(_user("u2", "Remember that releases go out on Tuesdays.") + "\n")
        second = _spawn("--dir", str(memory), "extract", str(transcript), "--session", "s1", "--json", env=env)
        out2, err2 = second.communicate(timeout=90)
        out1, err1 = first.communicate(timeout=90)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert [r["status"] for r in json.loads(out2)] == ["stashed"]
    assert [r["status"] for r in json.loads(out1)] == ["nothing", "nothing"]  # the run + its trailing run
    assert len(api.requests) == 2
    trailing = api.requests[1]["messages"][0]["content"][1]["text"]
    assert "releases go out on Tuesdays" in trailing and "staging database" not in trailing
    assert state.load_cursor(memory, "s1")["uuid"] == "u2"
    assert not state.pending_path(memory).exists()


def test_offline_concurrent_writers_leave_whole_files(tmp_path):
    memory = tmp_path / "memory"
    procs = []
    for i in range(4):
        transcript = tmp_path / f"t{i}.jsonl"
        transcript.write_text(_user(f"u{i}", f"Remember that service {i} is owned by team {i}.") + "\n")
        procs.append(_spawn("--dir", str(memory), "extract", str(transcript), "--engine", "offline", env={}))
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    from memdir.store import MemoryStore

    store = MemoryStore(memory)
    # Runs that found a run in progress were stashed; newest-wins means some requests merge into
    # one trailing run, so every file that exists is whole and indexed, and at least one ran.
    headers = store.scan().headers
    assert headers and all(store.load(h.rel_path) for h in headers)
    assert sorted(h.rel_path for h in headers) == sorted(linked_files(store.index()))


def test_request_arriving_mid_run_is_stashed_newest_wins(tmp_path):
    memory = tmp_path / "memory"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_user("u1", "Remember that I am the on-call lead this week.") + "\n")
    settings = Settings(engine="offline")
    with locked(state.state_dir(memory) / "extract.lock"):  # another process is running
        a = request_extraction(memory, {"transcript": str(transcript), "session_id": "A"}, settings=settings)
        b = request_extraction(memory, {"transcript": str(transcript), "session_id": "B"}, settings=settings)
    assert [r.status for r in a + b] == ["stashed", "stashed"]
    assert json.loads(state.pending_path(memory).read_text())["session_id"] == "B"
    results = request_extraction(memory, {"transcript": str(transcript), "session_id": "C"}, settings=settings)
    assert len(results) == 2  # C, then exactly one trailing run (B's)
    assert state.load_cursor(memory, "B")["uuid"] == "u1" and state.load_cursor(memory, "A")["uuid"] is None


def test_throttle_runs_every_n_turns(tmp_path):
    memory = tmp_path / "memory"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_user("u1", "Remember that the API freeze is on 2026-04-01.") + "\n")
    settings = Settings(engine="offline", extract_every_n_turns=3)
    request = {"transcript": str(transcript), "session_id": "s", "hook": True}
    statuses = [request_extraction(memory, request, settings=settings)[0].status for _ in range(3)]
    assert statuses[:2] == ["skipped", "skipped"] and statuses[2] == "saved"
    assert state.load_cursor(memory, "s") == {"uuid": "u1", "turns": 0}
