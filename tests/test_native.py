"""Living beside Claude Code's native auto memory (SPEC §9): the two switches and other writers."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memdir.native import changed_by_others, coexistence, other_writer_in_window
from memdir.paths import memdir_enabled, memory_enabled
from memdir.transcript import Message


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.parametrize(
    "env, config, on",
    [
        ({}, None, True),
        ({"MEMDIR_DISABLE": "1"}, None, False),
        ({"MEMDIR_DISABLE": "0"}, {"enabled": False}, True),  # a defined falsy value forces memdir on
        ({"MEMDIR_DISABLE": ""}, {"enabled": False}, False),  # an empty one is unset, as Claude Code reads its own
        ({}, {"enabled": False}, False),
        ({}, {"enabled": True}, True),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, None, True),  # Claude Code's switch is not memdir's
    ],
)
def test_memdirs_own_switch(env, config, on, tmp_path, isolated_home):
    memory = tmp_path / "memory"
    if config is not None:
        (memory / ".memdir").mkdir(parents=True)
        (memory / ".memdir" / "config.json").write_text(json.dumps(config))
    assert memdir_enabled(memory, env={"HOME": str(isolated_home), **env}).enabled is on


def test_user_wide_config_switches_memdir_off(tmp_path, isolated_home):
    (isolated_home / ".claude" / "memdir").mkdir(parents=True)
    (isolated_home / ".claude" / "memdir" / "config.json").write_text('{"enabled": false}')
    result = memdir_enabled(tmp_path / "memory", env={"HOME": str(isolated_home)})
    assert result.enabled is False and "config.json" in result.reason


def test_both_combinations_are_described_plainly(tmp_path, isolated_home):
    both_on = coexistence(tmp_path, tmp_path / "memory", env={"HOME": str(isolated_home)})
    assert both_on.native and both_on.memdir and "does not repeat" in both_on.lines()[0]
    native_off = coexistence(tmp_path, tmp_path / "memory",
                             env={"HOME": str(isolated_home), "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert not native_off.native and native_off.memdir and "memdir does all of it" in native_off.lines()[0]
    assert memory_enabled(tmp_path, env={"HOME": str(isolated_home), "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}).enabled is False


def _window(start: float, end: float, cwd: Path) -> list[Message]:
    return [Message(role="user", content=[{"type": "text", "text": "use pnpm"}], uuid="u1", timestamp=_stamp(start), cwd=str(cwd)),
            Message(role="assistant", content=[{"type": "text", "text": "ok"}], uuid="a1", timestamp=_stamp(end), cwd=str(cwd))]


def _touch(path: Path, when: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nname: x\ndescription: x\nmetadata:\n  type: user\n---\nx\n")
    os.utime(path, (when, when))


def test_a_window_another_writer_changed_is_skipped_when_native_memory_is_on(tmp_path):
    memory, project = tmp_path / "memory", tmp_path / "project"
    project.mkdir()
    now = time.time()
    _touch(memory / "user_before.md", now - 3600)  # written long before the window: not a reason to skip
    messages = _window(now - 60, now - 30, project)
    assert other_writer_in_window(memory, messages, project) is None
    _touch(memory / "feedback_native.md", now - 20)  # e.g. Claude Code's own extractor, after the turn
    why = other_writer_in_window(memory, messages, project)
    assert why and "feedback_native.md" in why and "user_before.md" not in why


def test_memdirs_own_writes_in_the_window_do_not_count(tmp_path):
    memory, project = tmp_path / "memory", tmp_path / "project"
    project.mkdir()
    now = time.time()
    _touch(memory / "feedback_ours.md", now - 20)
    (memory / ".memdir").mkdir()
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now - 20)), "saved": ["feedback_ours.md"]}
    (memory / ".memdir" / "runs.jsonl").write_text(json.dumps(entry) + "\n")
    assert other_writer_in_window(memory, _window(now - 60, now - 30, project), project) is None


def test_back_filling_an_old_transcript_ignores_later_edits(tmp_path):
    memory, project = tmp_path / "memory", tmp_path / "project"
    project.mkdir()
    now = time.time()
    _touch(memory / "feedback_edited_today.md", now)
    old = _window(now - 30 * 86400, now - 30 * 86400 + 60, project)  # a month-old session
    assert other_writer_in_window(memory, old, project) is None
    assert changed_by_others(memory, now - 30 * 86400) == ["feedback_edited_today.md"]


def test_with_native_memory_off_only_the_main_agent_check_applies(tmp_path, monkeypatch):
    memory, project = tmp_path / "memory", tmp_path / "project"
    project.mkdir()
    now = time.time()
    _touch(memory / "feedback_hand_edit.md", now - 20)
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    assert other_writer_in_window(memory, _window(now - 60, now - 30, project), project) is None


def test_extraction_skips_the_window_and_advances_the_cursor(tmp_path):
    from memdir.stages.extractor import state
    from memdir.stages.extractor.run import extract_transcript

    memory, project = tmp_path / "memory", tmp_path / "project"
    project.mkdir()
    now = time.time()
    lines = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": _stamp(now - 60), "cwd": str(project),
              "message": {"role": "user", "content": "Don't use npm here, use pnpm instead of npm because of the lockfile."}},
             {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": _stamp(now - 50), "cwd": str(project),
              "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Will do."}]}}]
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    _touch(memory / "feedback_pnpm.md", now - 40)  # Claude Code's own extractor saved it after the turn
    result = extract_transcript(transcript, memory, session_id="s1", engine="offline")
    assert result.status == "skipped" and "another writer" in result.reason and "feedback_pnpm.md" in result.reason
    assert sorted(p.name for p in memory.glob("*.md")) == ["feedback_pnpm.md"]  # nothing saved twice
    assert state.load_cursor(memory, "s1")["uuid"] == "a1"
