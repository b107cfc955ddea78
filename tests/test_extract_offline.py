from __future__ import annotations

from datetime import date

import pytest

from memdir.model import Memory
from memdir.stages.extractor.dates import absolutize
from memdir.stages.extractor.offline import apply, detect
from memdir.store import MemoryStore
from memdir.transcript import Message

MONDAY = "2026-03-02T09:00:00Z"


def _msgs(*turns: tuple[str, str]) -> list[Message]:
    return [Message(role, [{"type": "text", "text": text}], uuid=f"m{i}", timestamp=MONDAY)
            for i, (role, text) in enumerate(turns)]


def _kinds(*texts: str) -> list[tuple[str, str]]:
    drafts, _ = detect(_msgs(*(("user", t) for t in texts)))
    return [(d.type, d.kind) for d in drafts]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Please remember that our staging DB is shared with QA.", ("project", "remember")),
        ("Remember that I review PRs only in the mornings.", ("user", "remember")),
        ("Don't add docstrings to private helpers.", ("feedback", "correction")),
        ("Stop summarising at the end of every reply.", ("feedback", "correction")),
        ("Use pnpm instead of npm here.", ("feedback", "correction")),
        ("I prefer small commits with one change each.", ("feedback", "preference")),
        ("Let's use Postgres because we need transactions.", ("project", "decision")),
        ("I'm a data scientist on the growth team.", ("user", "role")),
        ("I'm new to Kubernetes.", ("user", "expertise")),
        ("The release ships on Friday.", ("project", "deadline")),
        ("Latency is on the Grafana dashboard https://grafana.example.com/d/pay", ("reference", "pointer")),
    ],
)
def test_each_capture_kind(text, expected):
    assert expected in _kinds(text)


def test_confirmation_keeps_only_the_users_words():
    bare = detect(_msgs(("assistant", "Sure. I split the change into three small commits."),
                        ("user", "Yes, exactly like that.")))[0]
    said = detect(_msgs(("assistant", "Sure. I split the change into three small commits."),
                        ("user", "Yes, exactly like that: always split changes into small commits.")))[0]
    assert bare == []  # the assistant's text is never saved as what the user confirmed
    assert [(d.kind, d.rule) for d in said] == [("confirmation", "Always split changes into small commits")]


def test_tool_results_and_assistant_text_are_not_the_users_words():
    messages = [Message("user", [{"type": "tool_result", "tool_use_id": "t", "content": "remember that x is y"}]),
                Message("assistant", [{"type": "text", "text": "I prefer tabs."}])]
    assert detect(messages) == ([], [])


def test_relative_dates_become_absolute():
    text, found = absolutize("the freeze starts next Thursday", date(2026, 3, 2))
    assert text == "the freeze starts next Thursday (2026-03-05)" and found == [date(2026, 3, 5)]
    assert absolutize("due tomorrow", date(2026, 3, 2))[1] == [date(2026, 3, 3)]
    assert absolutize("ship in 2 weeks", date(2026, 3, 2))[1] == [date(2026, 3, 16)]
    assert absolutize("demo on March 20th", date(2026, 3, 2))[1] == [date(2026, 3, 20)]
    assert absolutize("launch on 5 January", date(2026, 12, 1))[1] == [date(2027, 1, 5)]
    assert absolutize("by 2026-04-01", date(2026, 3, 2))[0] == "by 2026-04-01"


def test_deadline_memory_has_absolute_date_and_why_how(tmp_path):
    store = MemoryStore(tmp_path / "m")
    outcome = apply(store, _msgs(("user", "The merge freeze for the mobile release starts next Thursday.")),
                    today=date(2026, 11, 22))
    (rel,) = outcome.saved
    text = (store.root / rel).read_text()
    assert "type: project" in text and "(2026-03-05)" in text
    assert "**Why:** the user said so on 2026-03-02" in text and "**How to apply:**" in text


def test_rationale_becomes_why(tmp_path):
    store = MemoryStore(tmp_path / "m")
    outcome = apply(store, _msgs(("user", "Don't mock the database in tests, because mocks hid a broken migration.")),
                    today=date(2026, 3, 2))
    text = (store.root / outcome.saved[0]).read_text()
    assert "**Why:** mocks hid a broken migration" in text


def test_correction_updates_the_existing_memory(tmp_path):
    store = MemoryStore(tmp_path / "m")
    old = store.save(Memory(name="Package manager", description="Use npm to install packages", type="feedback",
                            body="Use npm.\n\n**Why:** x\n**How to apply:** y"))
    outcome = apply(store, _msgs(("user", "No, don't use npm, use pnpm in this repo.")), today=date(2026, 3, 2))
    assert outcome.updated == [old.rel_path] and outcome.saved == []
    assert len(store.scan().headers) == 1
    text = old.path.read_text()
    assert "pnpm" in text and "name: Package manager" in text


def test_same_statement_twice_does_not_duplicate(tmp_path):
    store = MemoryStore(tmp_path / "m")
    for _ in range(2):
        apply(store, _msgs(("user", "I prefer small commits with one change each.")), today=date(2026, 3, 2))
    assert len(store.scan().headers) == 1


def test_forget_request_deletes_the_matching_memory(tmp_path):
    store = MemoryStore(tmp_path / "m")
    store.save(Memory(name="Staging", description="Staging database is shared with QA", type="project",
                      body="x\n\n**Why:** a\n**How to apply:** b"))
    store.save(Memory(name="Role", description="Tech lead", type="user"))
    outcome = apply(store, _msgs(("user", "Please forget that the staging database is shared with QA.")),
                    today=date(2026, 3, 2))
    assert outcome.deleted == ["project_staging.md"] and [h.rel_path for h in store.scan().headers] == ["user_role.md"]


def test_secret_in_transcript_is_not_saved(tmp_path):
    store = MemoryStore(tmp_path / "m")
    outcome = apply(store, _msgs(("user", "Remember that the deploy token is ghp_" + "a" * 36 + ".")),
                    today=date(2026, 3, 2))
    assert outcome.saved == [] and "GitHub token" in outcome.errors[0]


def test_user_memories_are_in_third_person(tmp_path):
    store = MemoryStore(tmp_path / "m")
    outcome = apply(store, _msgs(("user", "I'm a backend engineer and my focus is payments.")), today=date(2026, 3, 2))
    text = (store.root / outcome.saved[0]).read_text()
    assert "The user is a backend engineer and their focus is payments" in text


def test_code_structure_statements_are_not_saved():
    assert detect(_msgs(("user", "We use the repository pattern for all database access in this codebase.")))[0] == []
    assert detect(_msgs(("user", "Let's keep the handlers in src/api/handlers.py.")))[0] == []
    assert [d.kind for d in detect(_msgs(("user", "Let's use Postgres because we need transactions.")))[0]] == ["decision"]


def test_user_memories_drop_negative_judgements_and_requests():
    drafts, _ = detect(_msgs(("user", "I'm a data scientist and honestly terrible at CSS, please handle the styling.")))
    assert [d.rule for d in drafts if d.type == "user"] == ["The user is a data scientist"]


@pytest.mark.parametrize("authored", [True, False])
def test_a_rule_said_to_hold_now_updates_only_a_memory_the_extractor_wrote(tmp_path, authored):
    """"... now" updates an existing memory about the same subject in place only when memdir's extractor wrote
    it and nobody has edited it since; a person's memory is never rewritten by a rule: the new rule stands beside it."""
    store = MemoryStore(tmp_path / "m")
    old = store.save(Memory(name="Merge style", description="Merge style for feature branches", type="feedback",
                            body="Squash feature branches when merging.\n\n**Why:** x\n**How to apply:** y"),
                     authored=authored)
    before = old.path.read_bytes()
    outcome = apply(store, _msgs(("user", "I prefer rebase as the merge style for feature branches now.")),
                    today=date(2026, 3, 2))
    if authored:
        assert outcome.updated == [old.rel_path] and outcome.saved == []
        assert "rebase" in old.path.read_text()
    else:
        assert outcome.updated == [] and len(outcome.saved) == 1
        assert old.path.read_bytes() == before
