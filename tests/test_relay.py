"""The eval relay: memdir's anthropic engine, unchanged, talks to a loopback Messages API whose model answers in
files, and cassettes record those answers and replay them (evals/relay.py, evals/model_loop.py, evals/cassette.py)."""

from __future__ import annotations

import json
import threading
from datetime import date
from pathlib import Path

import httpx
import pytest

from memdir.config import Settings
from memdir.errors import MemdirError
from memdir.evals.cassette import Cassette, CassetteError, normalise, request_key, restore
from memdir.evals.model_loop import model_loop
from memdir.evals.relay import LoopbackAPI, LoopError, RelayDir, relay_timeout
from memdir.stages.extractor.run import extract_transcript
from tests import api_payloads as P
from tests.fake_api import FakeAPI
from tests.relay_files import wait_for, write_answer

TODAY = date(2026, 3, 2)
MEMORY = ("---\nname: Release day\ndescription: Releases go out on Tuesdays\ntype: project\n---\n"
          "Releases go out on Tuesdays.\n\n**Why:** the user said so.\n**How to apply:** plan releases for Tuesday.\n")


def _transcript(folder: Path, words: str = "Remember that releases go out on Tuesdays.") -> Path:
    line = {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
            "message": {"role": "user", "content": words}}
    path = folder / "session.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _relay_gives_up_in_minutes(monkeypatch):
    """A relay waits 30 minutes for its model by default; here a lost answer fails the test in 2 instead
    of stalling the suite (seen twice under heavy load, never reproduced at normal load)."""
    monkeypatch.setenv("MEMDIR_RELAY_TIMEOUT", "120")


class Model(threading.Thread):
    """Acts as the model: answers request N in the relay folder with answers[N-1] (a callable gets the memory dir)."""

    def __init__(self, folder: Path, answers: list) -> None:
        super().__init__(daemon=True)
        self.folder, self.answers, self.seen = folder, answers, []

    def run(self) -> None:
        for n, answer in enumerate(self.answers, start=1):
            request = self.folder / f"{n:04d}.request.json"
            wait_for(request.with_suffix(".md"))  # written last, as the relay says to read it
            self.seen.append((request.read_text(encoding="utf-8"), request.with_suffix(".md").read_text(encoding="utf-8")))
            write_answer(self.folder / f"{n:04d}.response.json", answer)


def _extract(transcript: Path, memory: Path, loop):
    loop.begin("demo/session", memory)
    return extract_transcript(transcript, memory, settings=Settings(engine="llm"), engine="llm", today=TODAY,
                              client=loop.client())


def test_memdir_talks_to_the_relay_unchanged_and_the_recording_replays_into_another_folder(tmp_path, monkeypatch):
    relay, cassette, memory = tmp_path / "relay", tmp_path / "cassette", tmp_path / "memory"
    transcript = _transcript(tmp_path)
    write = {"content": [{"type": "text", "text": "One project fact."},
                         {"type": "tool_use", "name": "Write",
                          "input": {"file_path": str(memory / "project_release_day.md"), "content": MEMORY}}]}
    with model_loop("relay", relay_dir=str(relay), record=str(cassette), replay=None, misses=tmp_path / "m") as loop:
        model = Model(relay, [write])
        model.start()
        result = _extract(transcript, memory, loop)
        assert loop.failure is None
        loop.finish()
    assert result.status == "saved" and result.turns == 1, result.reason
    assert "Releases go out on Tuesdays." in (memory / "project_release_day.md").read_text(encoding="utf-8")
    sent, shown = model.seen[0]
    assert json.loads(sent)["model"] == Settings().extract_model
    for part in ("Answer as the model: write `0001.response.json`", "======== system ========",
                 "-------- tool Write --------", "-------- message 1: user --------", "releases go out on Tuesdays"):
        assert part in shown

    [entry] = Cassette(cassette).entries.values()  # recorded with the run's folder as a placeholder
    assert str(memory) not in json.dumps(entry.request) + json.dumps(entry.response)
    assert entry.response["content"][1]["input"]["file_path"] == "<memory-dir>/project_release_day.md"
    assert entry.response["content"][1]["id"] == "toolu_relay_0001_1" and entry.response["usage"]["input_tokens"] > 0
    assert Cassette(cassette).sessions == ["demo/session"]

    other = tmp_path / "elsewhere" / "memory"
    with model_loop("auto", relay_dir=None, record=None, replay=str(cassette), misses=tmp_path / "m") as loop:
        again = _extract(transcript, other, loop)
    assert again.status == "saved"
    assert (other / "project_release_day.md").read_bytes() == (memory / "project_release_day.md").read_bytes()


def _body(tools: bool = True) -> dict:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hello"}]}
    if tools:
        body["tools"] = [{"name": "Write", "input_schema": {"type": "object"}}]
    return body


def test_a_wrong_answer_is_reported_in_one_line_and_read_again_once_fixed(tmp_path):
    relay = RelayDir(tmp_path, timeout=60, poll=0.02)
    got: list = []
    asking = threading.Thread(target=lambda: got.append(relay.ask(_body(), "k1", "s")), daemon=True)
    asking.start()
    wait_for(tmp_path / "0001.request.md")
    write_answer(tmp_path / "0001.response.json", {"content": [{"type": "tool_use", "name": "Wirte", "input": {}}]})
    problem = tmp_path / "0001.response.problem.txt"
    wait_for(problem)
    assert problem.read_text(encoding="utf-8").splitlines() == [
        "0001.response.json: content.0: tool 'Wirte' is not one of this request's tools (Write); "
        "fix the file (it is read again when it changes)"]
    write_answer(tmp_path / "0001.response.json",
            {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": "a.md", "content": "x"}}]})
    asking.join(30)
    [full] = got
    assert (full["id"], full["model"], full["stop_reason"], full["role"]) == (
        "msg_relay_0001", "claude-sonnet-5-5", "tool_use", "assistant")
    assert full["content"][0]["id"] == "toolu_relay_0001_0" and full["usage"]["output_tokens"] > 0
    assert not problem.exists()


def test_whoever_answers_never_sees_the_session_s_key(tmp_path, capsys):
    """A held-out session's file name can give its annotation away (`ko-push-nothing`): neither the request
    nor the relay's log line names it, and one session's requests still share a tag."""
    relay = RelayDir(tmp_path, timeout=0.05, poll=0.01)
    for key in ("a", "b"):
        with pytest.raises(LoopError):
            relay.ask(_body(), key, "fresh2/en-statusline-nothing")
    said = capsys.readouterr().err
    shown = [(tmp_path / f"000{n}.request.md").read_text(encoding="utf-8") for n in (1, 2)]
    assert "nothing" not in said + "".join(shown) and "statusline" not in said + "".join(shown)
    tags = {line.split("(session ")[1].split(")")[0] for line in said.splitlines() if "(session " in line}
    assert len(tags) == 1 and all(f"(session {tags.pop()})" in text for text in shown[:1])


def test_retries_of_one_request_wait_on_one_file_and_a_new_run_never_overwrites(tmp_path):
    relay = RelayDir(tmp_path, timeout=60, poll=0.02)
    got: list = []
    askers = [threading.Thread(target=lambda: got.append(relay.ask(_body(), "same", "s")), daemon=True) for _ in "ab"]
    for asker in askers:
        asker.start()
    wait_for(tmp_path / "0001.request.json")
    write_answer(tmp_path / "0001.response.json", {"content": "Nothing to save.", "stop_reason": "end_turn"})
    for asker in askers:
        asker.join(30)
    assert [g["content"] for g in got] == [[{"type": "text", "text": "Nothing to save."}]] * 2
    assert sorted(p.name for p in tmp_path.glob("*.request.json")) == ["0001.request.json"]
    later = RelayDir(tmp_path, timeout=0.05, poll=0.01)
    with pytest.raises(LoopError):
        later.ask(_body(), "same", "s")
    assert (tmp_path / "0002.request.json").exists()


def test_no_answer_in_time_fails_the_run_with_one_line_and_no_retry(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDIR_RELAY_TIMEOUT", "0.3")
    relay = tmp_path / "relay"
    with model_loop("relay", relay_dir=str(relay), record=None, replay=None, misses=tmp_path / "m") as loop:
        result = _extract(_transcript(tmp_path), tmp_path / "memory", loop)
    assert result.status == "failed"
    assert loop.failure == (f"no answer in {relay / '0001.response.json'} within 0.3 s ($MEMDIR_RELAY_TIMEOUT); "
                            "answer the request in 0001.request.md and run again")
    assert sorted(p.name for p in relay.iterdir()) == ["0001.request.json", "0001.request.md"]


@pytest.mark.parametrize("raw, message", [("abc", "must be a positive number"), ("0", "must be a positive number"),
                                          ("-5", "must be a positive number"), ("", None), ("90", None)])
def test_the_relay_timeout_setting(monkeypatch, raw, message):
    monkeypatch.setenv("MEMDIR_RELAY_TIMEOUT", raw)
    if message is None:
        assert relay_timeout() == (float(raw) if raw else 1800.0)
    else:
        with pytest.raises(MemdirError, match=message):
            relay_timeout()


def test_the_loopback_rejects_what_the_api_would_and_serves_nothing_but_messages():
    asked: list = []
    with LoopbackAPI(lambda incoming: asked.append(incoming) or P.message([P.text("hi")])) as api:
        bad = httpx.post(f"{api.url}/v1/messages", json={**_body(), "temperature": 0.2})
        assert bad.status_code == 400 and bad.headers["x-should-retry"] == "false"
        assert "temperature: Extra inputs are not permitted" in bad.json()["error"]["message"]
        assert api.failure is not None and api.failure.startswith("memdir sent a request the real API would reject")
        counted = httpx.post(f"{api.url}/v1/messages/count_tokens", json=_body())
        assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
        assert httpx.get(f"{api.url}/v1/messages/batches/b1").status_code == 404
        assert httpx.post(f"{api.url}/v1/messages", json=_body()).json()["content"] == [P.text("hi")]
    assert len(asked) == 1


def test_recording_the_real_api_forwards_the_request_with_its_key(tmp_path, monkeypatch):
    memory, cassette = tmp_path / "memory", tmp_path / "cassette"
    with FakeAPI(lambda body, n: P.message([P.text("Nothing worth keeping.")])) as upstream:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        with model_loop("anthropic", relay_dir=None, record=str(cassette), replay=None, misses=tmp_path / "m") as loop:
            result = _extract(_transcript(tmp_path), memory, loop)
            loop.finish()
    assert result.status == "nothing" and len(upstream.requests) == 1
    [entry] = Cassette(cassette).entries.values()
    assert entry.response["content"] == [P.text("Nothing worth keeping.")]
    assert entry.request == normalise(upstream.requests[0], {str(memory): "<memory-dir>"})


def _record_then_change(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A cassette recorded for "Tuesdays", and a transcript now saying "Wednesdays": a request it lacks."""
    cassette, relay = tmp_path / "cassette", tmp_path / "relay"
    nothing = {"content": [{"type": "text", "text": "Nothing to save."}]}
    with model_loop("relay", relay_dir=str(relay), record=str(cassette), replay=None, misses=tmp_path / "m1") as loop:
        Model(relay, [nothing]).start()
        _extract(_transcript(tmp_path, "Remember that releases go out on Tuesdays."), tmp_path / "a", loop)
        loop.finish()
    return cassette, _transcript(tmp_path, "Remember that releases go out on Wednesdays."), nothing


def test_rerecording_asks_only_for_what_changed_shows_the_diff_and_drops_the_stale_answer(tmp_path, capsys):
    cassette, changed, nothing = _record_then_change(tmp_path)
    relay = tmp_path / "relay"
    [old] = Cassette(cassette).entries.values()
    shown: list[str] = []

    def answer_the_changed_request() -> None:  # the relay numbers on after the first run's 0001
        wait_for(relay / "0002.request.md")
        shown.append((relay / "0002.request.md").read_text(encoding="utf-8"))
        write_answer(relay / "0002.response.json", nothing)

    with model_loop("relay", relay_dir=str(relay), record=str(cassette), replay=str(cassette),
                    misses=tmp_path / "m2") as loop:
        threading.Thread(target=answer_the_changed_request, daemon=True).start()
        result = _extract(changed, tmp_path / "b", loop)
        removed = loop.finish()
    assert result.status == "nothing", result.reason
    diff = (tmp_path / "m2" / "0001.diff").read_text(encoding="utf-8")
    assert "-Remember that releases go out on Tuesdays." in diff and "+Remember that releases go out on Wednesdays." in diff
    assert json.loads((tmp_path / "m2" / "0001.nearest-response.json").read_text(encoding="utf-8"))["content"] == \
        nothing["content"]
    # whoever answers is the model, blind: neither the request nor the log it watches points at a recorded answer
    # while it answers; where the diff and the nearest answer are is said once the run is over
    assert "nearest" not in shown[0] and str(cassette) not in shown[0] and "Tuesdays" not in shown[0]
    log = capsys.readouterr().err
    asked = next(line for line in log.splitlines() if "0002.request.md" in line)
    assert "(not in the cassette: a new request)" in asked and "nearest" not in asked
    assert log.index(asked) < log.index(f"nearest recorded request, and that request's answer, are in {tmp_path / 'm2'}")
    assert removed == [old.path] and not old.path.exists()
    assert [e.request["messages"][0]["content"][1]["text"].count("Wednesdays") for e in Cassette(cassette).entries.values()] == [1]


def test_nothing_of_a_recorded_answer_is_on_disk_while_the_relay_answers(tmp_path):
    """hostile22: each miss (the request, its diff and the nearest recorded answer) was written to the run's
    replay-misses/ as the run went: a blind answerer with file access could read the recorded answer there while
    it was still answering. They are kept in memory and written, the same files, once the run is over."""
    cassette, changed, nothing = _record_then_change(tmp_path)
    relay, misses = tmp_path / "relay", tmp_path / "m2"
    seen_while_answering: list[list[str]] = []

    def answer() -> None:
        wait_for(relay / "0002.request.md")
        seen_while_answering.append(sorted(str(p) for p in tmp_path.rglob("*nearest*")))
        write_answer(relay / "0002.response.json", nothing)

    with model_loop("relay", relay_dir=str(relay), record=str(cassette), replay=str(cassette), misses=misses) as loop:
        threading.Thread(target=answer, daemon=True).start()
        result = _extract(changed, tmp_path / "b", loop)
        assert not misses.exists()  # the run is done, finish() not yet called
        loop.finish()
    assert result.status == "nothing", result.reason
    assert seen_while_answering == [[]]
    assert sorted(p.name for p in misses.iterdir()) == ["0001.diff", "0001.nearest-response.json",
                                                        "0001.request.json", "0001.request.md"]
    assert json.loads((misses / "0001.nearest-response.json").read_text(encoding="utf-8"))["content"] == \
        nothing["content"]
    assert json.loads((misses / "0001.request.json").read_text(encoding="utf-8"))["messages"]


def test_a_run_that_fails_after_a_miss_still_leaves_the_miss_on_disk(tmp_path, monkeypatch):
    """No finish() after a failed run: the misses kept in memory are written when the loop ends all the same."""
    from memdir.evals import model_loop as loop_module
    from memdir.evals.relay import PassThrough

    cassette, changed, _ = _record_then_change(tmp_path)

    def answerer_down(incoming, key, session, note):
        raise PassThrough(400, b'{"type": "error", "error": {"type": "invalid_request_error", "message": "down"}}', {})

    monkeypatch.setattr(loop_module, "_fallback", lambda engine, relay_dir: (answerer_down, None))
    misses = tmp_path / "m2"
    with model_loop("relay", relay_dir=None, record=None, replay=str(cassette), misses=misses) as loop:
        result = _extract(changed, tmp_path / "b", loop)
        assert not misses.exists()
    assert result.status == "failed"
    assert (misses / "0001.diff").read_text(encoding="utf-8").count("+Remember that releases go out on Wednesdays.") == 1


def test_misses_answered_by_an_api_are_written_as_they_happen_not_held(tmp_path, monkeypatch):
    """hostile23: every miss (its request twice, its diff, the nearest answer: about four requests' size) was held in
    memory until the run's end, to keep it from a blind answerer with file access. An API reads no file, and a run
    replayed after a prompt change with `--engine anthropic` behind it misses on every request: thousands held. Only
    a relay's misses wait; an API's are written at once, as before hostile22."""
    from memdir.evals import model_loop as loop_module

    cassette, changed, nothing = _record_then_change(tmp_path)
    api_answer = {"id": "msg_api", "type": "message", "role": "assistant", "model": "m", "content": nothing["content"],
                  "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    monkeypatch.setattr(loop_module, "_fallback", lambda engine, relay_dir: (lambda *_: api_answer, None))
    misses = tmp_path / "m2"
    with model_loop("anthropic", relay_dir=None, record=None, replay=str(cassette), misses=misses) as loop:
        result = _extract(changed, tmp_path / "b", loop)
        assert result.status == "nothing", result.reason
        assert sorted(p.name for p in misses.iterdir()) == ["0001.diff", "0001.nearest-response.json",
                                                            "0001.request.json", "0001.request.md"]
        loop.finish()


def test_replay_alone_fails_on_a_request_it_lacks(tmp_path):
    cassette = tmp_path / "cassette"
    cassette.mkdir()
    with model_loop("auto", relay_dir=None, record=None, replay=str(cassette), misses=tmp_path / "m") as loop:
        result = _extract(_transcript(tmp_path), tmp_path / "memory", loop)
    assert result.status == "failed"
    assert loop.failure == (f"demo/session: no recorded answer for what memdir now sends; the cassette {cassette} is "
                            f"empty; the request is in {tmp_path / 'm' / '0001.diff'} "
                            "(to re-record: docs/evals-and-benchmarks.md#cassettes)")


def test_normalising_drops_only_what_differs_between_runs(tmp_path):
    first, second = tmp_path / "one" / "memory", tmp_path / "two" / "memory"

    def body(folder: Path) -> dict:
        return {**_body(), "metadata": {"user_id": "run-specific"},
                "system": [{"type": "text", "text": f"Write inside {folder}. Today is 2026-03-02."}]}

    a, b = normalise(body(first), {str(first): "<memory-dir>"}), normalise(body(second), {str(second): "<memory-dir>"})
    assert a == b and "metadata" not in a and a["system"][0]["text"] == "Write inside <memory-dir>. Today is 2026-03-02."
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key({**a, "max_tokens": 101})
    listed = {**_body(), "system": "- [user] a.md (2026-03-01T10:00:00Z): old\n- [user] b.md (2026-11-23T15:00:01Z): new"}
    assert normalise(listed, {}, since=1_795_000_000.0)["system"] == (  # 2026-11-18: only b.md was written since
        "- [user] a.md (2026-03-01T10:00:00Z): old\n- [user] b.md (<during-run>): new")
    read_back = {**_body(), "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                 "content": "---\nmodified: 2026-11-23T18:35:02.719Z\ncreated: 2026-03-01T10:00:00.5Z\n---\n"}]}]}
    shown = normalise(read_back, {}, since=1_795_000_000.0)["messages"][0]["content"][0]["content"]
    assert shown == "---\nmodified: <during-run>\ncreated: 2026-03-01T10:00:00.5Z\n---\n"  # a file Read back mid-run
    answer = {"content": [{"type": "tool_use", "input": {"file_path": "<memory-dir>/x.md"}}]}
    assert restore(answer, {str(second): "<memory-dir>"})["content"][0]["input"]["file_path"] == f"{second}/x.md"


def test_a_broken_cassette_is_named_in_one_line(tmp_path):
    (tmp_path / "s.abc.json").write_text('{"request": {}}', encoding="utf-8")
    with pytest.raises(CassetteError, match=r"s\.abc\.json: a cassette entry needs the objects `request` and `response`"):
        Cassette(tmp_path)
    with pytest.raises(CassetteError, match="no such cassette folder"):
        Cassette(tmp_path / "missing")


def test_the_loop_options_that_cannot_work_say_so(tmp_path, cli):
    with pytest.raises(MemdirError, match="--engine relay needs --relay-dir"), \
            model_loop("relay", relay_dir=None, record=None, replay=None, misses=tmp_path):
        pass
    with pytest.raises(MemdirError, match="not offline"), \
            model_loop("offline", relay_dir=None, record=str(tmp_path), replay=None, misses=tmp_path):
        pass
    code, _, err = cli("eval", "run", "--suite", "extraction", "--engine", "relay", "--relay-dir", str(tmp_path))
    assert code == 2 and err.strip() == "memdir eval: --engine relay, --record, --replay and --session work with " \
                                        "--suite realdata only"


def test_the_request_file_does_not_name_the_session_whose_name_may_give_its_annotation_away():
    from memdir.evals.request_text import render_for_relay

    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    first = render_for_relay(body, number="0001", session="sessions2/ko-push-nothing")
    again = render_for_relay(body, number="0002", session="sessions2/ko-push-nothing")
    other = render_for_relay(body, number="0003", session="sessions2/ja-mysite-darkmode")
    assert "nothing" not in first and "ko-push" not in first
    tags = [text.splitlines()[0].split("(session ")[1] for text in (first, again, other)]
    assert tags[0] == tags[1] != tags[2]  # a session's requests still read as one


def test_a_session_tag_cannot_be_traced_back_to_the_session_s_name():
    """hostile22: the tag was sha256(key)[:8], and the keys are names anyone can list (the realdata folder, the
    cases): whoever answers could hash each and read which session, and so which annotation, a request is. Now a
    per-run salt goes in; a session's requests in one run still share a tag."""
    import hashlib
    import subprocess
    import sys

    from memdir.evals.request_text import session_tag

    key = "sessions2/ko-push-nothing"
    guesses = {hashlib.sha256(form.encode()).hexdigest()[:8] for form in (key, key.split("/")[1], key + ".jsonl")}
    assert session_tag(key) not in guesses and session_tag(key) == session_tag(key)
    probe = f"from memdir.evals.request_text import session_tag; print(session_tag({key!r}))"
    runs = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(runs) == 2  # another run, another tag
