"""Rule-shaped words about the work at hand are no rule for next time (issue 20, "save nothing rather than noise"):
an option picked from the ones just offered, a feature asked for, a concrete local path to use, a possibility being
explored. What does hold beyond the moment is still kept: how the user writes (with the sentence a "that word" points
back to), a norm said to hold throughout, a reply format together with the output it describes."""

from __future__ import annotations

import pytest

from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("at_hand", [
    "Let's go with 2 and rename the header.",
    "Ok, pick 3 then.",
    "Vamos con la opción 2.",
    "We should support zip archives as well, like the tar ones.",
    "Let's also add a dark mode toggle to the settings page.",
    "Use this D:\\backup\\site as the source to restore the files, I don't want to lose the progress.",
    "Please use ~/exports/old as the input for the report.",
    "If we moved the cache to Redis, every request would be faster.",
    "如果把这个sdk放在zygote里，所有进程默认都会走这个流程，评估一下",
])
def test_work_at_hand_is_not_saved_as_a_rule(at_hand):
    assert _drafts(at_hand) == []


@pytest.mark.parametrize("text, type_, kind", [
    ("From now on, always use D:\\shared\\exports for the exports.", "feedback", "preference"),
    ("Remember that the backups are in D:\\backup.", "project", "remember"),
    ("We should always squash commits before merging.", "feedback", "preference"),
    ("Let's use Postgres because we need transactions.", "project", "decision"),
    ("Si falla la build, nunca hagas push a main.", "feedback", "preference"),
])
def test_rules_with_those_words_still_stand(text, type_, kind):
    assert (type_, kind) in [(d.type, d.kind) for d in _drafts(text)]


def test_how_the_user_writes_is_feedback_with_the_word_it_points_back_to():
    drafts = _drafts("Teams keep saying blocker. I never use that word, I always say impediment.")
    assert [(d.type, d.kind) for d in drafts] == [("feedback", "writing")]
    assert "blocker" in drafts[0].rule and "impediment" in drafts[0].rule
    drafts = _drafts("I almost never write docstrings, the ones in the repo were generated.")
    assert [(d.type, d.kind) for d in drafts] == [("feedback", "writing")]
    assert [(d.type, d.kind) for d in _drafts("I don't use Docker.")] == [("user", "tools")]


def test_a_norm_said_to_hold_throughout_is_kept_and_one_without_is_not():
    assert [(d.type, d.kind) for d in _drafts("Prices should be shown in euros throughout.")] == [("feedback", "preference")]
    assert _drafts("The tests should pass before we merge.") == []


def test_a_reply_format_keeps_the_output_it_describes():
    drafts = _drafts("Формат ответа: пиши коротко. Результат должен быть списком задач.")
    assert [(d.type, d.kind) for d in drafts] == [("feedback", "format")]
    assert "списком" in drafts[0].rule


def test_exclusively_states_a_rule_beyond_english():
    assert [(d.type, d.kind) for d in _drafts("Faça as mudanças exclusivamente pelo instalador.")] == [
        ("feedback", "preference")]


@pytest.mark.parametrize("choice", [
    "I don't want to hardcode the timezone, I want it read from the system.",
    "I dont want to type the token in the terminal i want to paste it in the settings page",
    "I don't want to remove it, I'd just hide it for now.",
    "i do not want to rename this",
])
def test_the_users_own_choice_for_the_thing_at_hand_is_not_a_rule(choice):
    """Two ways of doing the thing at hand weighed ("I don't want to X, I want Y"), or one turned down for the thing
    pointed at: what the user wants now, not a rule for the agent."""
    assert _drafts(choice) == []


@pytest.mark.parametrize("rule", [
    "I don't want you to add comments to the generated files.",
    "I don't want to depend on anything outside the standard library.",
    "I don't want to make it work only on my machine or assume what people have installed.",
    "From now on I don't want to review it by hand, I want the linter to catch it.",
])
def test_what_the_user_never_wants_still_stands(rule):
    assert [d.type for d in _drafts(rule)] == ["feedback"]
