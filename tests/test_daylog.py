from __future__ import annotations

import json
import time
from datetime import date

import httpx
import pytest

from memdir.config import Settings
from memdir.daylog import entries, log_path
from memdir.stages.extractor import dream
from memdir.stages.extractor.run import extract_messages
from memdir.stages.extractor.tools import Toolbox
from memdir.transcript import Message
from tests import api_payloads as P

DAY = date(2026, 3, 2)


def _msgs(*texts):
    return [Message("user", [P.text(t)], uuid=f"u{i}", timestamp="2026-03-02T09:00:00Z") for i, t in enumerate(texts)]


@pytest.fixture
def daily(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDIR_MEMORY_MODE", "daily-log")
    return tmp_path / "memory"


def test_offline_extraction_appends_to_the_days_log(daily):
    extract_messages(_msgs("Don't mock the database, because mocks hid a migration."), daily,
                     settings=Settings(engine="offline"), today=DAY)
    extract_messages(_msgs("Remember that releases go out on Tuesdays."), daily, settings=Settings(engine="offline"),
                     today=DAY)
    log = log_path(daily, DAY)
    assert log == daily / "logs" / "2026" / "03" / "2026-03-02.md"
    found = entries(daily)
    assert [e.type for e in found] == ["feedback", "project"]
    assert found[0].why == "mocks hid a migration"
    assert not list(daily.glob("*_*.md")) and not (daily / "MEMORY.md").exists()


def test_dream_files_entries_once_and_only_new_ones(daily):
    extract_messages(_msgs("I prefer small commits with one change each."), daily, settings=Settings(engine="offline"),
                     today=DAY)
    first = dream.dream(daily, settings=Settings(engine="offline"), today=DAY)
    assert first.status == "saved" and len(first.saved) == 1
    assert first.report_lines() == [f"created {first.saved[0]}"]  # says what it did, with the real name
    assert dream.dream(daily, settings=Settings(engine="offline"), today=DAY).status == "skipped"
    extract_messages(_msgs("Remember that the staging database is shared with QA."), daily,
                     settings=Settings(engine="offline"), today=DAY)
    second = dream.dream(daily, settings=Settings(engine="offline"), today=DAY)
    assert len(second.saved) == 1 and second.saved != first.saved
    assert len(list(daily.glob("*_*.md"))) == 2 and "staging" in (daily / "MEMORY.md").read_text()


def test_dream_gate(daily):
    assert not dream.due(daily)
    for n in range(5):
        dream.note_session(daily, f"s{n}")
    assert dream.due(daily)  # never dreamt, five sessions
    dream.note_session(daily, "s0")
    (daily / "logs").mkdir(parents=True, exist_ok=True)
    log_path(daily, DAY).parent.mkdir(parents=True, exist_ok=True)
    log_path(daily, DAY).write_text("# 2026-03-02\n\n- 09:00 [user] The user is on call\n")
    dream.dream(daily, settings=Settings(engine="offline"), today=DAY)
    assert not dream.due(daily)
    assert not dream.due(daily, now=time.time() + 25 * 3600)  # time passed, but no sessions yet


def test_llm_daily_log_is_append_only(daily):
    daily.mkdir(parents=True)
    log = log_path(daily, DAY)
    box = Toolbox(daily, daily_log=log)
    ok = box.run("Write", {"file_path": str(log), "content": "- 09:00 [user] The user is on call this week\n"})
    assert not ok.is_error, ok.content
    current = log.read_text()
    assert box.run("Write", {"file_path": str(log), "content": "- 09:05 [user] rewritten\n"}).is_error
    assert box.run("Edit", {"file_path": str(log), "old_string": "on call", "new_string": "x"}).is_error
    assert box.run("Write", {"file_path": str(daily / "user_x.md"), "content": "x"}).is_error
    bad = box.run("Write", {"file_path": str(log), "content": current + "free text\n"})
    assert bad.is_error and "HH:MM" in bad.content
    good = box.run("Write", {"file_path": str(log), "content": current + "- 09:10 [project] Freeze on 2026-03-05\n"})
    assert not good.is_error and [e.text for e in entries(daily)] == ["The user is on call this week", "Freeze on 2026-03-05"]


def test_llm_dream_sends_the_entries_and_writes_topics(api, daily):
    log = log_path(daily, DAY)
    log.parent.mkdir(parents=True)
    log.write_text("# 2026-03-02\n\n- 09:00 [feedback] Never mock the database — why: mocks hid a migration\n")
    memory = ("---\nname: Real database\ndescription: Tests use the real database\ntype: feedback\n---\n"
              "Never mock the database.\n\n**Why:** mocks hid a migration\n**How to apply:** use the test DB\n")
    route = api.post("/v1/messages").mock(return_value=httpx.Response(200, json=P.message(
        [P.tool_use("Write", {"file_path": str(daily / "feedback_real_db.md"), "content": memory})],
        stop_reason="tool_use")))
    result = dream.dream(daily, settings=Settings(engine="llm", max_attempts=1), today=DAY)
    assert result.status == "saved" and result.saved == ["feedback_real_db.md"]
    body = json.loads(route.calls[0].request.content)
    assert "consolidation agent" in body["system"][0]["text"]
    text = body["messages"][0]["content"][0]["text"]
    assert "logs/2026/03/2026-03-02.md:3: [feedback] Never mock the database (why: mocks hid a migration)" in text
    assert dream.pending(daily) == []


def test_llm_dream_failure_keeps_entries_pending(api, daily):
    log = log_path(daily, DAY)
    log.parent.mkdir(parents=True)
    log.write_text("- 09:00 [user] The user is on call\n")
    api.post("/v1/messages").mock(return_value=P.error(400))
    assert dream.dream(daily, settings=Settings(engine="llm", max_attempts=1), today=DAY).status == "failed"
    assert len(dream.pending(daily)) == 1


def test_a_daily_log_request_asks_for_entries_in_the_users_language_with_the_markers_as_written(daily):
    """The language rule was written for memory files only: a model logging a Spanish session in English had the
    entry refused by the support check (one more turn, or the entry lost), as memory files were before the rule."""
    from memdir.stages.extractor.agent import build_request

    said = [Message("user", [P.text("Quiero que siempre me preguntes antes de borrar archivos, porque la semana pasada "
                                         "perdimos trabajo.")], uuid="u1",
                    timestamp="2026-03-02T09:00:00Z", kind="prompt")]
    system = build_request(said, daily, Settings(engine="llm"), DAY, mode="daily-log",
                           daily_log=log_path(daily, DAY))["system"][0]["text"]
    assert "in the language the user wrote in" in system and "`[type]` and `— why:` stay as written" in system
    # and what it asks for is what the log takes: the user's words with the markers as written
    from memdir.stages.extractor.support import sources_of

    daily.mkdir(parents=True)
    box = Toolbox(daily, daily_log=log_path(daily, DAY))
    box.sources = sources_of(said)
    english = "- 09:00 [feedback] Always ask before deleting files — why: work was lost last week\n"
    assert box.run("Write", {"file_path": str(log_path(daily, DAY)), "content": english}).is_error  # translated
    spanish = "- 09:00 [feedback] Siempre preguntar antes de borrar archivos — why: la semana pasada perdimos trabajo\n"
    assert not box.run("Write", {"file_path": str(log_path(daily, DAY)), "content": spanish}).is_error
    assert entries(daily)[0].why == "la semana pasada perdimos trabajo"


def test_the_stop_worker_logs_each_session_and_dreams_once_enough_sessions_have_passed(daily, tmp_path, monkeypatch):
    from memdir.entry import worker

    monkeypatch.setenv("MEMDIR_PATH", str(daily))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    hook_log = daily / ".memdir" / "hook.log"
    for n in range(5):  # dream.due: never dreamt, and five sessions
        transcript = tmp_path / f"s{n}.jsonl"
        transcript.write_text(json.dumps({"type": "user", "uuid": f"u{n}", "sessionId": f"s{n}", "cwd": str(tmp_path),
                                          "message": {"role": "user", "content": f"Remember that release {n} ships "
                                                      "on Tuesdays."}}) + "\n")
        request = {"session_id": f"s{n}", "transcript": str(transcript), "cwd": str(tmp_path)}
        assert worker.main([json.dumps(request)]) == 0
        assert ("dream: " in hook_log.read_text()) == (n == 4)
        assert not list(daily.glob("*_*.md")) or n == 4  # the day's log holds them until the dream
    assert len(entries(daily)) == 5 and list(daily.glob("project_*.md"))
    assert not dream.due(daily)
