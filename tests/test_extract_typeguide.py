"""The extractor's type choice and the scope of a rule, as the rendered request states them.

A model answering the requests of two blind real sets (fresh4, fresh5) through the relay saved the right
content under another type in most of its strict misses ("awswitch", the user's own command, as reference; a
headless dev box as project; a docs link turned into a rule), merged facts of different types into one file,
and stretched instructions given for one task into standing rules. These tests pin the decision rules the
request now gives for each, on the request as sent.
"""

from __future__ import annotations

from datetime import date

import pytest

from memdir.config import Settings
from memdir.stages.extractor.agent import build_request
from memdir.transcript import Message

SAID = [Message("user", [{"type": "text", "text": "Switch with my awswitch qa2 first. Ne modifie pas main."}])]


def _system(tmp_path, mode: str = "topics") -> str:
    log = tmp_path / "memory" / "logs" / "2026" / "03" / "2026-03-02.md"
    request = build_request(SAID, tmp_path / "memory", Settings(engine="llm"), date(2026, 3, 2), mode=mode,
                            daily_log=log if mode == "daily-log" else None)
    return request["system"][0]["text"]


def _types_section(system: str) -> str:
    return system.split("## What to save: four types", 1)[1].split("## What never to save", 1)[0]


@pytest.mark.parametrize("mode", ["topics", "daily-log"])
def test_the_user_type_covers_their_own_machine_and_commands(tmp_path, mode):
    """"the user switches AWS accounts with their own `awswitch`" went to reference and "my dev box is a
    headless server with a GPU" to project; both are about the user (annotated so, and Claude Code's user type
    holds the user's preferences). Daily-log entries carry a type too, so the rule is in both modes."""
    user_line = next(line for line in _types_section(_system(tmp_path, mode)).splitlines() if line.startswith("- user:"))
    assert "their own setup (machine, shell, editor, apps, commands and aliases they made)" in user_line


@pytest.mark.parametrize("mode", ["topics", "daily-log"])
def test_when_two_types_fit_a_place_to_look_is_reference_and_a_rule_is_feedback(tmp_path, mode):
    """A docs link given with "read it" was saved as a rule (feedback), the user's own dotfiles and skills
    folders as user or feedback; both were annotated reference. The tie-break names each case once, after
    the four types it chooses between."""
    section = _types_section(_system(tmp_path, mode))
    rule = next(line for line in section.splitlines() if line.startswith("When two types fit:"))
    assert "a place to look (a link, a path outside the project, a host, an account) is reference" in rule
    assert "even the user's own folder or a link given with how to use it" in rule
    assert "the user's own machine and tools are user; a rule for the work is feedback; the rest is project" in rule
    assert section.index("- reference:") < section.index(rule)


def test_a_place_to_look_never_contradicts_the_rule_against_saving_file_paths(tmp_path):
    """"file paths ... can be read from the code" stays in what never to save: the reference rule speaks of
    paths outside the project only, so a model cannot read it as leave to save the repository's files."""
    system = _system(tmp_path)
    assert "file paths or project structure: they can be read from the code" in system
    assert "a path outside the project" in _types_section(system)
    assert "a path," not in _types_section(system)


def test_an_instruction_for_the_current_task_is_not_a_standing_rule(tmp_path):
    """"Ne modifie pas main. Travaille uniquement sur la branche chore/claude-smoke-test" (said in one task's
    brief) became "never modify main"; a one-off Danish wording fix became "review widgets must be Danish".
    A correction of how to work still counts when said once (recall: "verify the change after you make it")."""
    feedback = next(line for line in _types_section(_system(tmp_path)).splitlines() if line.startswith("- feedback:"))
    assert "A correction of how to work holds from then on, even said once" in feedback
    assert ("an instruction for the current task only (its branch, its files, one fix) is task state unless the user "
            "says it holds beyond it") in feedback


def test_facts_said_together_are_separate_memories_each_with_its_own_type(tmp_path):
    """One file held the dotfiles folder and the user's shell (both items missed), another the skills folder
    and its naming rule, another the SSM path and the `awswitch` command: one type for two things."""
    system = _system(tmp_path)
    assert "Keep each memory to one thing: things said together" in system
    assert "are separate memories, each with its own type" in system


def test_a_lasting_fact_found_while_debugging_is_still_project(tmp_path):
    """"my exif recuperation does not work on iphones" was dropped as a debugging story; that iPhone photos
    arrive without EXIF is a fact about the outside world the code does not show."""
    debugging = next(line for line in _system(tmp_path).splitlines() if line.startswith("- Debugging recipes"))
    assert "the fix is in the code" in debugging
    assert "A lasting fact a bug revealed outside the code (a device, a service) is project." in debugging
