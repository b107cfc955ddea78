"""The strict request validator catches what the real API rejects, and the shared fixtures use it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from memdir.evals.api_validator import validate_batch_request, validate_message_request
from tests.fake_api import FakeAPI


def _ok(**over) -> dict:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "messages": [{"role": "user", "content": "hi"}]}
    body.update(over)
    return body


def _tool_turns(result_first: bool = True) -> list[dict]:
    results = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]
    extra = [{"type": "text", "text": "and also"}]
    return [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
        {"role": "user", "content": results + extra if result_first else extra + results},
    ]


def test_a_valid_request_passes():
    assert validate_message_request(_ok(messages=_tool_turns())) == []


@pytest.mark.parametrize("body, expected", [
    (_ok(temperature=0.2), "temperature: Extra inputs are not permitted"),
    (_ok(betas=["x"]), "betas: Extra inputs are not permitted"),
    ({"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": "x"}]}, "max_tokens: Field required"),
    (_ok(model="claude-3-7-sonnet-20250219"), "not in the SDK's model list"),
    (_ok(model="claude-sonnet-4-5"), "deprecated"),
    (_ok(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}]), "text content blocks must be non-empty"),
    (_ok(messages=[{"role": "user", "content": "  "}]), "content must be non-empty"),
    (_ok(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]), "prefill"),
    (_ok(messages=_tool_turns(result_first=False)), "must begin with exactly one tool_result"),
    (_ok(messages=_tool_turns()[:2] + [{"role": "user", "content": "no results"}]), "must begin with exactly one"),
    (_ok(messages=[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]),
     "without a preceding tool_use"),
    (_ok(thinking={"type": "enabled", "budget_tokens": 2000}), "manual budget"),
    (_ok(thinking={"type": "disabled"}), "'disabled' is not supported on claude-sonnet-5-5"),
    (_ok(model="claude-haiku-5-5", thinking={"type": "between_tools"}), "'between_tools' is not supported"),
    (_ok(thinking={"type": "between_tools"}, output_config={"effort": "max"}), "cannot be combined"),
    (_ok(output_config={"effort": "extreme"}), "effort 'extreme'"),
    (_ok(output_config={"format": {"type": "json", "schema": {"type": "object", "additionalProperties": False}}}),
     "output_config.format.type 'json' must be 'json_schema'"),
    (_ok(output_config={"format": {"type": "json_schema", "schema": {"type": "object", "properties": {
        "a": {"type": "object"}}, "additionalProperties": False}}}), "schema.properties.a: an object schema needs"),
    (_ok(output_config={"format": {"type": "json_schema"}}), "output_config.format.schema: Field required"),
    (_ok(output_config={"schema": {}}), "output_config.schema: Extra inputs are not permitted"),
    (_ok(tool_choice={"type": "any"}, tools=[{"name": "Read", "input_schema": {"type": "object"}}]), "forced tool use"),
    (_ok(tools=[{"name": "bad name", "input_schema": {"type": "object"}}]), "must match"),
])
def test_each_rule_names_the_violation(body, expected):
    errors = validate_message_request(body)
    assert any(expected in e for e in errors), errors


def test_the_recall_selectors_request_is_one_the_api_accepts():
    """What recall/llm_select.py sends: the SDK's model id, thinking off at low effort, its output format."""
    from memdir.config import Settings
    from memdir.llm import thinking_options
    from memdir.stages.recall.llm_select import _output_format

    settings = Settings()
    options = thinking_options(settings.recall_model, think=False, effort="low")
    body = _ok(model=settings.recall_model, system="pick",
               output_config={**options.pop("output_config"), "format": _output_format()}, **options)
    assert validate_message_request(body) == []


def _cached(ttl=None) -> dict:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"type": "text", "text": "x", "cache_control": mark}


def test_cache_control_limits_and_placement():
    assert validate_message_request(_ok(system=[_cached()] * 4)) == []
    assert any("maximum of 4" in e for e in validate_message_request(_ok(system=[_cached()] * 4, cache_control={"type": "ephemeral"})))
    five_then_hour = _ok(system=[_cached("5m")], messages=[{"role": "user", "content": [_cached("1h")]}])
    assert any("must not come after a 5m" in e for e in validate_message_request(five_then_hour))
    assert validate_message_request(_ok(system=[_cached("1h")], messages=[{"role": "user", "content": [_cached("5m")]}])) == []
    bad_ttl = _ok(system=[{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "10m"}}])
    assert any("ttl '10m'" in e for e in validate_message_request(bad_ttl))
    on_thinking = _ok(messages=[{"role": "user", "content": "a"},
                                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s",
                                                                   "cache_control": {"type": "ephemeral"}}]},
                                {"role": "user", "content": "b"}])
    assert any("thinking block" in e for e in validate_message_request(on_thinking))


def test_batch_custom_id_rules_and_limits(monkeypatch):
    good = {"requests": [{"custom_id": "job-1", "params": _ok()}, {"custom_id": "job_2", "params": _ok()}]}
    assert validate_batch_request(good) == []
    for bad_id, expected in (("job 1", "must match"), ("x" * 65, "must match"), ("", "must match")):
        errors = validate_batch_request({"requests": [{"custom_id": bad_id, "params": _ok()}]})
        assert any(expected in e for e in errors), errors
    dup = {"requests": [{"custom_id": "a", "params": _ok()}, {"custom_id": "a", "params": _ok()}]}
    assert any("not unique" in e for e in validate_batch_request(dup))
    assert any("stream" in e for e in validate_batch_request({"requests": [{"custom_id": "a", "params": _ok(stream=True)}]}))
    assert any("Extra inputs" in e for e in validate_batch_request({**good, "metadata": {}}))
    assert any("params.temperature" in e for e in
               validate_batch_request({"requests": [{"custom_id": "a", "params": _ok(temperature=1)}]}))
    from memdir import constants as C

    monkeypatch.setattr(C, "BATCH_MAX_REQUESTS", 1)
    assert any("at most 1 requests" in e for e in validate_batch_request(good))
    monkeypatch.setattr(C, "BATCH_MAX_REQUESTS", 100_000)
    monkeypatch.setattr(C, "BATCH_MAX_BYTES", 100)
    assert any("bytes; at most 100" in e for e in validate_batch_request(good))


def test_the_respx_fixture_answers_a_malformed_request_with_the_apis_400(api):
    import httpx

    api.violations_expected = True  # this test checks the net itself
    route = api.post("/v1/messages").respond(200, json={})
    response = httpx.post("https://api.anthropic.com/v1/messages", json=_ok(temperature=1))
    assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    assert response.headers["x-should-retry"] == "false"
    assert route.call_count == 0 and len(api.violations) == 1 and "temperature" in api.violations[0]


def test_the_loopback_api_rejects_and_reports_a_malformed_request():
    with pytest.raises(AssertionError, match="text content blocks must be non-empty"), FakeAPI(lambda body, n: {}) as fake:
        bad = _ok(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}])
        request = urllib.request.Request(f"{fake.url}/v1/messages", data=json.dumps(bad).encode(), method="POST",
                                         headers={"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(request, timeout=5)
        assert answer.value.code == 400


def test_beta_requests_may_carry_beta_params_and_continue_a_thread():
    from memdir.evals.api_validator import validate_message_request

    first = {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}],
             "thread": {"type": "create"}}
    assert validate_message_request(first, beta=True) == []
    assert validate_message_request(first) == ["thread: Extra inputs are not permitted"]
    cont = {"model": "claude-sonnet-5-5", "max_tokens": 64, "thread": {"type": "continue", "previous_message_id": "m"},
            "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}]}
    assert validate_message_request(cont, beta=True) == []  # the tool_use it answers is held by the server
    orphan = dict(cont, thread={"type": "create"})
    assert any("without a preceding tool_use" in e for e in validate_message_request(orphan, beta=True))
