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
