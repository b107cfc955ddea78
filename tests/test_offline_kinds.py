"""Kinds of things the offline rules keep or refuse, added for issue 20 after the first fresh held-out set (its
two false saves and its misses): a remark that starts "Note that ..." is context, not a remember request; "I'm going
to ..." is a plan, not a role; the tool a user habitually works with is a user fact and what the work is built on now
a project fact (one memory for a list of them); a norm said for every item of a kind holds for the next one.
After the second fresh set (run once, then burnt): a request without its question mark, an option picked by "that",
where the task of the moment stops ("do not plan or implement"), a link to one issue or pull request, and lines a
terminal printed are no memories either."""

from __future__ import annotations

import pytest

from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("remark", [
    "Note that there is a config file in the root, but I am not sure if that's the right place.",
    "I'm going to ignore the owner binding because I don't want the agent to leak the owner's email.",
    "I'm building a small tool for developers and designers.",
    "I'm using the wrong branch for this, switch back.",
    "I use it to test the parser.",
    "All the questions need to be tightened and a few answers clarified.",
    "Each answer should read as individually sensible.",
])
def test_remarks_plans_and_edits_save_nothing(remark):
    assert _drafts(remark) == []


@pytest.mark.parametrize("text, type_, kind, words", [
    ("Make a note that the staging database is reset every Monday.", "project", "remember", ["staging", "monday"]),
    ("I'm a senior backend engineer.", "user", "role", ["backend engineer"]),
    ("I'm the owner of this repository.", "user", "role", ["owner"]),
    ("I use `direnv` to set up the devbox shell.", "user", "tools", ["the user uses", "direnv"]),
    ("J'utilise pnpm pour tous mes projets.", "user", "tools", ["pnpm"]),
    ("I don't use Docker, I use Podman.", "user", "tools", ["the user doesn't use docker, they use podman"]),
    ("I do not use VS Code.", "user", "tools", ["the user does not use vs code"]),
    ("Я не использую Docker.", "user", "tools", ["docker"]),
    ("我不用 VS Code，我用 Neovim。", "user", "tools", ["neovim"]),
    ("Cada pregunta debe tener 5 opciones de respuesta.", "feedback", "preference", ["5 opciones"]),
    ("Every migration must have a down step.", "feedback", "preference", ["down step"]),
])
def test_kinds_that_are_kept(text, type_, kind, words):
    drafts = _drafts(text)
    assert [(d.type, d.kind) for d in drafts] == [(type_, kind)]
    assert all(w in drafts[0].rule.lower() for w in words), drafts[0].rule


def test_what_the_work_uses_now_is_one_project_memory():
    drafts = _drafts("Check the pricing.\n- I'm using Twilio for SMS.\n- I'm using Resend for emails.")
    assert [(d.type, d.kind) for d in drafts] == [("project", "stack")]
    assert "Twilio" in drafts[0].rule and "Resend" in drafts[0].rule


def test_a_norm_is_kept_without_the_task_of_the_moment_in_its_sentence():
    drafts = _drafts("Cada pregunta debe tener 5 opciones de respuesta, las preguntas deben ser conceptuales que "
                     "cumplan al menos con el nivel 2 de la taxonomía de bloom modificada y usen la plantilla del tema")
    assert [d.rule for d in drafts] == ["Cada pregunta debe tener 5 opciones de respuesta"]


@pytest.mark.parametrize("noise", [
    "Can you also add the usage with a progress bar similar to https://code.example.com/docs/statusline",
    "Let's go with that simple option.",
    "When done, write a detailed research.md with everything you found. Do not plan or implement.",
    "Just curious (don't implement anything) - what would it take to add it to the pagination?",
    "Fix issue https://github.com/someone/project/issues/22 and open the PR.",
    "Look at https://github.com/someone/project/pull/7 please.",
    "fix \u26a0 The middleware file convention is deprecated. Learn more: https://nextjs.org/docs/messages/x\n"
    "Unhandled Rejection: Error: Both middleware file and proxy file are detected. Learn more: https://nextjs.org/y",
    "(.venv) me@laptop:~/app$ bash start.sh\n * Serving Flask app 'api'\n * Debug mode: on\n"
    "WARNING: This is a development server. Do not use it in a production deployment.",
])
def test_requests_picks_stops_work_items_and_terminal_output_save_nothing(noise):
    assert _drafts(noise) == []


@pytest.mark.parametrize("text, type_, kind", [
    ("Could you always run the tests before committing.", "feedback", "preference"),
    ("Never implement anything before I approve the plan.", "feedback", "correction"),
    ("The sprint board is tracked at https://linear.app/acme/team/ENG/board for the team.", "reference", "pointer"),
    ("Our roadmap is in the wiki at https://github.com/acme/app/wiki/Roadmap.", "reference", "pointer"),
])
def test_rules_and_pointers_beside_them_still_stand(text, type_, kind):
    assert (type_, kind) in [(d.type, d.kind) for d in _drafts(text)]


def test_chinese_and_japanese_sentences_end_at_their_own_stops():
    from memdir.stages.extractor import prose

    assert prose.sentences("どんなメッセージにする？コミットは必ず英語で書いて。") == [
        "どんなメッセージにする？", "コミットは必ず英語で書いて。"]
    assert prose.sentences("这是什么？以后总是用pnpm。") == ["这是什么？", "以后总是用pnpm。"]
    # a question no longer carries the rule said after it with it, nor hides it
    assert [d.rule for d in _drafts("这是什么？以后总是用pnpm。")] == ["以后总是用pnpm。"]


@pytest.mark.parametrize("sentence", [
    "One thing that I never use is Docker Desktop, I run podman.",
    "Just so you know, what I don't use is yarn, always npm.",
    "The editor that I never use is Emacs, so don't suggest it.",
    "Lo que no uso es Docker Desktop.",
    "O que eu não uso é o Docker Desktop.",
    "То, что я не использую, — это Docker Desktop.",
    "我不用的工具是 Docker Desktop",
])
def test_a_tool_the_user_does_without_named_after_a_relative_clause_is_kept(sentence):
    """hostile23: "the shortcuts that I don't use" says which shortcuts (set 16), but "what I don't use is yarn" names
    the tool the user does without: the relative clause is followed by "is" and the tool. Dropped by the rule for
    the first; kept, in each language the rule reads."""
    from memdir.stages.extractor.offline_user import about_the_user

    assert about_the_user(sentence) == "tools"


@pytest.mark.parametrize("sentence", [
    "Delete the shortcuts that I don't use.",
    "ok and let's delete the shortcuts that I don't use now. list every one of them and I'll tell you",
    "Remove the plugins that I don't use, they are slow.",
    "Supprime les raccourcis que je n'utilise pas.",
    "Удали ярлыки, которые я не использую.",
    "删掉我不用的快捷键",
])
def test_which_things_a_relative_clause_picks_is_still_no_tool(sentence):
    from memdir.stages.extractor.offline_user import about_the_user

    assert about_the_user(sentence) is None
