"""The task-bounding "else" (extractor/offline_scope.bounds_the_task) must not take standing rules with it: it dropped
"Always run the tests before committing, otherwise CI breaks", a Spanish rule whose reason said "más" (more), and
rules compared "than anything else". Each sentence below was saved before that rule and lost with it."""

from __future__ import annotations

import pytest

from memdir.stages.extractor import offline_scope as scope
from memdir.stages.extractor.offline import detect
from memdir.transcript import Message


def _kinds(text: str) -> list[str]:
    message = Message("user", [{"type": "text", "text": text}], uuid="m0", timestamp="2026-03-02T09:00:00Z")
    return [d.kind for d in detect([message])[0]]


@pytest.mark.parametrize("rule", [
    "Always run the tests before committing, otherwise CI breaks.",  # "otherwise": the rule's reason
    "Never push to main directly, otherwise the deploy pipeline fires.",
    "Always use pnpm and nothing else in this repo.",  # a standing word: "else" is the rule's own bound
    "Please always use tabs, never spaces or anything else.",
    "Usa siempre pnpm porque es más rápido.",  # "más": more
    "Всегда используй pnpm, другое не подходит.",
    "以后总是用 pnpm，不要用其他的东西。",
    "I prefer pnpm because it is faster than anything else.",  # a comparison, not a bound
    "Don't use yarn, it is slower than anything else.",
])
def test_a_standing_rule_that_says_else_or_otherwise_is_kept(rule):
    assert _kinds(rule) in (["preference"], ["correction"]), rule


@pytest.mark.parametrize("bounded", ["Do not change anything else.", "No hagas nada más.", "Don't add anything else."])
def test_else_still_bounds_the_task_at_hand(bounded):
    assert scope.bounds_the_task(bounded)
    assert _kinds(bounded) == []


@pytest.mark.parametrize("asked", [
    "Can you summarize the paper? Please remember that my name is Dana and I'm a PhD student.",
    "Could you review the PR? Please remember that we deploy only on Tuesdays.",
])
def test_please_remember_after_a_question_is_still_a_request(asked):
    """offline6 took any "remember" after a question for a reminder of what the question asked ("Is that total right?
    Remember I also pay rent"); "please remember" asks in so many words, and was saved before."""
    assert _kinds(asked) == ["remember"]
    assert _kinds("Is that monthly total right? Remember I also pay rent and insurance.") == []


@pytest.mark.parametrize("asked", [
    "How do I list the files here? Remember that I use Windows.",
    "Can you fix the build? Remember that I use Windows, not Linux.",
    "Can you summarise it? Remember my name is Dana.",
    "Which chart fits best? Remember I'm a data scientist, not a designer.",
    "What's the shortcut for that? Remember I work on a Mac.",
])
def test_a_fact_about_the_user_asked_to_be_remembered_after_a_question_is_kept(asked):
    """Who the user is holds whatever the question was; a factor the question must weigh does not."""
    assert _kinds(asked) == ["remember"]
    assert _kinds("Is that monthly total right? Remember I have to pay taxes too.") == []
    assert _kinds("Is the query right? Remember I'm using the staging database.") == []
