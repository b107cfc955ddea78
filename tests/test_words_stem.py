"""memdir.words.stem: a word and its inflections meet, and short words ending in -er or -est keep their ending
(a memory about cover letters is not a match for "let's")."""

from __future__ import annotations

import pytest

from memdir.stages.recall.lexical import Ranker
from memdir.words import meaning_tokens, stem


@pytest.mark.parametrize("forms", [
    ("letter", "letters"), ("cover", "covers", "covered", "covering"), ("page", "pages", "paged"),
    ("make", "makes", "making"), ("rule", "rules"), ("role", "roles"), ("career", "careers"),
    ("answer", "answers", "answered"), ("filter", "filters", "filtered", "filtering"),
    ("recruiter", "recruiters", "recruiting", "recruit"), ("painting", "painter", "paints"),
])
def test_the_forms_of_a_word_share_one_stem(forms):
    assert len({stem(w) for w in forms}) == 1, {w: stem(w) for w in forms}


@pytest.mark.parametrize("word, other", [("letter", "let"), ("career", "car"), ("water", "wat"), ("request", "requ"),
                                         ("latest", "late"), ("cover", "cove")])
def test_a_short_word_ending_in_er_or_est_is_not_another_word(word, other):
    assert stem(word) != stem(other)


def test_a_prompt_saying_lets_does_not_match_a_memory_about_cover_letters():
    ranker = Ranker([("cover-letters", "Cover letters fill exactly one page", "feedback",
                      "Every cover letter fills one page, 550-700 words.")])
    assert meaning_tokens("let's rename this") == ["let", "renam"]
    assert ranker.evidence("let's rename this").matched == [0]
    assert ranker.evidence("write the cover letters").matched == [2]  # cover, letter (write is not in it)
    assert ranker.evidence("one more page please").matched == [1]  # page / pages
