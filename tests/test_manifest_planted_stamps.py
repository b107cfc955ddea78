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
