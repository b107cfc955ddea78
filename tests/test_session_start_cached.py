"""Session start renders its instructions from a cached skeleton (issue 26): the same text as
jinja2 renders, without importing jinja2 once the skeleton is cached."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memdir import constants as C, index as index_text, inert
from memdir.entry.hooks import HookPayload, fit_index, session_start_output
from memdir.prompts import render
from memdir.stages.recall.inject import units


def _reference(memory, include_index: bool, native: bool) -> str:
    """What session start printed when it rendered with jinja2 every time."""
    index = ""
    if include_index:
        raw = (memory / C.INDEX_NAME).read_text(encoding="utf-8") if (memory / C.INDEX_NAME).exists() else ""
        index = inert.block(index_text.load_for_context(raw)) if raw else ""
        if index:
            frame = render("session_instructions.j2", memory_dir=str(memory), include_index=True, index="", native=False)
            index = fit_index(index, C.HOOK_OUTPUT_BUDGET - units(frame), str(memory / C.INDEX_NAME))
    return render("session_instructions.j2", memory_dir=str(memory), include_index=include_index, index=index,
                  native=native).strip("\n")


@pytest.mark.parametrize("lines", [0, 3, 400])  # none, a few, over Claude Code's 200-line cap (truncation note)
@pytest.mark.parametrize("native", [False, True])
def test_same_text_as_jinja2_and_cached(tmp_path, monkeypatch, lines, native):
    memory = tmp_path / "memory"
    memory.mkdir()
    if lines:
        (memory / C.INDEX_NAME).write_text("".join(f"- [Note {i}](note_{i}.md) — a rule about thing {i}\n"
                                                   for i in range(lines)), encoding="utf-8")
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "0" if native else "1")
    for session in ("s1", "s2"):  # the first renders and caches the skeleton, the second fills it in
        payload = HookPayload(session_id=session, transcript_path=None, cwd=str(tmp_path),
                              hook_event_name="SessionStart")
        context = json.loads(session_start_output(payload))["hookSpecificOutput"]["additionalContext"]
        assert context == _reference(memory, include_index=not native, native=native)


def test_a_cached_session_start_never_imports_jinja2(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / C.INDEX_NAME).write_text("".join(f"- [Note {i}](note_{i}.md) — rule {i}\n" for i in range(300)),
                                       encoding="utf-8")
    env = {**os.environ, "MEMDIR_PATH": str(memory), "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    payloads = [json.dumps({"session_id": session, "cwd": str(tmp_path), "hook_event_name": "SessionStart"})
                for session in ("s1", "s2")]  # two sessions: one session's second start at once would be a twin
    probe = ("import sys; sys.argv = ['memdir', 'hook', 'session-start']\nfrom memdir.entry.main import main\n"
             "main(); print('jinja2' in sys.modules, file=sys.stderr)")
    runs = [subprocess.run([sys.executable, "-c", probe], input=payload, capture_output=True, text=True, env=env,
                           timeout=60) for payload in payloads]
    assert [r.stderr.strip().splitlines()[-1] for r in runs] == ["True", "False"]
    assert runs[0].stdout == runs[1].stdout
    assert "Note 0" in runs[1].stdout and "Note 299" not in runs[1].stdout  # the index, cut at Claude Code's cap
