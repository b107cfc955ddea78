"""One price row per model in the SDK's list, the published numbers, and where costs are recorded."""

from __future__ import annotations

import json
import typing
from datetime import date

import httpx
import pytest

from memdir import pricing, runlog
from memdir.pricing import PRICES, cost_usd, model_price


def _sdk_models() -> tuple[set[str], dict]:
    from anthropic.resources.messages.messages import DEPRECATED_MODELS
    from anthropic.types.model import Model

    return set(typing.get_args(typing.get_args(Model)[0])), DEPRECATED_MODELS


def test_every_current_sdk_model_has_its_own_price_row():
    models, deprecated = _sdk_models()
    current = {m for m in models if m not in deprecated}
    assert current - set(PRICES) == set(), "price these models in memdir/pricing.py"
    assert set(PRICES) - models == set(), "a priced id the SDK does not know: a typo or a retired id"


def test_default_models_are_current_and_priced():
    from memdir.config import DEFAULT_EXTRACT_MODEL, DEFAULT_JUDGE_MODEL, DEFAULT_RECALL_MODEL

    models, deprecated = _sdk_models()
    for model in (DEFAULT_EXTRACT_MODEL, DEFAULT_RECALL_MODEL, DEFAULT_JUDGE_MODEL):
        assert model in models and model not in deprecated and model in PRICES


@pytest.mark.parametrize("model, row", [
    # Published per-MTok prices: input, output, 5m write, 1h write, cache read.
    ("claude-sonnet-5-5", (2, 10, 2.5, 4, 0.10)),
    ("claude-haiku-5-5", (0.10, 0.50, 0.125, 0.20, 0.01)),
    ("claude-opus-5-5", (4, 20, 5, 8, 0.20)),
    ("claude-fable-5-2", (8, 40, 10, 16, 0.20)),
    ("claude-fable-5-1", (10, 50, 12.5, 20, 0.25)),
    ("claude-opus-4-8", (5, 25, 6.25, 10, 0.50)),
    ("claude-haiku-4-5", (1, 5, 1.25, 2, 0.10)),
])
def test_published_prices(model, row):
    assert tuple(model_price(model)) == pytest.approx(row)


def test_cost_of_one_response_counts_every_kind_of_token():
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000,
             "cache_creation_input_tokens": 2_000_000, "cache_creation_1h_input_tokens": 1_000_000}
    assert cost_usd("claude-sonnet-5-5", usage) == pytest.approx(2 + 10 + 0.10 + 2.5 + 4)
    assert cost_usd("claude-sonnet-5-5", usage, batch=True) == pytest.approx((2 + 10 + 0.10 + 2.5 + 4) / 2)


def test_haiku_5_5_long_prompts_pay_the_higher_band_on_every_token():
    short = {"input_tokens": 90_000, "output_tokens": 1_000}
    long = {"input_tokens": 60_000, "cache_read_input_tokens": 50_000, "output_tokens": 1_000}
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx((90_000 * 0.10 + 1_000 * 0.50) / 1e6)
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx((60_000 * 0.50 + 50_000 * 0.05 + 1_000 * 2.50) / 1e6)


def test_contract_prices_override(monkeypatch):
    monkeypatch.setenv("MEMDIR_PRICES", json.dumps({"claude-sonnet-5-5": {"input": 1, "output": 5, "cache_read": 0.05}}))
    assert tuple(model_price("claude-sonnet-5-5")) == pytest.approx((1, 5, 1.25, 2, 0.05))
    monkeypatch.setenv("MEMDIR_PRICES", "not json")
    assert model_price("claude-sonnet-5-5") == PRICES["claude-sonnet-5-5"]


def test_unknown_gateway_model_is_estimated_not_free():
    assert model_price("my-gateway-model") == PRICES[pricing.FALLBACK_MODEL]


def test_extraction_and_recall_write_cost_records_and_doctor_sums_a_week(api, tmp_path, cli, monkeypatch, store):
    from memdir.config import Settings
    from memdir.model import Memory
    from memdir.stages.extractor.run import extract_transcript
    from memdir.stages.recall.api import recall
    from tests import api_payloads as P

    memory = store.root
    store.save(Memory(name="Alice", description="Alice is the payments tech lead", type="user", body="Alice leads payments."))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "message": {
        "role": "user", "content": "Remember that I prefer tabs over spaces."}}) + "\n")

    def answer(request):
        body = json.loads(request.content)
        if "format" in body.get("output_config", {}):
            return P.selection("user_alice.md", input_tokens=500, output_tokens=20)
        return httpx.Response(200, json=P.message([P.text("Nothing new.")], model=body["model"],
                                                  input_tokens=3_000, output_tokens=200, cache_write=2_000))

    api.post("/v1/messages").mock(side_effect=answer)
    extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="llm"))
    recall(memory, "who leads payments", settings=Settings(engine="llm"))
    runs = [json.loads(line) for line in runlog.runs_path(memory).read_text().splitlines()]
    assert [r.get("kind", "extract") for r in runs] == ["extract", "recall"]
    assert runs[0]["cost_usd"] == pytest.approx((3_000 * 2 + 200 * 10 + 2_000 * 2.5) / 1e6)
    assert runs[1]["cost_usd"] == pytest.approx((500 * 0.10 + 20 * 0.50) / 1e6)
    old = {"at": "2000-01-01T00:00:00", "engine": "llm", "usage": {"input_tokens": 9}, "cost_usd": 99.0}
    with open(runlog.runs_path(memory), "a") as handle:
        handle.write(json.dumps(old) + "\nnot json\n")
    rows = runlog.cost_by_day(memory)
    assert len(rows) == 1 and rows[0]["runs"] == 2 and rows[0]["cost_usd"] == pytest.approx(runs[0]["cost_usd"] + runs[1]["cost_usd"])
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    code, out, _ = cli("doctor")
    assert "model usage, last 7 days" in out and f"{date.today().isoformat()}: 2 run(s)" in out and "$99" not in out
