from __future__ import annotations

import json

import pytest

from memdir.errors import MemdirError
from memdir.record import FrozenRecord, Record, field
from memdir.transcript import read_transcript, recent_tool_names


def _line(kind, uuid, content, **extra):
    msg = {"role": kind, "content": content}
    if "mid" in extra:
        msg["id"] = extra.pop("mid")
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s1", "cwd": "/repo",
                       "timestamp": "2026-03-02T10:00:00Z", "message": msg, **extra})


def _write(path, lines, tail=""):
    path.write_text("\n".join(lines) + "\n" + tail)
    return path


def test_reads_messages_skipping_metadata_meta_and_sidechains(tmp_path):
    path = _write(tmp_path / "t.jsonl", [
        json.dumps({"type": "summary", "summary": "x"}),
        _line("user", "u1", "hello there"),
        _line("user", "m1", "injected", isMeta=True),
        _line("assistant", "side", [{"type": "text", "text": "sub"}], isSidechain=True),
        json.dumps({"type": "file-history-snapshot", "snapshot": {}}),
        _line("assistant", "a1", [{"type": "text", "text": "hi"}], mid="msg_1"),
    ])
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "a1"]
    assert t.messages[0].user_text() == "hello there" and t.session_id == "s1" and t.cwd == "/repo"


def test_split_assistant_lines_are_merged(tmp_path):
    path = _write(tmp_path / "t.jsonl", [
        _line("user", "u1", "go"),
        _line("assistant", "a1", [{"type": "thinking", "thinking": "hm"}], mid="msg_9"),
        _line("assistant", "a2", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}], mid="msg_9"),
        _line("assistant", "a3", [{"type": "tool_use", "id": "t2", "name": "Grep", "input": {}}], mid="msg_9"),
    ])
    t = read_transcript(path, last_n=1)
    assert len(t.messages) == 1 and [b["type"] for b in t.messages[0].content] == ["thinking", "tool_use", "tool_use"]
    assert t.messages[0].uuid == "a3"
    assert recent_tool_names(t.messages) == ["Grep", "Read"]


def test_half_written_last_line_and_invalid_lines(tmp_path):
    path = _write(tmp_path / "t.jsonl", [_line("user", "u1", "a b"), "{garbage", _line("user", "u2", "c d")],
                  tail='{"type": "assistant", "uuid": "a9", "mess')
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "u2"]
    assert t.partial_last_line and t.invalid_lines == 1


def test_cursor(tmp_path):
    path = _write(tmp_path / "t.jsonl", [_line("user", f"u{i}", f"msg {i}") for i in range(10)])
    t = read_transcript(path, after_uuid="u6")
    assert t.cursor_found and [m.uuid for m in t.messages] == ["u7", "u8", "u9"]
    t = read_transcript(path, after_uuid="gone", last_n=4)
    assert t.cursor_found is False and [m.uuid for m in t.messages] == ["u6", "u7", "u8", "u9"]


def test_plain_json_list(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "remember I use vim"},
                                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, {"bad": 1}]))
    t = read_transcript(path, last_n=5)
    assert [m.role for m in t.messages] == ["user", "assistant"] and t.invalid_lines == 1


@pytest.mark.parametrize("chunk", [1, 3, 64 * 1024])
def test_a_json_list_read_an_item_at_a_time_reads_as_json_loads_does(tmp_path, monkeypatch, chunk):
    # The list is read in chunks (a 100 MB one was parsed whole): a chunk's end inside a number ("1.5e" of 1.5e3),
    # a character or an item must not change what is read, nor which files are refused.
    monkeypatch.setattr("memdir.transcript_json_list.CHUNK_CHARS", chunk)
    items = [1.5e3, {"role": "user", "content": "é ü 😀 , ] }", "uuid": "u1"}, -12345, "x", None,
             {"role": "assistant", "content": [{"type": "text", "text": "[ok]"}]}, [1, [2]], {"role": "user", "content": "c"}]
    path = tmp_path / "t.json"
    path.write_text("\ufeff \n[ " + " ,\n\t".join(json.dumps(item, ensure_ascii=False) for item in items) + " ]\n",
                    encoding="utf-8")

    t = read_transcript(path, after_uuid="u1")

    assert t.cursor_found and [(m.uuid, m.text()) for m in t.messages] == [("msg-5", "[ok]"), ("msg-7", "c")]
    assert t.invalid_lines == 5
    for bad in ["[1 2]", "[1,]", "[{}", "[1] x", "[1.5e]", '["a\x01"]', "[" * 100_000]:
        path.write_text(bad)
        with pytest.raises(MemdirError, match="not valid JSON|nested too deeply"):
            read_transcript(path)


def test_missing_or_bad_file_is_one_line(tmp_path):
    with pytest.raises(MemdirError, match="not found"):
        read_transcript(tmp_path / "nope.jsonl")
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(MemdirError, match="not valid JSON"):
        read_transcript(tmp_path / "bad.json")


def test_tail_read_does_not_read_the_whole_file(tmp_path, monkeypatch):
    big = tmp_path / "big.jsonl"
    filler = _line("user", "old", "x" * 2000)
    with open(big, "w") as handle:
        for _ in range(5000):  # ~10 MB
            handle.write(filler + "\n")
        for i in range(5):
            handle.write(_line("user", f"new{i}", f"recent {i}") + "\n")
    import memdir.transcript as tr

    reads = []
    real_open = open

    class Counting:
        def __init__(self, handle):
            self.h = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.h.close()

        def read(self, n=-1):
            data = self.h.read(n)
            reads.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self.h, name)

    monkeypatch.setattr(tr, "open", lambda p, mode="r", *a, **k: Counting(real_open(p, mode, *a, **k)), raising=False)
    t = tr.read_jsonl_tail(big, last_n=5)
    assert [m.uuid for m in t.messages] == [f"new{i}" for i in range(5)]
    assert sum(reads) < 200_000  # a few blocks, not 10 MB


def test_record_basics():
    class P(Record):
        a: int
        b: int = 2
        c: list[int] = field(default_factory=list)

    p, q = P(1), P(1)
    assert p == q and p.c is not q.c and p.replace(b=5).b == 5 and "a=1" in repr(p)
    with pytest.raises(TypeError):
        P()

    class F(FrozenRecord):
        x: int

    with pytest.raises(AttributeError):
        F(1).x = 2
    assert hash(F(1)) == hash(F(1))


def _padded_session(path, prompts, pad_bytes):
    """A session whose prompts are separated by big assistant replies, so bytes can be counted."""
    lines = []
    for i, text in enumerate(prompts):
        lines.append(_line("user", f"u{i}", text))
        lines.append(_line("assistant", f"a{i}", [{"type": "text", "text": "x" * pad_bytes}]))
    return _write(path, lines)


def test_byte_budget_reads_only_the_end_and_says_how_much_was_left(tmp_path):
    path = _padded_session(tmp_path / "t.jsonl", [f"prompt number {i}" for i in range(40)], 10_000)
    whole = read_transcript(path)
    bounded = read_transcript(path, max_bytes=50_000)
    assert whole.unread_bytes == 0 and len(whole.messages) == 80
    said = [m.user_text() for m in bounded.messages if m.role == "user"]
    assert 2 <= len(said) <= 6 and said[-1] == "prompt number 39"  # only the newest few, newest kept
    assert bounded.messages == whole.messages[-len(bounded.messages):]  # a suffix, nothing invented or torn
    assert path.stat().st_size - 70_000 < bounded.unread_bytes < path.stat().st_size - 40_000


def test_an_oversized_line_is_skipped_without_parsing_and_counted(tmp_path, monkeypatch):
    import memdir.transcript as transcript

    monkeypatch.setattr(transcript, "TRANSCRIPT_LINE_MAX_BYTES", 200_000)
    path = _write(tmp_path / "t.jsonl", [
        _line("user", "u1", "before the dump"),
        _line("user", "u2", "z" * 500_000),  # spans several 64 KB blocks
        _line("user", "u3", "after the dump"),
    ])
    read = read_transcript(path)
    assert [m.user_text() for m in read.messages] == ["before the dump", "after the dump"]
    assert read.oversized_lines == 1 and read.invalid_lines == 0


def test_cursor_beyond_the_budget_reads_the_budget_only(tmp_path):
    path = _padded_session(tmp_path / "t.jsonl", [f"p{i}" for i in range(40)], 10_000)
    read = read_transcript(path, after_uuid="u1", max_bytes=50_000)
    assert read.cursor_found is False and read.unread_bytes > 0
    assert all(m.uuid not in ("u0", "u1", "a1") for m in read.messages)


def test_a_json_list_over_the_budget_is_refused_in_one_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "y" * 5000}]))
    with pytest.raises(MemdirError, match="convert it to JSONL"):
        read_transcript(path, max_bytes=1000)


def test_claude_codes_own_notices_on_assistant_lines_are_not_the_conversation(tmp_path):
    """An API error or a usage limit is written as an assistant line with model "<synthetic>" (and, for errors,
    isApiErrorMessage): Claude Code's notice, not the model's words. The chain through it still holds."""
    def synthetic(uuid, text, parent, **extra):
        return json.dumps({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "cwd": "/repo",
                           "timestamp": "2026-03-02T10:00:00Z", **extra,
                           "message": {"id": f"id-{uuid}", "model": "<synthetic>", "role": "assistant",
                                       "content": [{"type": "text", "text": text}]}})
    path = _write(tmp_path / "t.jsonl", [
        _line("user", "u1", "deploy it to staging", parentUuid=None),
        synthetic("a1", "Not logged in · Please run /login", "u1", isApiErrorMessage=True),
        _line("user", "u2", "ok, logged in now", parentUuid="a1"),
        synthetic("a2", "You're out of extra usage · resets 6pm (UTC)", "u2"),
        _line("assistant", "a3", [{"type": "text", "text": "Deploying."}], mid="msg_3", parentUuid="a2"),
    ])
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "u2", "a3"]


def test_the_real_sessions_notices_are_dropped_and_their_prompts_kept(realdata):
    path = realdata / "sessions2" / "ko-push-nothing.jsonl"
    texts = [m.text() for m in read_transcript(path).messages]
    assert texts and not any("Please run /login" in t for t in texts)
    assert sum(1 for m in read_transcript(path).messages if m.role == "user") >= 3
