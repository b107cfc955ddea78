"""CI replays what a model answered on real sessions (tests/cassettes/realdata), with no model and no network.

The cassette holds the requests memdir sent for two sessions of ../shared/realdata/sessions2 and the answers
given through the relay by a model acting by hand: `en-flywheel-askuser` (a founder describing his project)
and `ko-push-nothing` (Korean chatter and a one-off push: the model is asked, and saves nothing). Replaying
checks both halves: memdir still sends exactly what was recorded, and the recorded answers still make the same
memories. When what memdir sends changes on purpose (a prompt, an excerpt, a tool), re-record with the one
command in docs/evals-and-benchmarks.md#cassettes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.prompts import TEMPLATES_DIR

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "realdata"


@pytest.fixture
def as_the_cli_runs(monkeypatch):
    """The cassette was recorded by `memdir eval run` in a plain environment: the default memory form."""
    monkeypatch.delenv("MEMDIR_MEMORY_FORM", raising=False)


def _replay(cli, out: Path, *extra: str) -> tuple[int, str]:
    code, _, err = cli("eval", "run", "--suite", "realdata", "--replay", str(CASSETTE), "--out", str(out), *extra)
    return code, err


def test_the_recorded_answers_replay_to_the_same_memories(realdata, cli, tmp_path, as_the_cli_runs):
    code, err = _replay(cli, tmp_path)
    assert code == 0, err
    report = json.loads(next(tmp_path.glob("*/report.json")).read_text(encoding="utf-8"))
    sessions = {s["session"]: s for part in ("tuning", "held_out") for s in report[part]["per_session"]}
    assert sorted(sessions) == ["sessions2/en-flywheel-askuser", "sessions2/ko-push-nothing"]  # the cassette's own list
    founder = sessions["sessions2/en-flywheel-askuser"]
    assert (founder["status"], founder["model_calls"]) == ("saved", 1)
    assert sorted((m["type"], m["file"]) for m in founder["memories"]) == [
        ("project", "project_flywheel_tracker.md"), ("user", "user_solo_saas_founder.md")]
    assert (founder["found"], founder["expected"]) == (3, 3)
    assert sessions["sessions2/ko-push-nothing"]["memories"] == []


def test_a_changed_prompt_fails_the_replay_with_a_diff_of_what_the_model_is_sent(realdata, cli, tmp_path,
                                                                                   as_the_cli_runs):
    variant = tmp_path / "variant"
    variant.mkdir()
    original = (Path(TEMPLATES_DIR) / "extract_system.j2").read_text(encoding="utf-8")
    (variant / "extract_system.j2").write_text("A CHANGED LINE OF THE SYSTEM PROMPT.\n" + original, encoding="utf-8")
    code, err = _replay(cli, tmp_path / "runs", "--variant", str(variant))
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("memdir eval:")]
    assert len(lines) == 1 and "sessions2/en-flywheel-askuser: no recorded answer" in lines[0], err
    misses = next((tmp_path / "runs").glob("*/replay-misses"))
    diff = (misses / "0001.diff").read_text(encoding="utf-8")
    assert str(misses / "0001.diff") in lines[0]
    assert "+A CHANGED LINE OF THE SYSTEM PROMPT." in diff.splitlines()
    assert [line for line in diff.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))] \
        == ["+A CHANGED LINE OF THE SYSTEM PROMPT."]  # the diff shows the change and nothing else
    assert json.loads((misses / "0001.request.json").read_text(encoding="utf-8"))["system"][0]["text"].startswith(
        "A CHANGED LINE")
    assert not list((tmp_path / "runs").glob("*/summary.md"))  # a run that missed gives no figures
