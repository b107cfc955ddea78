"""Kinds of false save the blind sets 6 and 7 showed (issue 20), each stopped by asking for a second signal: a pick
with nothing that says it was weighed ("let's use X for Y", a figure for one calculation), a "don't" measured
against the task at hand ("... anything else"), a "remember" that reminds the question just asked of a factor,
and a standing rule asked to be remembered but filed as a project fact. Each keeps its lasting counterpart. The
sentences are written here, not taken from the data."""

from __future__ import annotations

import pytest

from memdir.stages.extractor import offline_scope as scope
from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("pick", [
    "Let's use Svelte for the dashboard.",  # the stack the code will show
    "Let's go with a monthly budget of about 300.",  # a figure for the calculation at hand
    "Ok let's do stripe.",
    "We'll use SQLite for the cache.",
])
def test_a_pick_with_no_second_signal_is_no_decision(pick):
    assert _drafts(pick) == []


@pytest.mark.parametrize("decision", [
    "Let's switch to Svelte for the dashboard.",  # what it replaces
    "Let's use Svelte for the dashboard because the whole team knows it.",  # a reason
    "We decided to use SQLite for the cache.",  # a decision in so many words
    "Let's use SQLite for every cache.",  # said of every such thing
    "Let's stick with Postgres for the database.",
])
def test_a_weighed_decision_is_kept(decision):
    assert [d.kind for d in _drafts(decision)] == ["decision"]


@pytest.mark.parametrize("bounded", [
    "Do not change anything else.",
    "Don't add anything else to the page.",
    "Ne fais rien d'autre.",
    "不要做别的。",
])
def test_a_dont_measured_against_the_task_at_hand_saves_nothing(bounded):
    assert scope.bounds_the_task(bounded)
    assert _drafts(bounded) == []


def test_else_that_names_the_alternative_is_still_a_rule():
    assert not scope.bounds_the_task("Don't use anything else than pnpm.")
    assert [d.kind for d in _drafts("Never use a package manager other than pnpm.")] == ["correction"]


def test_a_remember_after_a_question_reminds_the_question():
    assert _drafts("Is that monthly total right? Remember I also pay rent and insurance.") == []


@pytest.mark.parametrize("kept", [
    "Remember I also pay rent and insurance.",  # no question before it: a request to keep it
    "Can you check the build? Remember, always use pnpm in this repo.",  # a standing word makes it a rule
])
def test_a_remember_request_is_still_kept(kept):
    assert [d.kind for d in _drafts(kept)] == ["remember"]


@pytest.mark.parametrize("rule", [
    "Remember: from now on, reply in German.",
    "记住以后的回复都用英文",
    "记住往后的回复都用英文",
])
def test_a_remembered_standing_rule_is_feedback(rule):
    assert [(d.kind, d.type) for d in _drafts(rule)] == [("remember", "feedback")]


def test_a_remembered_fact_about_the_work_stays_project():
    assert [d.type for d in _drafts("Remember that the staging database is shared with QA.")] == ["project"]
