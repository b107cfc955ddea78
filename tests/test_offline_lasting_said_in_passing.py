"""Lasting statements said in passing, while asking for something of the moment, that set 13 showed the rules
missing (issue 20): how commits are signed, where every new project goes, how much the user knows of a field. Each
keeps its one-off or off-point counterpart unsaved. The sentences are written here, not taken from the data."""

from __future__ import annotations

import pytest

from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("said", [
    "Commit this without you as co-author.",
    "Commit it, and never add yourself as co-author.",
    "Faz o commit por módulo, mas sem você como co-author.",
    "Haz commit y push sin coautor.",
    "Committe alles, aber ohne Co-Author-Zeile.",
    "提交代码，不要加co-author",
])
def test_commits_without_a_co_author_is_a_rule_even_inside_a_request(said):
    assert [(d.kind, d.type) for d in _drafts(said)] == [("attribution", "feedback")]
    assert "co" in _drafts(said)[0].rule.lower()


def test_a_bare_no_co_author_keeps_the_sentence_it_qualifies():
    [draft] = _drafts("Faça o commit semântico por arquivo... Sem você como coauthor! Depois rode os testes.")
    assert draft.rule == "Faça o commit semântico por arquivo. Sem você como coauthor"


@pytest.mark.parametrize("noise", [
    'He said "commit without co-author" in the review.',  # someone else's words
    "I wrote this with a co-author, not alone.",  # no rule about commits
    "The co-author field is empty, not filled.",
    "Who is the co-author of this paper?",
])
def test_a_co_author_mentioned_otherwise_is_no_rule(noise):
    assert [d for d in _drafts(noise) if d.kind == "attribution"] == []


@pytest.mark.parametrize("said", [
    "all the new projects that we start should be in ~/claude projects/[name of the project]",
    "Every new script should be saved in ~/bin.",
    "Todos os novos projetos devem ficar em ~/dev.",
])
def test_where_every_new_thing_goes_is_a_rule(said):
    assert [(d.kind, d.type) for d in _drafts(said)] == [("placement", "feedback")]


@pytest.mark.parametrize("noise", [
    "Put all the files in the new folder.",  # the task at hand
    "All new tests are in tests/unit now.",  # a report of what the code shows
])
def test_a_placement_of_the_moment_is_no_rule(noise):
    assert _drafts(noise) == []


@pytest.mark.parametrize("said", [
    "I'm inexperienced with networking concepts. As such, explain what a tunnel is.",
    "I have no experience with Docker.",
    "I am not very familiar with React hooks.",
])
def test_how_little_the_user_knows_of_a_field_is_a_user_fact(said):
    assert [(d.kind, d.type) for d in _drafts(said)] == [("expertise", "user")]


def test_unfamiliar_with_one_point_of_the_answer_is_no_user_fact():
    assert _drafts("In terms of the `user` on a gateway, I am unfamiliar with that concept.") == []


@pytest.mark.parametrize("said", [
    "Ne modifie pas main. Travaille uniquement sur la branche chore/smoke-test.",
    "No modifiques main, trabaja en una rama.",
    "Não mexa na main.",
    "不要直接推送到main",
])
def test_keep_off_the_main_branch_holds_even_inside_a_task_brief(said):
    drafts = _drafts(said)
    assert drafts and drafts[0].type == "feedback" and "main" in drafts[0].rule


@pytest.mark.parametrize("noise", [
    "Ne modifie pas le titre.",  # the thing at hand
    'Il a dit "ne touche pas main" hier.',  # someone else's words
    "Don't touch main for now.",  # for now
])
def test_a_branch_of_the_moment_is_no_rule(noise):
    assert _drafts(noise) == []


def test_where_the_site_is_hosted_is_a_reference_without_the_replys_asides():
    [draft] = _drafts("no, my site is hosted on Cloudflare Pages actually.")
    assert (draft.type, draft.kind, draft.rule) == ("reference", "hosting", "My site is hosted on Cloudflare Pages")


def test_a_run_on_request_with_a_norm_and_a_standing_word_is_no_rule():
    """Set 14: a 60-word unpunctuated request read as a standing preference for its "need to" and "by default"."""
    run_on = ("once i planned a turn by turn it need to replace button start with End or whatever best user experience "
              "also remove the mid phase the get direction do turn by turn by default need update full code with more "
              "nicer also when turn by turn success make the sheet to peek state please so user can see and start")
    assert _drafts(run_on) == []
    assert [d.kind for d in _drafts("By default you need to run the linter before committing.")] == ["preference"]


@pytest.mark.parametrize("for_now", ["ne modifie pas main pour ce fix", "No toques main por ahora."])
def test_off_main_for_this_piece_of_work_only_is_no_rule(for_now):
    """hostile21: "pour ce fix" keeps it to the work at hand."""
    assert _drafts(for_now) == []
