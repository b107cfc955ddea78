"""Every stop_reason the Messages API can return, through the extraction agent and its cursor."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from memdir.config import Settings
from memdir.stages.extractor import state
from memdir.stages.extractor.run import extract_transcript
from tests import api_payloads as P

TODAY = date(2026, 3, 2)
MEMORY = ("---\nname: Role\ndescription: The user is the tech lead for payments\ntype: user\n---\n"
          "The user is the tech lead for payments.\n")


@pytest.fixture
def transcript(tmp_path) -> Path:
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
         "message": {"role": "user", "content": "Remember that I'm the tech lead for payments."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:05Z",
         "message": {"id": "msg_x", "role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.fixture
def memory(tmp_path) -> Path:
    return tmp_path / "memory"


def _settings():
    return Settings(engine="llm", max_attempts=3)


def _bodies(route) -> list[dict]:
    return [json.loads(call.request.content) for call in route.calls]


def _runs(memory: Path) -> list[dict]:
    return [json.loads(line) for line in (memory / ".memdir" / "runs.jsonl").read_text().splitlines()]


def test_an_empty_text_block_beside_a_tool_call_is_not_sent_back(api, transcript, memory):
    """The reply holds "" next to its tool_use; resending it unchanged is a 400 from the real API
    (the strict validator answers it so). Now the second turn goes through."""
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.thinking(), P.text(""), P.tool_use("Glob", {"pattern": "*.md"}, "toolu_g")],
                                           stop_reason="tool_use", model="claude-sonnet-5-5")),
        httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": str(memory / "user_role.md"),
                                                                 "content": MEMORY})],
                                           stop_reason="tool_use", model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert result.status == "saved" and result.saved == ["user_role.md"], result.as_dict()
    sent_back = _bodies(route)[1]["messages"][1]["content"]
    assert [b["type"] for b in sent_back] == ["thinking", "tool_use"]  # thinking kept byte for byte
    assert sent_back[0]["signature"].startswith("sig_")
    assert api.violations == []


def test_a_thinking_only_max_tokens_stop_is_retried_with_a_larger_budget(api, transcript, memory):
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.thinking()], stop_reason="max_tokens", model="claude-sonnet-5-5",
                                           output_tokens=10_000)),
        httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": str(memory / "user_role.md"),
                                                                 "content": MEMORY})],
                                           stop_reason="tool_use", model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert route.call_count == 2, (result.as_dict(), api.violations)
    first, second = _bodies(route)
    assert (first["max_tokens"], second["max_tokens"]) == (10_000, 20_000)
    assert second["messages"] == first["messages"]  # the same question again, nothing of the truncated reply
    assert result.status == "saved" and result.turns == 1
    assert result.usage["output_tokens"] == 10_030  # the truncated attempt's tokens are counted
    assert state.load_cursor(memory, "s1")["uuid"] == "a1"


def test_a_second_max_tokens_stop_fails_and_keeps_the_cursor(api, transcript, memory):
    state.save_cursor(memory, "s1", None)
    truncated = lambda: httpx.Response(200, json=P.message(  # noqa: E731
        [P.thinking()], stop_reason="max_tokens", model="claude-sonnet-5-5", output_tokens=10_000))
    route = api.post("/v1/messages").mock(side_effect=[truncated(), truncated()])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert route.call_count == 2
    assert result.status == "failed" and "max_tokens" in result.reason, result.as_dict()
    assert state.load_cursor(memory, "s1")["uuid"] is None  # the window is not lost
    assert not (memory / "user_role.md").exists()
    run = _runs(memory)[-1]
    assert run["status"] == "failed" and run["usage"]["output_tokens"] == 20_000 and run["cost_usd"] > 0


def test_a_truncated_tool_call_is_never_executed(api, transcript, memory):
    cut = P.tool_use("Write", {"file_path": str(memory / "user_role.md"), "content": "---\nname: Ro"})
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([cut], stop_reason="max_tokens", model="claude-sonnet-5-5")),
        httpx.Response(200, json=P.message([P.text("Nothing worth saving.")], model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert route.call_count == 2 and result.status == "nothing"
    assert not (memory / "user_role.md").exists()


def test_a_refusal_is_logged_and_counted(api, transcript, memory, caplog):
    refused = P.message([], stop_reason="refusal", model="claude-sonnet-5-5")
    refused["stop_details"] = P.refusal_details()
    api.post("/v1/messages").mock(return_value=httpx.Response(200, json=refused))
    with caplog.at_level("WARNING", logger="memdir"):
        result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert result.status == "nothing" and result.refusals == 1 and "refusal" in result.reason
    assert "refusal" in caplog.text
    assert _runs(memory)[-1]["refusals"] == 1
    # A refusal is an answer about this window: retrying it would only be refused again.
    assert state.load_cursor(memory, "s1")["uuid"] == "a1"


# pause_turn comes from a long server-side tool turn (the docs' example is web search).
SERVER_TOOL = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "x"}}


def test_pause_turn_continues_the_same_turn(api, transcript, memory):
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.thinking(), P.text("Looking at the folder first."), SERVER_TOOL],
                                           stop_reason="pause_turn", model="claude-sonnet-5-5")),
        httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": str(memory / "user_role.md"),
                                                                 "content": MEMORY})],
                                           stop_reason="tool_use", model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    second = _bodies(route)[1]
    # The paused turn goes back as is, as the last message, so the model continues it.
    assert second["messages"][-1]["role"] == "assistant"
    assert [b["type"] for b in second["messages"][-1]["content"]] == ["thinking", "text", "server_tool_use"]
    assert result.status == "saved" and result.turns == 2


def test_stop_sequence_and_end_turn_finish_the_run(api, transcript, memory):
    api.post("/v1/messages").mock(return_value=httpx.Response(200, json=P.message(
        [P.text("Nothing to save.")], stop_reason="stop_sequence", model="claude-sonnet-5-5")))
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert result.status == "nothing" and state.load_cursor(memory, "s1")["uuid"] == "a1"


def test_an_unknown_stop_reason_fails_without_advancing(api, transcript, memory):
    api.post("/v1/messages").mock(return_value=httpx.Response(200, json=P.message(
        [P.text("...")], stop_reason="model_context_window_exceeded", model="claude-sonnet-5-5")))
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert result.status == "failed" and "model_context_window_exceeded" in result.reason
    assert state.load_cursor(memory, "s1")["uuid"] is None


@pytest.mark.parametrize("status, hint, calls", [(529, "false", 1), (500, None, 2), (400, "true", 2)])
def test_x_should_retry_overrides_the_status_rule(api, transcript, memory, status, hint, calls):
    route = api.post("/v1/messages").mock(side_effect=[
        P.error(status, retry_after="0", should_retry=hint),
        httpx.Response(200, json=P.message([P.text("Nothing to save.")], model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=_settings(), today=TODAY)
    assert route.call_count == calls
    assert result.status == ("failed" if calls == 1 else "nothing")
