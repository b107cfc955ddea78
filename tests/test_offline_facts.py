"""Facts stated in passing (extractor/offline_facts.py): experience, circumstances, audience, bans, conventions,
the ticket at hand, a resource at hand. Each is kept as the words around it, and not when said as a question or as
the work of the moment."""

from __future__ import annotations

import pytest

from memdir.stages.extractor.offline_facts import stated_fact
from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("text, type_, kind, words", [
    ("I'm a complete beginner, so explain every step.", "user", "expertise", ["beginner"]),
    ("我是新手，什么都不懂，你来安排。", "user", "expertise", ["新手"]),
    ("Soy principiante en programación y aprendo poco a poco.", "user", "expertise", ["principiante"]),
    ("I have two small kids so I only code in the evenings.", "user", "circumstances", ["kids"]),
    ("This tool is for nurses on night shifts, keep the screens dark.", "project", "audience", ["nurses"]),
    ("Default exports are banned in this codebase.", "feedback", "ban", ["default exports"]),
    ("Put the helpers in utils/ - that's the convention in the other packages.", "feedback", "convention",
     ["convention"]),
    ("I'm working on ticket #812: faster search for the admin list.", "project", "work", ["#812"]),
    ("I also have https://example.com/course/system-design available to me.", "reference", "resource",
     ["example.com"]),
])
def test_facts_said_in_passing_are_kept(text, type_, kind, words):
    drafts = _drafts(text)
    assert [(d.type, d.kind) for d in drafts] == [(type_, kind)]
    assert all(w in drafts[0].rule.lower() for w in words), drafts[0].rule


@pytest.mark.parametrize("text", [
    "Is this app for the UK market?",
    "Are default exports banned in this codebase?",
    "I'm working on the login page right now.",
    "I have a question about the build.",
    "That's the convention for now, we'll change it later.",
])
def test_questions_and_the_moment_state_no_fact(text):
    assert _drafts(text) == []


def test_a_fact_in_a_long_run_on_sentence_keeps_only_the_words_around_it():
    words = " ".join(f"w{i}" for i in range(40))
    fact = stated_fact(f"{words} this app is for the UK {words}")
    assert fact is not None and fact[:2] == ("project", "audience")
    assert "this app is for the UK" in fact[2] and len(fact[2].split()) <= 29


def test_an_indefinite_shenme_is_no_question():
    # "什么都不懂 / 什么也不知道" (knows nothing at all) states something; "这是什么" asks.
    assert [(d.type, d.kind) for d in _drafts("我是小白 我什么也不知道 全由你来")] == [("user", "expertise")]
    assert _drafts("我是新手吗，这是什么") == []
