"""What the offline rules find in the user's words: a Draft, a memory they want saved, and a Forget, a request to
forget one. Found by extractor/offline.py (with offline_english.py and offline_multilingual.py), filed by
extractor/filing.py, and made from the daily log by extractor/dream.py.
"""

from __future__ import annotations

from datetime import date

from memdir.record import Record, field


class Draft(Record):
    """A memory the rules want to save; `correction` drafts may supersede an older memory."""

    type: str
    rule: str
    why: str | None = None
    how: str | None = None
    kind: str = field(kw_only=True)  # which rule matched: "correction", "preference", "remember"...
    correction: bool = False
    said_on: date | None = None
    said_in: str | None = None  # the uuid of the message whose words it is (provenance)
    said_as: str = "prompt"  # that message's kind: prompt, queued, answer, rejection


class Forget(Record):
    phrase: str

