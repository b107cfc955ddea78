"""CI replays what a model answered when asked to consolidate the real 54-memory folder
(tests/cassettes/consolidate, recorded through the relay with the answer written by hand).

Replaying checks both halves: memdir still sends exactly the recorded request (the same related groups, prompt
and schema), and the recorded answer still makes the same plan on a copy of the folder, losing no byte. When what
memdir sends changes on purpose, re-record with the command in docs/consolidate.md.
"""

from __future__ import annotations

import json
from pathlib import Path

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "consolidate"


def test_the_recorded_judgement_replays_to_the_same_plan_on_a_copy_of_the_real_folder(realdata, cli, tmp_path):
    folder = realdata / "memory-folders" / "application-pipeline"
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    code, out, err = cli("eval", "consolidate", str(folder), "--replay", str(CASSETTE), "--out", str(tmp_path))
    assert code == 0, err
    report = json.loads(next(tmp_path.glob("*/report.json")).read_text(encoding="utf-8"))
    assert [(m["keep"], m["drop"]) for m in report["merges"]] == [
        ("feedback_resume_cover_letter_quality_2026-03-26.md", ["feedback_cover_letter_quality.md"]),
        ("feedback_never_defer_to_human.md", ["feedback_never_defer_commands.md"])]
    assert (report["memories_before"], report["memories_after"], report["supersedes"], report["lost"]) == (54, 52, [], [])
    assert report["listed"] == []  # the model judged every related pair
    assert "memories 54 -> 52; merges 2, supersedes 0" in out
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before  # the real folder is only read
