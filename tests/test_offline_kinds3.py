"""Kinds written from how people instruct a coding agent, not from any session (issue 20: rules about kinds of
things): a recurring trigger ("before committing"), "use X, not Y", a standing phrase before the instruction, the
language the work's text is written in, a ban on something in every artefact of a kind, a behaviour of the agent's
the user does not want, facts about the environments, the stack said in Chinese or Japanese. Each with near misses
that are the moment's work and must save nothing. None of them fired on the 73 tuning sessions, for good or ill."""

from __future__ import annotations

import pytest

from memdir.stages.extractor.offline import detect
from memdir.transcript import Message


def _drafts(text: str):
    return detect([Message("user", [{"type": "text", "text": text}], uuid="m0", timestamp="2026-03-02T09:00:00Z")])[0]


@pytest.mark.parametrize("text, type_, kind", [
    ("Make sure to run the linter before committing.", "feedback", "preference"),
    ("From now on, ask before installing any package.", "feedback", "preference"),
    ("Use yarn, not npm.", "feedback", "correction"),
    ("Commit messages should be in English.", "feedback", "language"),
    ("Use British spelling.", "feedback", "language"),
    ("代码注释用英文写。", "feedback", "language"),
    ("Los commits deben estar en inglés.", "feedback", "language"),
    ("No emojis in commit messages.", "feedback", "ban"),
    ("I hate it when you add extra files I didn't ask for.", "feedback", "dislike"),
    ("The production database is read-only.", "project", "environment"),
    ("Our CI runs on GitHub Actions.", "project", "environment"),
    ("We're on Python 3.9, so no match statements.", "project", "environment"),
    ("我们用的是 PostgreSQL。", "project", "stack"),
])
def test_kinds_that_are_kept(text, type_, kind):
    assert [(d.type, d.kind) for d in _drafts(text)] == [(type_, kind)]


@pytest.mark.parametrize("noise", [
    "Don't change that.",  # about what was just done
    "Let's use the second option.",  # one of the options just offered
    "Let's try the other approach.",
    "The docs in English are outdated.",  # about the docs, no norm
    "Write the commit message in English this time.",
    "Write the README in English.",  # one document: the task at hand
    "No changes in the code since yesterday.",  # observations, not bans
    "No errors in the logs.",
    "The test server is down again.",  # how an environment is doing now
    "The production database is slow today.",
    "I'm on page 3 of the docs.",
    "I don't like this color.",
    "Before committing this, show me the diff.",
])
def test_the_moment_s_work_saves_nothing(noise):
    assert _drafts(noise) == []
