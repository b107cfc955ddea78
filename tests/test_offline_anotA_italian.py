"""Two ways a sentence that is no rule was saved as one: a Chinese A-not-A question typed without 吗 or a
question mark ("是不是应该总是用pnpm", should we always use pnpm), and Italian read as Spanish or Portuguese
(a language the offline rules do not cover: nothing is saved from it, and the note says so)."""

from __future__ import annotations

import pytest

from memdir.stages.extractor import offline, offline_lang as lang, offline_languages
from memdir.transcript import Message


def _message(text: str) -> Message:
    return Message(role="user", content=[{"type": "text", "text": text}], uuid="u1", said=text, kind="prompt")


@pytest.mark.parametrize("text", ["是不是应该总是用pnpm", "要不要每次都跑测试", "会不会每次都要先跑测试",
                                  "以后都用pnpm好不好", "有没有办法每次都自动跑lint"])
def test_a_not_a_questions_save_nothing(text):
    assert lang.is_question(text)
    assert offline.detect([_message(text)])[0] == []


@pytest.mark.parametrize("text", ["不管是不是周末，每次提交前都要跑测试", "无论要不要发布，永远不要直接推送到主分支",
                                  "以后总是用pnpm，不要用npm"])
def test_whether_or_not_is_no_question_and_rules_still_count(text):
    assert not lang.is_question(text)
    assert [d.kind for d in offline.detect([_message(text)])[0]] == ["preference"]


@pytest.mark.parametrize("text", ["Sempre usa pnpm, mai npm", "Usa sempre pnpm invece di npm", "Utilizza sempre pnpm",
                                  "Usa sempre pnpm per installare le dipendenze", "Rispondi sempre in italiano",
                                  "Scrivi sempre i test prima del codice", "Non usare mai npm, usa sempre pnpm",
                                  "Utilitza sempre pnpm en lloc de npm", "Fes sempre els tests abans de fer commit"])
def test_italian_saves_nothing_and_says_so(text):  # and Catalan, read as Spanish or Portuguese the same way
    message = _message(text)
    assert offline_languages.language_of(text) not in offline_languages.COVERED
    assert offline.detect([message])[0] == []
    assert "nothing was saved" in (offline.language_note([message]) or "")


@pytest.mark.parametrize(("text", "code"), [("Nunca uses npm, usa siempre pnpm", "es"), ("Te lo pido siempre", "es"),
                                            ("Não use npm, use sempre pnpm", "pt"), ("Retry per request always", "en"),
                                            ("Never use npm, always use pnpm", "en"), ("Immer pnpm nutzen", "de")])
def test_covered_languages_are_still_read(text, code):
    assert offline_languages.language_of(text) == code
