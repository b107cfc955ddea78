"""The offline engine's meaning signal (extractor/offline_dense.py): which of the user's sentences are scored, what a
score keeps, and the switch. A fake embedder stands in for the model (fast); one test runs the real one."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from memdir import constants as C
from memdir.stages.extractor import offline_dense as dense
from memdir.stages.extractor.offline import apply, detect
from memdir.store import MemoryStore
from memdir.transcript import Message

# The fake embedder: one axis per label, a marker word pulls a text towards its label's axis; every text also has a
# shared axis, so a text without a marker is equally (and weakly) near everything.
_MARKERS = {"항상": 0, "always": 0, "엔지니어": 1, "engineer": 1, "출시": 2, "launch": 2, "jira": 3, "고쳐": 4, "fix": 4,
            "thanks": 4}
_EXAMPLES = {"feedback": ["always do it this way"], "user": ["I am an engineer"], "project": ["we launch in May"],
             "reference": ["the tickets are in jira"], "negative": ["fix the button", "thanks a lot"]}


class FakeEmbedder:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, texts: list[str]):
        self.seen += texts
        rows = []
        for text in texts:
            vector = np.zeros(6)
            vector[5] = 1.0
            for word, axis in _MARKERS.items():
                if word in text.lower():
                    vector[axis] += 2.0
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


@pytest.fixture
def fake(monkeypatch):
    """The signal switched on, scoring with the fake embedder; returns it (what it was asked to embed)."""
    embed = FakeEmbedder()
    scorer = dense.Scorer(embed, _EXAMPLES)
    embed.seen.clear()  # the examples' own embedding is not what the tests look at
    monkeypatch.setattr(dense, "wanted", lambda: True)
    monkeypatch.setattr(dense, "shared_scorer", lambda: scorer)
    return embed


def _prompt(text: str, i: int = 0) -> Message:
    return Message("user", [{"type": "text", "text": text}], uuid=f"m{i}", timestamp="2026-03-02T09:00:00Z")


def test_a_sentence_in_a_language_the_rules_do_not_read_is_saved_with_the_nearest_type(fake):
    drafts = detect([_prompt("커밋하기 전에 항상 린터를 실행해 주세요.")])[0]
    assert [(d.type, d.kind, d.rule, d.said_in) for d in drafts] == [("feedback", "dense", "커밋하기 전에 항상 린터를 실행해 주세요", "m0")]


def test_a_sentence_nearest_the_negatives_or_near_nothing_is_not_saved(fake):
    messages = [_prompt("이 버튼을 지금 고쳐 주세요, 부탁합니다."), _prompt("오늘은 날씨가 정말 좋네요 그렇죠.", 1)]
    assert detect(messages)[0] == []
    assert len(fake.seen) == 2  # both were scored: the score, not a filter, kept them out


def test_only_the_users_own_prose_is_scored(fake):
    messages = [
        Message("assistant", [{"type": "text", "text": "I will always run the linter before committing."}], uuid="a1"),
        Message("user", [{"type": "tool_result", "tool_use_id": "t1",
                          "content": "always: the linter ran on 12 files without findings"}], uuid="t1"),
        _prompt("커밋하기 전에 항상 린터를 실행해 주세요. Here is the log:\n\n    always-on: true\n    level: debug\n"
                "    launch: 3\n", 2),
    ]
    detect(messages)
    assert fake.seen == ["커밋하기 전에 항상 린터를 실행해 주세요.", "Here is the log:"]


def test_questions_and_short_words_are_not_scored(fake):
    detect([_prompt("항상 린터를 실행해야 하나요?"), _prompt("항상 좋아요.", 1)])
    assert fake.seen == []


def test_a_sentence_the_rules_already_saved_is_not_saved_twice(fake):
    drafts = detect([_prompt("Always use pnpm, never npm, in this repository.")])[0]
    assert len(drafts) == 1 and drafts[0].kind != "dense"


def test_a_forget_said_later_takes_a_scored_sentence_back(fake):
    messages = [_prompt("We always launch on the first Monday of the month."), _prompt("Forget the first Monday rule.", 1)]
    assert [d for d in detect(messages)[0] if d.kind == "dense"] == []


def test_the_window_scores_at_most_its_limit():
    embed = FakeEmbedder()
    window = dense.Window(dense.Scorer(embed, _EXAMPLES), limit=2)
    embed.seen.clear()
    window.add(["항상 린터를 실행해 주세요 부탁해요.", "항상 테스트를 실행해 주세요 부탁해요.", "항상 포맷터를 실행해 주세요 부탁해요."],
               [], "m0")
    assert len(window.drafts()) == 2 and window.skipped == 1 and len(embed.seen) == 2


def test_off_unless_switched_on_and_nothing_loads(monkeypatch):
    monkeypatch.delenv(C.OFFLINE_DENSE_ENV, raising=False)
    monkeypatch.setenv(C.DENSE_DISABLE_ENV, "1")
    monkeypatch.setattr(dense, "shared_scorer", lambda: pytest.fail("the model was loaded"))
    assert dense.wanted() is C.OFFLINE_DENSE_DEFAULT is False
    assert detect([_prompt("커밋하기 전에 항상 린터를 실행해 주세요.")])[0] == []


@pytest.mark.parametrize(("offline_dense", "dense_model", "on"), [("1", "1", True), ("0", "1", False), ("1", "0", False)])
def test_the_switches(monkeypatch, offline_dense, dense_model, on):
    monkeypatch.setenv(C.OFFLINE_DENSE_ENV, offline_dense)
    monkeypatch.setenv(C.DENSE_DISABLE_ENV, dense_model)  # MEMDIR_DENSE=0 turns every use of the model off
    assert dense.wanted() is on


def test_the_examples_file_has_every_label(tmp_path):
    examples = dense.load_examples()
    assert set(examples) == {*dense.TYPES, dense.NEGATIVE} and all(len(v) >= 10 for v in examples.values())
    bad = tmp_path / "examples.yaml"
    bad.write_text("user: [I am an engineer]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=str(bad)):
        dense.load_examples(bad)


@pytest.mark.dense(opt_in=True)  # ~3 s: the examples are embedded once per process; .ci/run runs it
def test_the_real_model_saves_a_korean_rule_but_not_a_question_or_a_one_off(monkeypatch):
    monkeypatch.setenv(C.OFFLINE_DENSE_ENV, "1")
    messages = [_prompt("커밋하기 전에 항상 린터를 실행해 주세요."), _prompt("항상 린터를 실행해야 하나요?", 1),
                _prompt("지금은 이 파일만 고쳐 주세요.", 2)]
    drafts = detect(messages)[0]
    assert [(d.type, d.rule, d.said_in) for d in drafts] == [("feedback", "커밋하기 전에 항상 린터를 실행해 주세요", "m0")]


def test_the_language_note_does_not_say_nothing_was_read_when_the_signal_scored_it(fake, tmp_path):
    outcome = apply(MemoryStore(tmp_path / "memory"), [_prompt("커밋하기 전에 항상 린터를 실행해 주세요.")],
                    today=date(2026, 3, 2))
    assert len(outcome.saved) == 1
    assert outcome.notes == ["1 of the user's sentences are in Korean: the offline rules do not read those; the dense "
                             "model scored them"]
