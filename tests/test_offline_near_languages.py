"""Languages the offline rules do not read but that share their short words with ones they do (issue 20: "Sessions
in a language the rules do not cover get nothing, and say so"). Italian "Il test fallisce sempre." scored French on
"il" and Portuguese on "sempre" and was saved as a rule; Catalan, Dutch and Romanian the same way. Each is read as
uncovered, and the run's result says so; Spanish, Portuguese and French sentences are read as before."""

from __future__ import annotations

import pytest

from memdir.stages.extractor import offline, offline_languages
from memdir.transcript import Message


def _message(text: str) -> Message:
    return Message(role="user", content=[{"type": "text", "text": text}], uuid="u1", said=text, kind="prompt")


@pytest.mark.parametrize("text", [
    "Il test fallisce sempre.", "Il server restituisce sempre 500.", "Il codice deve essere sempre in inglese.",
    "La build fallisce sempre in CI.",
    "El servidor sempre retorna 500.", "El servidor sempre torna un error.",  # Catalan
    "Gebruik altijd pnpm.", "De test faalt altijd.", "Het script geeft altijd een fout.",  # Dutch
    "Folosește mereu pnpm.", "Testul pica mereu in CI.", "Foloseste intotdeauna pnpm pentru proiect.",  # Romanian
])
def test_a_near_language_saves_nothing_and_says_so(text):
    message = _message(text)
    assert offline_languages.language_of(text) not in offline_languages.COVERED
    assert offline.detect([message])[0] == []
    assert "nothing was saved" in (offline.language_note([message]) or "")


@pytest.mark.parametrize(("text", "code"), [
    ("Les tests de la PR sont rouges.", "fr"), ("Il faut toujours lancer les tests.", "fr"),
    ("Il va y avoir un souci car la branche existe déjà.", "fr"), ("Le serveur renvoie toujours une 500.", "fr"),
    ("El servidor siempre devuelve 500.", "es"), ("La app no funciona en el móvil.", "es"),
    ("Cada vez que haces un commit, corre los tests.", "es"),
    ("A API sempre retorna 500.", "pt"), ("O teste sempre falha no CI.", "pt"),
    ("Der Server gibt immer 500 zurück.", "de"), ("Run tests in CI before merging.", "en"),
    ("We use pnpm in this repo.", "en"),
])
def test_covered_sentences_sharing_those_words_are_still_read(text, code):
    assert offline_languages.language_of(text) == code


@pytest.mark.parametrize("text", ["Sempre use pnpm.", "Use sempre pnpm.", "Sempre use pnpm, nunca npm."])
def test_a_portuguese_imperative_with_sempre_is_a_rule(text):
    # "Sempre use pnpm" read as English on "use", where a rule must start with an imperative: nothing was saved, though
    # "Siempre usa pnpm" and "Utilise toujours pnpm" are
    assert offline_languages.language_of(text) == "pt"
    assert [d.type for d in offline.detect([_message(text)])[0]] == ["feedback"]


@pytest.mark.parametrize("text", ["Use a linter on every commit.", "Always use pnpm.", "Use as few dependencies as you can."])
def test_english_with_use_stays_english(text):
    assert offline_languages.language_of(text) == "en"
