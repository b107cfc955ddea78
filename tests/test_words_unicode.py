"""Recall's word splitting is Unicode-aware (issue 21): a memory written in Japanese, Chinese, Korean or an
accented Latin script is recalled by its own words, and ASCII text splits exactly as before."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from memdir import constants as C, words
from memdir.model import Memory
from memdir.stages.recall.api import recall
from memdir.words import meaning_tokens, split_words, tokens


def test_ascii_text_splits_on_anything_but_letters_and_digits():
    assert split_words("Never use npm_in this Repo, v2.0!") == ["never", "use", "npm", "in", "this", "repo", "v2", "0"]
    # English with typographic punctuation takes the Unicode path and splits the same way.
    assert split_words("Deploy \u2014 don\u2019t \u201cship\u201d it") == split_words('Deploy - don\'t "ship" it')


@pytest.mark.parametrize("text, expected", [
    ("我们使用pnpm安装依赖", ["我们", "们使", "使用", "pnpm", "安装", "装依", "依赖"]),  # Han runs as bigrams
    ("データベースの移行", ["データベース", "移行"]),  # katakana word whole, particle dropped
    ("pnpmを使う", ["pnpm", "使"]),  # scripts split apart; a lone kanji stands for itself
    ("데이터베이스", ["데이", "이터", "터베", "베이", "이스"]),  # Hangul as bigrams
    ("Café résumé Привет ｐｎｐｍ", ["café", "résumé", "привет", "pnpm"]),  # NFKC: full-width is ASCII
])
def test_other_scripts_split_into_words_people_search_by(text, expected):
    assert split_words(text) == expected


def test_stop_words_and_filler_still_drop_in_mixed_text():
    assert tokens("the データベース") == ["データベース"]
    assert meaning_tokens("use the 移行 repo") == ["移行"]


def _picked(folder, prompt) -> list[str]:
    return [h.rel_path for h in recall(folder, prompt, engine="offline", record=False).selected]


@pytest.mark.parametrize("memory, rel, prompt", [
    (Memory(name="データベース移行", description="データベースの移行は金曜日に行わない", type="feedback",
            body="データベースの移行は金曜日に行わない。週末に障害対応ができないため。"),
     "feedback_db_migration_ja.md", "データベースの移行はいつ実行できますか"),
    (Memory(name="依赖安装", description="本项目用pnpm安装依赖，不要用npm", type="feedback",
            body="本项目用pnpm安装依赖，不要用npm，原因是锁文件。"),
     "feedback_pnpm_zh.md", "怎么安装依赖"),
    (Memory(name="Déploiement", description="Jamais de déploiement le vendredi", type="feedback",
            body="Jamais de déploiement le vendredi : personne ne surveille le week-end."),
     "feedback_deploiement.md", "quand faire le déploiement ?"),
])
def test_a_memory_is_recalled_by_the_words_of_its_own_language(store, memory, rel, prompt):
    store.save(memory, rel_path=rel)
    store.save(Memory(name="Knitting", description="The user knits with merino yarn", type="user",
                      body="Merino yarn only."), rel_path="user_knitting.md")
    assert _picked(store.root, prompt) == [rel]
    assert _picked(store.root, "天気はどうですか") == []  # "how is the weather?": no shared word


def test_an_older_memory_in_a_big_folder_is_offered_by_its_chinese_words(store):
    """Past the newest 200, recall offers older memories by a cheap substring test of the prompt's words."""
    from memdir.scan import scan
    from memdir.stages.recall.manifest import older_matches

    store.save(Memory(name="依赖安装", description="本项目用pnpm安装依赖", type="feedback", body="不要用npm。"),
               rel_path="feedback_pnpm_zh.md")
    store.save(Memory(name="Knitting", description="The user knits with merino yarn", type="user",
                      body="Merino yarn only."), rel_path="user_knitting.md")
    older = scan(store.root).headers
    assert [h.rel_path for h in older_matches("怎么安装依赖", older, 5)] == ["feedback_pnpm_zh.md"]


@pytest.mark.parametrize("person", ["Alice", "Zoë", "Łukasz", "Émile"])
def test_a_person_named_in_any_script_is_what_the_prompt_is_about(store, person):
    """The one word a prompt shares with a memory is a person's name: it is a proper name, whatever
    its first letter, so the memory is recalled (as Alice's always was)."""
    store.save(Memory(name="billing-owner", description=f"{person} owns the billing service", type="project",
                      body=f"{person} owns the billing service and reviews its changes."), rel_path="project_billing.md")
    assert _picked(store.root, f"ask {person} before the demo") == ["project_billing.md"]


_SCRIPTS = "abcÉéñß Жж λ ية 日本語中文字 한국어 ひらがなの カタカナ・データ ｶﾀｶﾅ ＡＢＣ 々〇 _-.,! 123 𠀀𠀁"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_SCRIPTS), max_size=60))
def test_splitting_runs_first_gives_the_words_the_one_pattern_gave(text):
    """split_words cuts runs of letters first and sends only runs holding a spaceless script through the
    costly pattern (~5 ms to compile); the words must be those the pattern alone gave on the whole text."""
    whole = re.compile(words._UNICODE_TOKEN_PATTERN)
    expected: list[str] = []
    if text.lower().isascii():
        expected = words._TOKEN.findall(text.lower())
    else:
        for han, hangul, katakana, other in whole.findall(unicodedata.normalize("NFKC", text).lower()):
            if han or hangul:
                expected.extend(words._bigrams(han or hangul))
            elif katakana or other:
                expected.append(katakana or other)
    assert split_words(text) == expected


def test_a_long_run_of_combining_marks_is_cut_before_nfkc(monkeypatch):
    """NFKC sorts each run of combining marks by insertion: 100 KB of alternating marks took 7.5 s (hostile9), in the
    prompt hook's tokens and the support check's terms. No run longer than NFKC_MARKS_KEPT reaches it in long text; short
    text and real accents pass untouched."""
    from memdir.stages.extractor import support_terms

    seen: list[str] = []
    real = unicodedata.normalize
    monkeypatch.setattr(unicodedata, "normalize", lambda form, text: seen.append(text) or real(form, text))
    zalgo = "deploy " + "e" + "\u0301\u0316" * 30_000 + " pnpm"
    assert {"deploy", "pnpm"} <= set(words.tokens(zalgo)) and {"deploy", "pnpm"} <= support_terms.terms(zalgo)
    longest = max(len(run) for text in seen for run in re.findall(r"[\u0300-\u036f]+", text))
    assert longest == C.NFKC_MARKS_KEPT
    accents = "Ṩtraße Nguyễn " * 400  # long, with real stacked accents: unchanged
    assert words.nfkc(accents) == real("NFKC", accents)
