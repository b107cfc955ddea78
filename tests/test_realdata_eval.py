"""The realdata suite on the offline engine: its targets hold, and the grader is a real grader."""

from __future__ import annotations

from evals.realdata import Expected, grade_session, SessionSpec, run_suite


def test_grader_matches_type_and_whole_words():
    item = Expected(what="x", type="feedback", terms=[["act", "all pushes"], ["ci"]])
    assert item.matches({"type": "feedback", "text": "Test CI locally with `act`"})
    assert not item.matches({"type": "feedback", "text": "CI: I actually like react"})  # no whole word "act"
    assert not item.matches({"type": "project", "text": "Test CI locally with act"})  # wrong type
    graded = grade_session(SessionSpec(expect=[item]), [{"type": "feedback", "text": "Run CI on all pushes", "file": "a"},
                                                        {"type": "user", "text": "likes tea", "file": "b"}])
    assert graded["found"] == 1 and [m["file"] for m in graded["unmatched"]] == ["b"]


def test_offline_engine_meets_its_realdata_targets(realdata):
    report = run_suite(realdata, engine="offline")
    tuning, held_out = report["tuning"], report["held_out"]
    assert tuning["recall"] >= 0.5 and tuning["precision"] >= 0.7, (tuning["missed"], tuning["unmatched"])
    for part in (tuning, held_out):
        assert part["nothing_saved"] == 0, part["unmatched"]
        assert part["forbidden"] == []
    assert report["no_loss"]["lost_bytes"] == 0 and report["no_loss"]["lost_files"] == []
    assert len(tuning["sessions"]) + len(held_out["sessions"]) == 29
