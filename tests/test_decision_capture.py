"""Decision capture from the user's own words: kind, confidence band, entities, typed relations."""

from __future__ import annotations

import pytest

from memdir.stages.extractor.capture import capture_explicit, capture_text
from tests import decision_cases
from tests.realdata import user_words_containing


@pytest.mark.parametrize(("text", "kind", "band"), decision_cases.TUNING, ids=lambda v: str(v)[:40])
def test_capture_kind_and_confidence_band(text, kind, band):
    assert decision_cases.outcome(text) == (kind, band)


@pytest.mark.parametrize(("needle", "kind", "band"), decision_cases.REALDATA, ids=lambda v: str(v)[:40])
def test_capture_on_real_transcript_sentences(realdata, needle, kind, band):
    text = user_words_containing(realdata, needle)
    assert decision_cases.outcome(text) == (kind, band)


def test_held_out_cases_mostly_right():
    right, total = decision_cases.accuracy(decision_cases.HELD_OUT)
    assert right / total >= 0.8, f"held-out capture accuracy {right}/{total}"


def test_at_least_thirty_cases_with_positives_and_negatives():
    cases = decision_cases.TUNING + decision_cases.REALDATA + decision_cases.HELD_OUT
    assert len(cases) >= 30
    assert sum(k is None for _, k, _ in cases) >= 10 and sum(k is not None for _, k, _ in cases) >= 20


def relations(captured):
    return {(r.from_, r.to, r.relationType) for r in captured.relations}


def test_rationale_becomes_why_and_raises_confidence():
    bare = capture_text("Let's use PostgreSQL for analytics.", project="shop")[0].decision
    reasoned = capture_text("Let's use PostgreSQL for analytics because we need JSONB.", project="shop")[0].decision
    assert reasoned.what == "Let's use PostgreSQL for analytics"
    assert reasoned.why == "We need JSONB"
    assert reasoned.confidence > bare.confidence >= 0.7
    assert reasoned.category == "database"


def test_reason_in_the_next_sentence_attaches_to_the_decision():
    found = capture_text("Going with JWT for auth. Because the services must stay stateless.", project="shop")
    assert len(found) == 1
    assert found[0].decision.why == "The services must stay stateless"


def test_chose_over_and_uses_relations_with_canonical_entities():
    c = capture_text("We chose Postgres over MySQL for the orders service.", project="shop")[0]
    assert c.decision.entities[:2] == ["PostgreSQL", "MySQL"]
    assert ("PostgreSQL", "MySQL", "CHOSE_OVER") in relations(c)
    assert ("shop", "PostgreSQL", "USES") in relations(c)
    assert ("shop", "MySQL", "USES") not in relations(c)  # the rejected option is not used


def test_requires_enables_prefers_relations():
    c = capture_text("Let's use Celery, since Celery requires Redis and Redis enables retries.", project="shop")[0]
    assert {("Celery", "Redis", "REQUIRES"), ("Redis", "retries", "ENABLES")} <= relations(c)
    p = capture_text("I prefer pnpm over npm.", project="shop")[0]
    assert ("user", "pnpm", "PREFERS") in relations(p) and ("pnpm", "npm", "CHOSE_OVER") in relations(p)


def test_backticked_names_are_entities():
    c = capture_text("Always call `load_config()` before `connect`.")[0]
    assert "load_config()" in c.decision.entities and "connect" in c.decision.entities


def test_tool_output_scores_in_the_inferred_band():
    found = capture_text("Let's use PostgreSQL for analytics because we need JSONB.", source="tool-output")
    assert 0.4 <= found[0].decision.confidence <= 0.6


def test_explicit_remember_is_high_confidence_with_outcome_kinds():
    plain = capture_explicit("Validate user input at API boundaries")
    assert plain.decision.source == "explicit" and plain.decision.confidence >= 0.85
    ok = capture_explicit("Circuit breaker with 5s timeout for external API calls", outcome="success")
    assert ok.decision.kind == "pattern" and ok.decision.confidence >= 0.9
    bad = capture_explicit("One shared Redis for cache and sessions", outcome="failed", scope="global", project="shop")
    assert bad.decision.kind == "anti-pattern" and bad.decision.scope == "global"
    assert not any(r.relationType == "USES" for r in bad.relations)  # a failure is not something we use


def test_same_statement_gets_the_same_id():
    a = capture_text("Let's use Redis for the job queue.")[0].decision
    b = capture_text("let's use redis for the job queue")[0].decision
    assert a.id == b.id
