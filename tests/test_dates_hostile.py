"""memdir.dates on years past what datetime.date holds: named, never raised (the offline recall of the
prompt "what did we ship in December 9999" raised ValueError out of recall.api.recall)."""

from __future__ import annotations

from datetime import date

from memdir.dates import days_mentioned

TODAY = date(2026, 11, 26)


def test_a_month_of_a_year_date_cannot_hold_names_no_day():
    assert days_mentioned("what did we ship in December 9999", TODAY) == []
    assert days_mentioned("the May 0000 backlog", TODAY) == []
    # The same forms within range still name their month, and a good date beside a bad one is kept.
    assert days_mentioned("Dec 9999 or in November 9999", TODAY) == [(date(9999, 11, 1), date(9999, 11, 30))]
    assert days_mentioned("May 0000 and August 2025", TODAY) == [(date(2025, 8, 1), date(2025, 8, 31))]


def test_recall_answers_a_prompt_naming_such_a_month(store):
    from memdir.model import Memory
    from memdir.stages.recall.api import recall

    store.save(Memory(name="Ship log", description="what we shipped in December", type="project",
                      body="We shipped the exporter in December."), rel_path="project_ship.md")
    result = recall(store.root, "what did we ship in December 9999", engine="offline", record=False)
    assert [h.rel_path for h in result.selected] == ["project_ship.md"]
