"""Recall uses the offline answer whenever the model's answer is not one to use, and says why;
an unreachable endpoint is skipped for a cool-down instead of costing every prompt a timeout."""

from __future__ import annotations

import json

import httpx
import pytest

from memdir import constants as C, llm
from memdir.stages.recall.api import recall
from tests import api_payloads as P
from tests.test_recall import _llm_settings, folder  # noqa: F401 - the shared memory-folder fixture

QUERY = "the payments latency dashboard"


def _reply(content: list[dict], stop_reason: str = "end_turn") -> httpx.Response:
    return httpx.Response(200, json=P.message(content, stop_reason=stop_reason))


@pytest.mark.parametrize("answer, why", [
    (_reply([P.text('{"selected_memories": ["user_ali')], "max_tokens"), "max_tokens"),
    (_reply([P.thinking()], "max_tokens"), "max_tokens"),
    (_reply([], "refusal"), "refusal"),
    (_reply([P.text("I think the dashboard one.")]), "no parsable selection"),
    (_reply([]), "no parsable selection"),
])
def test_an_unusable_answer_falls_back_to_offline_and_says_why(folder, api, answer, why):  # noqa: F811
    api.post("/v1/messages").mock(return_value=answer)
    result = recall(folder.root, QUERY, settings=_llm_settings())
    assert result.engine == "offline"
    assert result.selected and result.selected[0].rel_path.startswith("reference_payments")  # not a silent empty answer
    assert any(why in d and "offline" in d for d in result.debug), result.debug


def test_a_usable_answer_is_used(folder, api):  # noqa: F811
    api.post("/v1/messages").mock(return_value=P.selection("user_alice.md"))
    result = recall(folder.root, QUERY, settings=_llm_settings())
    assert result.engine == "llm" and [h.rel_path for h in result.selected] == ["user_alice.md"]


def test_after_a_connection_failure_the_endpoint_is_skipped_for_the_cool_down(folder, api):  # noqa: F811
    route = api.post("/v1/messages").mock(side_effect=httpx.ConnectError("[Errno 111] Connection refused"))
    first = recall(folder.root, QUERY, settings=_llm_settings(max_attempts=2, recall_timeout=5))
    assert first.engine == "offline" and route.call_count == 2
    down = llm.unreachable()
    assert down and down["until"] - down["since"] == C.ENDPOINT_COOLDOWN_SECONDS and "Connection" in down["error"]
    second = recall(folder.root, QUERY, settings=_llm_settings(max_attempts=2, recall_timeout=5))
    assert route.call_count == 2  # no new attempt at all (so no retry and no wait either)
    assert second.engine == "offline" and second.selected
    assert any("unreachable" in d for d in second.debug)
    # After the cool-down the endpoint is tried again, and a success needs no clearing.
    assert llm.unreachable(now=down["until"] + 1) is None


def test_the_cool_down_is_per_endpoint(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    llm.mark_unreachable("APIConnectionError: refused")
    assert llm.unreachable() is not None
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:10")
    assert llm.unreachable() is None


def test_an_http_error_is_not_a_connection_failure(folder, api):  # noqa: F811
    api.post("/v1/messages").mock(return_value=P.error(500))
    recall(folder.root, QUERY, settings=_llm_settings(max_attempts=1))
    assert llm.unreachable() is None


def test_doctor_says_the_endpoint_is_unreachable(cli, store, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(store.root))
    store.root.mkdir(parents=True, exist_ok=True)
    llm.mark_unreachable("APIConnectionError: Connection error.")
    code, out, err = cli("doctor")
    assert "unreachable" in (out + err) and "api.anthropic.com" in (out + err)
    assert json.loads((llm._endpoint_state_path()).read_text())["endpoint"] == "https://api.anthropic.com"


def test_the_tools_in_use_are_read_once_when_the_model_s_answer_falls_back(store, api):
    """The model is shown the tools in use (read from the transcript's tail); when its answer is not used, the
    offline choice reuses that list instead of reading the transcript again."""
    from tests.test_recall import _save

    _save(store, "Terraform usage guide", "How to use terraform plan and apply for the staging stack", "reference")
    _save(store, "Terraform gotcha", "Never run terraform apply for staging without a plan file", "feedback")
    api.post("/v1/messages").mock(return_value=_reply([], "refusal"))
    asked: list[int] = []

    def in_use() -> list[str]:
        asked.append(1)
        return ["terraform"]

    result = recall(store.root, "terraform plan and apply for the staging stack", settings=_llm_settings(), tools=in_use)
    assert result.engine == "offline" and [h.name for h in result.selected] == ["Terraform gotcha"]
    assert asked == [1]
