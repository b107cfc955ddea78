"""The harness itself, against the real CLI: it must answer everything Claude Code asks."""

from __future__ import annotations

import json

from tests.realclient import harness as H, loopback_api as A


def test_plain_session_gets_streamed_text_and_writes_a_transcript(sandbox, scripted_api, claude):
    api = scripted_api(A.Script(main=[A.text("The answer is 42.")]))
    run = claude(sandbox, api, "what is the answer to everything?")
    assert run.json()["result"] == "The answer is 42."
    main = api.main_requests()
    assert main and main[0].body["stream"] is True
    assert main[0].headers["user-agent"].startswith(f"claude-cli/{H.CLAUDE_CODE_VERSION}")
    assert "what is the answer to everything?" in main[0].message_texts()
    unanswered = [r for r in api.requests if not (r.is_messages or r.path.startswith("/v1/messages/count_tokens"))]
    assert unanswered == [], [f"{r.method} {r.path}" for r in unanswered]
    transcripts = sandbox.transcripts()
    assert len(transcripts) == 1
    lines = [json.loads(line) for line in transcripts[0].read_text().splitlines() if line.strip()]
    assert any(line.get("version") == H.CLAUDE_CODE_VERSION for line in lines)


def test_tool_use_round_trip_writes_a_file(sandbox, scripted_api, claude):
    target = sandbox.repo / "notes.txt"
    api = scripted_api(A.Script(main=[A.tool_use("Write", {"file_path": str(target), "content": "hello\n"}),
                                      A.text("Written.")]))
    claude(sandbox, api, "write hello into notes.txt", "--permission-mode", "acceptEdits")
    assert target.read_text() == "hello\n"
    second = api.main_requests()[1]
    assert any("notes.txt" in t for t in second.message_texts())  # the tool_result went back to the model
