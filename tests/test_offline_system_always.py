"""A present-tense report about the system with "always" is a report, not the user's rule (issue 20: "no one-off
instruction saved as a rule"). "El servidor siempre devuelve 500." was saved as a rule: mend17 read "always" next to
a failure verb as a symptom ("siempre falla"); any verb said of a third-person subject that is neither the user nor
the assistant reports what the system does. An imperative, a wish, a modal or a habit of "we" still states a rule."""

from __future__ import annotations

import pytest

from tests.offline_drafts import drafts


@pytest.mark.parametrize("report", [
    "El servidor siempre devuelve 500.", "El servidor devuelve siempre 500.", "El login siempre tarda 10 segundos.",
    "La página siempre se queda en blanco.", "Pero el endpoint siempre devuelve un 404.",
    "O servidor sempre retorna 500.", "O servidor retorna sempre 500.", "A página sempre mostra o erro antigo.",
    "Le serveur renvoie toujours du JSON.", "Elle renvoie toujours 500.", "La page affiche toujours l'ancien logo.",
    "Der Server gibt immer 500 zurück.", "Die Seite zeigt immer den alten Fehler.", "Das Skript liefert immer leere Daten.",
    "The server always returns 500.", "The API always responds with a 404.",
    "Сервер всегда возвращает 500.", "Страница всегда показывает старую ошибку.",
])
def test_a_report_about_the_system_with_always_is_no_rule(report):
    assert drafts(report) == []


@pytest.mark.parametrize("rule", [
    "Usa siempre pnpm.", "Siempre usa pnpm.", "Always use pnpm.", "Immer pnpm verwenden.", "Benutze immer pnpm.",
    "Sempre use pnpm.", "Use sempre pnpm.", "Utilise toujours pnpm.", "Всегда используй pnpm.",
    # a modal, a convention that stays, a habit of "we", a condition: still the user's rule
    "El código siempre debe estar en inglés.", "O código deve sempre estar em inglês.", "Der Code muss immer auf Englisch sein.",
    "Le code doit toujours être en anglais.", "Il faut toujours lancer les tests.", "Le code reste toujours en anglais.",
    "On utilise toujours pnpm dans ce projet.", "Die Tests immer vor dem Commit ausführen.",
    "Код всегда должен быть на английском.", "Pour les tests utilise toujours pnpm.", "Los commits siempre en inglés.",
    "Nuestro equipo siempre usa pnpm.", "La próxima vez siempre usa pnpm.",
    "Os commits sempre em inglês.",
    # the project's own convention (saved before the report rule, which had dropped them)
    "Ce projet utilise toujours pnpm.", "Este proyecto siempre usa pnpm.", "Este projeto sempre usa pnpm.",
    "Dieses Projekt nutzt immer pnpm.", "Le repo utilise toujours pnpm.",
])
def test_rules_with_always_are_still_rules(rule):
    assert [d.type for d in drafts(rule)] == ["feedback"]


@pytest.mark.parametrize("report", ["El endpoint responde con un 404.", "A API responda com erro quando o token expira."])
def test_what_a_system_responds_is_no_reply_format(report):
    # "responde" is the imperative "answer" and also what a subject does: only the imperative asks for a reply format
    assert drafts(report) == []


@pytest.mark.parametrize("rule", ["Responde siempre en español.", "Por favor responde en inglés.", "Responda sempre em português."])
def test_a_reply_format_is_still_one(rule):
    assert [(d.type, d.kind) for d in drafts(rule)] == [("feedback", "format")]


@pytest.mark.parametrize("rule", [
    "Our team always uses pnpm.", "We always deploy on Fridays.", "We never merge on Fridays.",
    "This project always uses pnpm.", "The team always reviews PRs before merging.",
])
def test_the_teams_habit_in_english_is_a_rule_as_in_the_other_languages(rule):
    """"Nuestro equipo siempre usa pnpm" was saved and "Our team always uses pnpm." was not: English asked for an
    imperative. The team's or the project's habit with a verb of practice is its convention."""
    assert [d.type for d in drafts(rule)] == ["feedback"]


@pytest.mark.parametrize("report", [
    "Our app always returns 500.", "Our team always gets this error.", "The build always fails on CI.",
    "It always crashes on startup.", "We always get the same warning.",
    # "always run" is a rule's verb, but not in "run into" / "run out of" (mend20 found the first saved)
    "We always run into timeouts.", "We always run out of memory on CI.", "Our team always runs across flaky tests.",
])
def test_what_happens_to_the_team_in_english_is_still_no_rule(report):
    assert drafts(report) == []
