"""Kinds added for issue 20 after the misses of the unseen sets were classified (realdata's former held-out, fresh1-3):
standing markers of manner and doubt, a standing imperative, a quality kept in everything of a kind (even inside a
request), a part of the system the work cannot change, where the work runs, what the team has in-house, what the
work is for, a site it is modelled on, its main colour and its schedule, a pointer that says where to look, a
statement with a question after a dash. And two kinds of noise: a CJK "don't" with nothing but the action, and the
user's own plan for later. The sentences are written here, not taken from the data."""

from __future__ import annotations

import pytest

from memdir.stages.extractor import offline_lang as lang, offline_languages
from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("text, type_, kind, words", [
    # standing markers of manner and doubt, in several languages
    ("Use subagents whenever possible.", "feedback", "preference", ["subagents"]),
    ("なるべくテストを先に書くようにしたいです。", "feedback", "preference", ["テスト"]),
    ("尽量使用类型注解。", "feedback", "preference", ["类型注解"]),
    ("En caso de duda, pregúntame antes de borrar archivos.", "feedback", "preference", ["borrar"]),
    # a quality kept in everything of a kind (named in the plural: one thing named is the task at hand)
    ("Keep commit messages and PR descriptions short.", "feedback", "keep", ["commit messages", "short"]),
    ("Please refactor the parser while keeping it dependency free and small.", "feedback", "keep",
     ["dependency free"]),
    # a part of the system the work cannot change
    ("We can't change the billing API schema, other teams read it.", "project", "constraint", ["billing api"]),
    ("I don't think we can change the shared grid component, so rows stay divs.", "project", "constraint",
     ["grid component"]),
    # where the work runs, what the team has of its own
    ("We are running inside a devcontainer.", "project", "environment", ["devcontainer"]),
    ("We also have a private npm registry for the design tokens.", "project", "in-house", ["private npm registry"]),
    # a ban said about the user's own codebase, whatever they call it
    ("Raw SQL strings are banned from our backend.", "feedback", "ban", ["raw sql"]),
    # what the work is for, a site it is modelled on
    ("The main goal is to let any app write its crash dumps without changing the app's code.", "project", "goal",
     ["crash dumps"]),
    ("需求就是让所有服务都能导出统一格式的日志。", "project", "goal", ["统一格式"]),
    ("The landing page layout is inspired by https://example.dev/ and its spacing.", "reference", "model",
     ["https://example.dev/"]),
    ("デザインは https://example.dev/ のサイトを参考にしています。", "reference", "model", ["example.dev"]),
    # the product's look and its schedule
    ("The primary color should be teal across the whole site.", "project", "design", ["teal"]),
    ("Je veux que la couleur principale soit du vert.", "project", "design", ["vert"]),
    ("The report job should run every day at 7am.", "project", "schedule", ["7am"]),
    ("毎日8時にバックアップを実行したいです。", "project", "schedule", ["8時"]),
    # where to look
    ("To find the deploy targets, check ~/infra/targets.yaml", "reference", "pointer", ["~/infra/targets.yaml"]),
    ("The feature flags are documented in docs/flags.md for everyone.", "reference", "pointer", ["docs/flags.md"]),
])
def test_kinds_that_are_kept(text, type_, kind, words):
    drafts = _drafts(text)
    assert [(d.type, d.kind) for d in drafts] == [(type_, kind)], drafts
    assert all(w in drafts[0].rule.lower() for w in words), drafts[0].rule


def test_a_quality_to_keep_inside_a_question_is_kept_without_the_question():
    drafts = _drafts("Can you review the three files while keeping it simple and framework free, and propose a plan?")
    assert [(d.type, d.kind, d.rule) for d in drafts] == [
        ("feedback", "keep", "While keeping it simple and framework free")]


def test_a_goal_is_kept_from_where_it_is_stated():
    drafts = _drafts("先读一下这个项目，需求就是让所有服务都能导出统一格式的日志")
    assert [d.rule for d in drafts] == ["需求就是让所有服务都能导出统一格式的日志"]


@pytest.mark.parametrize("short_english", ["No attribution", "Im building a saas company", "One question at a time."])
def test_short_english_is_read_as_english(short_english):
    assert offline_languages.language_of(short_english) == "en"


def test_a_statement_before_a_dashed_question_is_read_alone():
    drafts = _drafts("We cannot modify the payments SDK module, so we wrap it - how does that change the plan?")
    assert [(d.type, d.kind) for d in drafts] == [("project", "constraint")]
    assert "how does" not in drafts[0].rule


@pytest.mark.parametrize("noise", [
    # a CJK "don't" with nothing but the action: the step at hand
    "プッシュはしないで",
    "不要提交。",
    # the user's own plan for later, in any language
    "将来的にはテンプレートも増やしたいと思っています。",
    "以后我想再加几个页面。",
    "In the future I'd like to add a second dashboard.",
    # a feature asked for "similar to" a link is a request, not a model to keep
    "Add a usage bar similar to https://example.dev/statusline to the footer.",
    # a keep about the thing at hand, a question without "while keeping", a remark about running into trouble
    "Keep this function short.",
    "That pesticide is banned in the EU.",
    "The goal is to make the failing test pass.",
    "I'm working under pressure.",
    "What color is the header?",
    "I'll check it every day.",
    "Keep the header small.",
    "Can you keep it short?",
    "We are running into a timeout on the login page again today.",
    # not a constraint: what the user can do
    "We can change the header component later.",
])
def test_noise_saves_nothing(noise):
    assert _drafts(noise) == []


@pytest.mark.parametrize("rule", [
    "コミットは二度としないで",  # never again (an emphasis alone, 絶対, is no scope: tests/test_offline_scope.py)
    "今後はmainに直接プッシュしないで",  # said to hold from now on
    "不要在主分支上直接提交。",  # says where
    "npmを使わないで",  # names a tool
])
def test_a_cjk_dont_that_is_a_rule_stays_a_correction(rule):
    assert [d.kind for d in _drafts(rule)] == ["correction"]


def test_the_agent_asked_to_hold_to_something_later_is_no_plan():
    assert not lang.is_plan("In the future, please don't push without my confirmation.")
    assert lang.is_plan("In the future we plan to add a mobile app.")


def test_cjk_runs_count_two_characters_a_word():
    assert lang.word_count("abc def") == 2
    assert lang.word_count("今後ワークフローを追加") == 6
    assert lang.word_count("用 pnpm 安装") == 3
