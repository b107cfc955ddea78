"""Kinds of lasting statement the blind sets 4 to 7 showed the rules missing (issue 20): a standing rule said as
"let's always ...", a documentation page handed over to read now, a dislike of a kind of thing with its reason. Each
keeps its one-off counterpart unsaved. The sentences are written here, not taken from the data."""

from __future__ import annotations

import pytest

from tests.offline_drafts import drafts as _drafts


@pytest.mark.parametrize("rule", [
    "Let's always go for the simplest fix, even if it is slower.",
    "Lets never skip the migration check.",
])
def test_lets_always_is_a_standing_rule(rule):
    assert [(d.kind, d.type) for d in _drafts(rule)] == [("preference", "feedback")]


@pytest.mark.parametrize("pointer", [
    "Read https://help.example.md/bases/syntax and fix the syntax.",
    "Take a look at the docs https://developers.example.io/reference/listings, there is one field called price.",
    "Check https://example.readthedocs.io/en/latest/config.html before changing the config.",
    "Open https://example.com/docs/setup and follow it.",
])
def test_a_documentation_page_handed_over_is_a_pointer(pointer):
    assert [(d.kind, d.type) for d in _drafts(pointer)] == [("pointer", "reference")]


@pytest.mark.parametrize("noise", [
    "Look at https://github.com/acme/widgets and tell me what you think.",  # a repository to review now
    "Call https://api.example.com/v1/properties?city=Austin and show me the result.",  # the API itself
    "https://docs.example.rs/crate/latest/",  # a link alone says nothing of what it is
])
def test_a_link_of_the_moment_is_still_no_pointer(noise):
    assert _drafts(noise) == []


@pytest.mark.parametrize("dislike", [
    "I don't like mocks in integration tests because they hide real failures.",
    "I don't like barrel files, and don't want them unless there is no other way.",
])
def test_a_dislike_of_a_kind_of_thing_with_its_reason_is_a_preference(dislike):
    assert [(d.kind, d.type) for d in _drafts(dislike)] == [("preference", "feedback")]


@pytest.mark.parametrize("noise", [
    "I don't like mocks.",  # nothing more than the dislike
    "I don't like this colour because it is too dark.",  # the thing at hand
    "I don't like how the header looks since the last change.",
])
def test_a_bare_or_pointed_dislike_saves_nothing(noise):
    assert _drafts(noise) == []
