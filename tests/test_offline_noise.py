"""The offline engine saves nothing rather than noise, in every language its rules cover (issue 20):
no question saved as a fact, no assistant text saved as the user's confirmation, no one-off request
saved as a rule, no "instead of the corrected behaviour" on a confirmation, and nothing from a
language the rules do not cover (said in the run's reason)."""

from __future__ import annotations

from datetime import date

import pytest

from memdir.stages.extractor import offline_languages
from memdir.stages.extractor.offline import apply, detect, language_note
from memdir.store import MemoryStore
from memdir.transcript import Message

MONDAY = "2026-03-02T09:00:00Z"


def _msgs(*turns: tuple[str, str]) -> list[Message]:
    return [Message(role, [{"type": "text", "text": text}], uuid=f"m{i}", timestamp=MONDAY)
            for i, (role, text) in enumerate(turns)]


def _drafts(*texts: str):
    return detect(_msgs(*(("user", t) for t in texts)))[0]


@pytest.mark.parametrize("question", [
    "Should we always use pnpm here?",
    "Est-ce que tu utilises toujours pnpm ?",
    "¿Siempre usas pnpm para esto?",
    "Você sempre usa pnpm?",
    "Benutzt du immer pnpm?",
    "Ты всегда используешь pnpm?",
    "你总是用 pnpm 吗",
    "いつも pnpm を使いますか",
    "Am I a backend engineer on this team?",
    "Is the design at https://www.figma.com/design/abc/Shop the latest one?",
])
def test_no_question_is_saved(question):
    assert _drafts(question) == []


@pytest.mark.parametrize("still_not", [
    # "toujours pas", "immer noch": "still (not)", not "always" (fresh11 fr-wm-2, a bug report saved as feedback)
    "Le cookie n'arrive toujours pas a être ecrit, pas d'erreur dans la console",
    "Ça ne marche toujours pas après le redémarrage.",
    "Der Build schlägt immer noch fehl, auch nach dem Neustart.",
    "Es funktioniert noch immer nicht mit dem neuen Token.",
    "Es funktioniert noch\u00a0immer nicht mit dem neuen Token.",  # a no-break space (Option+Space on a Mac)
])
def test_still_not_working_is_a_report_not_a_standing_rule(still_not):
    assert _drafts(still_not) == []


@pytest.mark.parametrize("still", [
    # French "toujours" after a subject and a verb of failure or state means "still": a report of the moment
    "Le test échoue toujours.",
    "Ça plante toujours au démarrage.",
    "Il est toujours cassé.",
    "Le build est toujours rouge après le correctif.",
    "Le serveur renvoie toujours une 500.",
    "L'erreur apparaît toujours dans la console.",
    "Je vois toujours l'ancien logo.",
    # "always" next to a failure verb reports a symptom, in the languages where it is its own word
    "El test siempre falla en CI.",
    "El build siempre se rompe.",
    "O teste sempre falha no CI.",
    "Der Test schlägt im CI immer fehl.",
    "Der Build bricht immer ab.",
    "Тест всегда падает в CI.",
    "测试总是失败。",
])
def test_still_failing_is_a_report_not_a_standing_rule(still):
    assert _drafts(still) == []


@pytest.mark.parametrize("rule", [
    "Utilise toujours pnpm dans ce dépôt.", "Benutze immer pnpm in diesem Repo.",
    # an imperative, a wish or a habit keeps its "toujours": a rule
    "Lance toujours les tests avant de pousser.", "Je veux toujours des tests avant un commit.",
    "Toujours lancer les tests avant de committer.", "On utilise toujours pnpm dans ce projet.",
    "Tu dois toujours lancer les tests.", "Affiche toujours l'erreur complète.", "Siempre usa pnpm.",
    "Le code reste toujours en anglais.",  # a state verb with no failure after it: a convention
])
def test_always_is_still_a_standing_rule(rule):
    assert [d.type for d in _drafts(rule)] == ["feedback"]


@pytest.mark.parametrize("one_off", [
    "Don't touch the header yet.",
    "Never mind the tests for now.",
    "Ne modifie pas ce fichier pour l'instant.",
    "No toques este archivo todavía.",
    "Não mexa nesse arquivo por enquanto.",
    "Ändere die Datei noch nicht.",
    "Пока не трогай этот файл.",
    "Arregla el error en el archivo main.py.",
    "Por favor, crie um componente de login.",
    "修复这个 bug。",
    "このファイルを削除して。",
])
def test_no_one_off_request_is_saved_as_a_rule(one_off):
    assert _drafts(one_off) == []


@pytest.mark.parametrize("rule, kind", [
    ("Toujours répondre en français, s'il te plaît.", "feedback"),
    ("Siempre usa pnpm en este repositorio.", "feedback"),
    ("Nunca faça push direto na main.", "feedback"),
    ("Bitte immer pnpm benutzen.", "feedback"),
    ("Без моего подтверждения ты не удаляешь файлы.", "feedback"),
    ("以后每次都用 pnpm。", "feedback"),
    ("今後は必ず pnpm を使ってください。", "feedback"),
    ("Modify claude.md to rerun the linter each time a file changes.", "feedback"),
    ("请用中文回复。", "feedback"),
    ("日本語で答えてください。", "feedback"),
    ("我是做后端开发的。", "user"),
    ("Меня зовут Лиза.", "user"),
    ("Je suis développeuse backend.", "user"),
    ("Soy ingeniera de datos.", "user"),
])
def test_standing_rules_and_facts_are_kept_in_covered_languages(rule, kind):
    assert [d.type for d in _drafts(rule)] == [kind]


@pytest.mark.parametrize("text, kind", [
    ("Recuerda que el entorno de staging se comparte con QA.", "remember"),
    ("Lembre-se que o deploy de produção é feito às sextas.", "remember"),
    ("Запомни, что я работаю только по утрам.", "remember"),
    ("请记住：生产数据库是只读的。", "remember"),
    ("No uses npm en este repositorio, usamos pnpm.", "correction"),
    ("Не трогай файлы миграций, они генерируются.", "correction"),
    ("不要在主分支上直接提交。", "correction"),
])
def test_requests_and_corrections_beyond_english(text, kind):
    assert [d.kind for d in _drafts(text)] == [kind]


@pytest.mark.parametrize("just_that", ["No hagas eso.", "Не делай это.", "Ne fais pas ça.", "不要那个。"])
def test_dont_do_that_corrects_nothing_to_keep(just_that):
    assert _drafts(just_that) == []


def test_the_users_name_and_role_in_one_breath_are_one_memory():
    drafts = _drafts("Меня зовут Лиза. Обращайся ко мне Лиза. Я являюсь менеджером проектов.")
    assert len(drafts) == 1 and "Лиза" in drafts[0].rule and "менеджером" in drafts[0].rule


def test_assistant_text_is_never_saved_as_the_users_confirmation():
    messages = _msgs(("assistant", "I split the change into three small commits and pushed them."),
                     ("user", "Perfect, that's exactly what I wanted."),
                     ("assistant", "J'ai ajouté les tests dans un seul fichier."),
                     ("user", "Oui, c'est parfait, exactly like that."))
    assert detect(messages)[0] == []


def test_the_agents_question_in_an_answer_is_not_the_users_words():
    answer = Message("user", [{"type": "text", "text": "x"}], uuid="a", timestamp=MONDAY, kind="answer",
                     said="Q: Remember that we always deploy on Fridays.\nA: Always run the linter before a commit.")
    assert [d.rule for d in detect([answer])[0]] == ["Always run the linter before a commit"]


def test_a_confirmation_is_never_filed_as_a_correction(tmp_path):
    store = MemoryStore(tmp_path)
    outcome = apply(store, _msgs(("user", "That's perfect, don't change a thing about the layout.")),
                    today=date(2026, 3, 2))
    bodies = [store.read(p)[0].body for p in outcome.saved]
    assert outcome.saved  # the rule the user stated is kept, as a preference
    assert not any("instead of the corrected behaviour" in b for b in bodies)


@pytest.mark.parametrize("text, language", [
    ("앞으로 항상 pnpm을 사용해 주세요.", "Korean"),
    ("Usa sempre pnpm per questo progetto, per favore, non npm.", "a language the offline rules do not cover"),
    ("Gebruik altijd pnpm in dit project, niet npm.", "a language the offline rules do not cover"),
    # Polish typed without its letters scored as Portuguese on "na" and "o"; with them, its letters past ÿ
    # split its words apart before anything looked at them.
    ("Zawsze przygotuj dokument na koniec tygodnia i nie wspominaj o wariancie deployed.",
     "a language the offline rules do not cover"),
    ("Nigdy nie używaj npm, zawsze pnpm, bo wkleiłem już złą wersję.", "a language the offline rules do not cover"),
])
def test_an_uncovered_language_saves_nothing_and_says_so(tmp_path, text, language):
    messages = _msgs(("user", text))
    assert detect(messages)[0] == []
    assert language in (language_note(messages) or "")


def test_covered_languages_get_no_note():
    assert language_note(_msgs(("user", "Siempre usa pnpm."), ("user", "Always use pnpm."))) is None


@pytest.mark.parametrize("sentence, code", [
    ("Always use pnpm here.", "en"), ("Toujours répondre en français.", "fr"), ("Siempre usa pnpm en este repo.", "es"),
    ("Nunca faça push direto na main.", "pt"), ("Bitte immer pnpm benutzen und nicht npm.", "de"),
    ("Всегда используй pnpm.", "ru"), ("以后每次都用 pnpm。", "zh"), ("今後は必ず pnpm を使ってください。", "ja"),
    ("항상 pnpm을 사용해 주세요.", "ko"), ("Push nie direkt auf main.", "de"), ("Nunca faça push direto na main.", "pt"),
    ("Jeszcze nie odpaliłem", "other"), ("Tak dokument przygotuj na finance_calculator nie wspominaj o wariancie", "other"),
])
def test_language_of(sentence, code):
    assert offline_languages.language_of(sentence) == code
