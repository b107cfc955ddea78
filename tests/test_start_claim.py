"""memdir's session-start text reaches the model once when two SessionStart hooks run for one start (issue 21):
memdir registered with different commands in the user's and the project's settings runs both at once."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.entry.hooks import main as hook_main

INDEX_LINE = "- [Deploys](project_deploys.md) — deploys go out on Tuesdays only, after the freeze check"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / C.INDEX_NAME).write_text(INDEX_LINE + "\n", encoding="utf-8")
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv(C.DISABLE_ENV, "1")  # Claude Code's own memory off: memdir gives MEMORY.md itself
    return memory, tmp_path


def _payload(cwd, session: str = "s1", source: str = "startup") -> str:
    return json.dumps({"session_id": session, "transcript_path": None, "cwd": str(cwd),
                       "hook_event_name": "SessionStart", "source": source})


def _start(cwd, *flags: str, session: str = "s1", source: str = "startup") -> str:
    out = io.StringIO()
    assert hook_main(["session-start", *flags], stdin=io.StringIO(_payload(cwd, session, source)), stdout=out) == 0
    text = out.getvalue()
    return json.loads(text)["hookSpecificOutput"]["additionalContext"] if text.strip() else ""


def _twin_hooks(cwd, tmp_path) -> tuple[list[subprocess.Popen], list[tuple[str, str]]]:
    """Two SessionStart hook processes for one session at once, as Claude Code runs a hook registered twice."""
    payload = tmp_path / "payload.json"
    payload.write_text(_payload(cwd), encoding="utf-8")
    with payload.open("rb") as first, payload.open("rb") as second:
        hooks = [subprocess.Popen([sys.executable, "-m", "memdir.entry.main", "hook", "session-start"], stdin=stdin,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
                 for stdin in (first, second)]
        return hooks, [hook.communicate(timeout=60) for hook in hooks]


def test_two_hooks_at_once_give_the_session_start_once(folder, tmp_path):
    memory, cwd = folder
    hooks, outputs = _twin_hooks(cwd, tmp_path)
    assert all(hook.returncode == 0 and not err for hook, (_, err) in zip(hooks, outputs, strict=True)), outputs
    contexts = [json.loads(out)["hookSpecificOutput"]["additionalContext"] for out, _ in outputs if out.strip()]
    assert len(contexts) == 1 and contexts[0].count(INDEX_LINE) == 1 and str(memory) in contexts[0], outputs


def test_a_later_start_of_the_session_is_given_again(folder):
    memory, cwd = folder
    first = _start(cwd)
    assert INDEX_LINE in first and "# Memory" in first
    assert _start(cwd) == ""  # its twin, a moment later: nothing the model has not read
    assert _start(cwd, source="compact") == first  # the compacted context no longer holds it
    assert _start(cwd, session="s2") == first  # another session


def test_a_twin_registered_without_no_index_adds_only_the_index(folder):
    memory, cwd = folder
    first = _start(cwd, "--no-index")
    assert "# Memory" in first and INDEX_LINE not in first
    second = _start(cwd)
    assert INDEX_LINE in second and "# Memory" not in second and "Kinds of memory" not in second
    assert _start(cwd) == "" and _start(cwd, "--no-index") == ""  # a third registration: all said


def test_a_twin_past_the_window_is_a_new_start(folder, monkeypatch):
    memory, cwd = folder
    first = _start(cwd, source="resume")
    import time

    later = time.time() + 60  # past C.SESSION_START_TWIN_SECONDS
    monkeypatch.setattr(time, "time", lambda: later)
    assert _start(cwd, source="resume") == first  # resumed again after quitting: a new context to fill


def test_a_folder_where_the_claim_cannot_be_written_still_gets_its_start(folder):
    memory, cwd = folder
    (memory / C.STATE_DIRNAME).mkdir()
    (memory / C.STATE_DIRNAME / "sessions").symlink_to(cwd)  # planted: nothing is written through it
    first = _start(cwd)
    assert INDEX_LINE in first and "# Memory" in first
    assert not (cwd / "s1").exists()


@pytest.fixture
def no_folder_yet(tmp_path, monkeypatch, isolated_home):
    memory = tmp_path / "memory"  # Claude Code makes it with the first memory
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv(C.DISABLE_ENV, "1")
    return memory, tmp_path


def test_twins_before_the_memory_folder_exists_give_the_start_once(no_folder_yet):
    """The claim lived only in the folder's state: with no folder yet, both twins printed the whole start."""
    memory, cwd = no_folder_yet
    first = _start(cwd)
    assert "# Memory" in first and str(memory) in first
    assert _start(cwd) == ""  # its twin
    assert _start(cwd, source="compact") == first and _start(cwd, session="s2") == first
    assert not memory.exists()  # the claim made no memory folder


def test_two_hooks_at_once_before_the_memory_folder_exists(no_folder_yet, tmp_path):
    memory, cwd = no_folder_yet
    hooks, outputs = _twin_hooks(cwd, tmp_path)
    contexts = [json.loads(out)["hookSpecificOutput"]["additionalContext"] for out, _ in outputs if out.strip()]
    assert len(contexts) == 1 and "# Memory" in contexts[0], outputs
    assert not memory.exists()


def test_claims_made_before_a_memory_folder_exists_do_not_pile_up(tmp_path, monkeypatch):
    """Before its memory folder exists a session's claim lives in memdir's own folder, one folder per session ever
    started (500 sessions: 505 folders, 1,011 files, never removed). Past twice START_CLAIMS_KEPT the oldest go;
    the newest session's claim stays, so its twin still says nothing."""
    from memdir.entry.start_claim import ALL, NOTHING, claim_root, start_part

    monkeypatch.setattr(C, "START_CLAIMS_KEPT", 3, raising=False)  # (raising: so it runs on the old code)
    no_folder_yet = str(tmp_path / "memory")
    for n in range(20):
        assert start_part(no_folder_yet, f"session-{n}", "startup", True) == ALL

    sessions = [p.name for p in (Path(claim_root(no_folder_yet)) / C.STATE_DIRNAME / "sessions").iterdir()]
    assert 3 <= len(sessions) <= 6 and "session-19" in sessions
    assert start_part(no_folder_yet, "session-19", "startup", True) == NOTHING
