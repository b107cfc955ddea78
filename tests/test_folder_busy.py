"""A memory folder locked by another memdir process past the timeout never costs a window.

The write fails as a whole run (FolderBusy), so the session's cursor stays before those messages and the next run
reads them again: before, the offline engine took the timeout for one memory's refusal and advanced the cursor, and
the LLM engine's tool error let the run end as a success, so the user's words were read once and never saved.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from memdir.config import Settings
from memdir.errors import FolderBusy
from memdir.stages.extractor import state
from memdir.stages.extractor.run import extract_transcript
from memdir.store import MemoryStore
from tests import api_payloads as P

TODAY = date(2026, 3, 2)


def _transcript(tmp_path: Path) -> Path:
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z", "cwd": str(tmp_path),
         "message": {"role": "user", "content": "Remember that I'm the tech lead for payments."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:05Z",
         "message": {"id": "msg_x", "role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.fixture
def busy_folder(monkeypatch):
    real_save = MemoryStore.save
    state = {"busy": True}

    def save(self, *args, **kwargs):
        if state["busy"]:
            raise FolderBusy(".memdir/lock: still locked after 30s by another memdir process; retry later")
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(MemoryStore, "save", save)
    return state


def test_offline_run_on_a_busy_folder_keeps_its_cursor_and_the_next_run_saves(tmp_path, busy_folder):
    memory, transcript = tmp_path / "memory", _transcript(tmp_path)
    with pytest.raises(FolderBusy):
        extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="offline"), today=TODAY)
    assert state.load_cursor(memory, "s1")["uuid"] is None
    busy_folder["busy"] = False
    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="offline"), today=TODAY)
    assert result.status == "saved" and any("payments" in p.read_text() for p in memory.glob("user_*.md"))


def test_llm_run_whose_write_finds_the_folder_busy_fails_and_keeps_its_cursor(tmp_path, api, busy_folder):
    memory, transcript = tmp_path / "memory", _transcript(tmp_path)
    role = "---\nname: Role\ndescription: User is the tech lead for payments\ntype: user\n---\nTech lead for payments.\n"
    api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": str(memory / "user_role.md"),
                                                                  "content": role}, "toolu_w1")],
                                           stop_reason="tool_use", model="claude-sonnet-5-5")),
        httpx.Response(200, json=P.message([P.text("The folder is busy; nothing saved.")],
                                           model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(transcript, memory, session_id="s1", settings=Settings(engine="llm"), today=TODAY)
    assert result.status == "failed" and "locked" in result.reason
    assert state.load_cursor(memory, "s1")["uuid"] is None and not list(memory.glob("user_*.md"))
