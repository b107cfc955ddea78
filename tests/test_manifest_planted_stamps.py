"""A memory's own `modified` stamp is shown in the extraction request's list of existing memories (manifest.own_times).
The stamp is whatever the file says: one planted there (a shared or synced folder, a hand edit) must never break the
request, and is shown only as a time memdir formats itself, or not at all (the file's time then)."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime

import pytest

from memdir.config import Settings
from memdir.stages.extractor.agent import build_request

FILE_TIME = datetime(2026, 11, 27, 12, 0, tzinfo=UTC).timestamp()


def _listed(memory, stamp_lines: str) -> str:
    memory.mkdir()
    (memory / "user_planted.md").write_text("---\nname: Planted\ndescription: Its stamp is planted\ntype: user\n"
                                            f"{stamp_lines}---\nBody.\n", encoding="utf-8")
    os.utime(memory / "user_planted.md", (FILE_TIME, FILE_TIME))
    request = build_request([], memory, Settings(engine="llm"), date(2026, 3, 14))
    text = request["messages"][0]["content"][0]["text"]
    return next(line for line in text.splitlines() if "user_planted.md" in line)


@pytest.mark.parametrize("stamp_lines", [
    "modified: 9999-12-31T23:59:59-01:00\n",  # past year 9999 once in UTC
    "modified: 0001-01-01T00:00:00+01:00\n",  # before year 1 once in UTC
    "metadata:\n  modified: 9999-12-31T23:59:59-05:00\n",
])
def test_a_stamp_out_of_the_calendar_once_in_utc_keeps_the_files_time(tmp_path, stamp_lines):
    assert "(2026-11-27T12:00:00Z)" in _listed(tmp_path / "memory", stamp_lines)


def test_a_stamp_in_year_one_is_shown_with_four_digits_like_every_other(tmp_path):
    assert "(0001-01-01T00:00:00Z)" in _listed(tmp_path / "memory", "modified: 0001-01-01T00:00:00Z\n")


def _folder(stamps: dict[str, object]):
    from memdir.model import Memory
    from memdir.stages.extractor.consolidate import Folder

    memories = {rel: Memory(name=rel, description="d", type="user", body="Body.", extra={"modified": stamp})
                for rel, stamp in stamps.items()}
    return Folder(memories, {rel: "" for rel in stamps}, {"old.md": 1.0e9, "new.md": 2.0e9}, "")


@pytest.mark.parametrize("planted", ["zzzz", "9" * 10000, "[2099-01-01, x]", "9999-12-31T23:59:59-01:00"])
def test_consolidation_never_takes_a_planted_stamp_that_is_no_time_for_the_newer(planted):
    """Consolidation keeps the newer of two memories by their `modified` stamps first: compared as raw text, any
    stamp starting past '2' ('zzzz', '9999...') won over a real one, and a stamp out of the calendar broke nothing
    only because it was never parsed. No time is no evidence: the next evidence (here the files' times) decides."""
    from memdir.stages.extractor.consolidate import newer_of

    assert newer_of(_folder({"old.md": planted, "new.md": "2026-03-01T10:00:00Z"}), "old.md", "new.md") == "new.md"


def test_consolidation_compares_stamps_as_times_not_as_text():
    """10:00 at +05:00 is 05:00 UTC, earlier than 06:00 UTC, though '10' sorts after '06' as text."""
    from memdir.stages.extractor.consolidate import newer_of

    folder = _folder({"old.md": "2026-03-01T10:00:00+05:00", "new.md": "2026-03-01T06:00:00Z"})
    assert newer_of(folder, "old.md", "new.md") == "new.md"
