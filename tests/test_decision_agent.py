"""The LLM extraction agent's structured decision output: the RecordDecision tool, against a scripted API."""

from __future__ import annotations

import json
from datetime import date

import httpx

from memdir import graph
from memdir.config import Settings
from memdir.decisions import read_journal
from memdir.paths import decisions_dir
from memdir.stages.extractor.decision_pipeline import stop_step
from memdir.stages.extractor.run import extract_transcript
from tests import api_payloads as P

TODAY = date(2026, 3, 2)
FEEDBACK = ("---\nname: Real database in tests\ndescription: Integration tests use the real database\n"
            "type: feedback\n---\nNever mock the database in integration tests.\n\n"
            "**Why:** mocks hid a broken migration\n**How to apply:** use the test database\n")


def _transcript(tmp_path, project):
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z", "cwd": str(project),
         "message": {"role": "user", "content": "Let's go with Postgres over MySQL for orders, because we need JSONB. "
                                                "And don't mock the database in integration tests."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:05Z",
         "message": {"id": "msg_x", "role": "assistant", "content": [{"type": "text", "text": "Understood."}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_agent_records_decisions_beside_its_memory_writes(api, tmp_path):
    project = tmp_path / "orders"
    (project / ".git").mkdir(parents=True)
    memory = tmp_path / "memory"
    decision = {"kind": "decision", "what": "Use PostgreSQL over MySQL for orders", "why": "we need JSONB",
                "entities": ["PostgreSQL", "MySQL"], "category": "database", "confidence": 0.97,
                "relations": [{"from": "PostgreSQL", "to": "MySQL", "relationType": "CHOSE_OVER"}]}
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([
            P.tool_use("Write", {"file_path": str(memory / "feedback_real_db.md"), "content": FEEDBACK}, "toolu_w1"),
            P.tool_use("RecordDecision", decision, "toolu_d1"),
            P.tool_use("RecordDecision", {"kind": "verdict", "what": "x", "confidence": 2}, "toolu_d2"),
        ], stop_reason="tool_use", model="claude-sonnet-5-5")),
        httpx.Response(200, json=P.message([P.text("Saved.")], model="claude-sonnet-5-5")),
    ])
    result = extract_transcript(_transcript(tmp_path, project), memory, session_id="s1",
                                settings=Settings(engine="llm", max_attempts=1), today=TODAY)
    assert result.status == "saved" and result.saved == ["feedback_real_db.md"]
    first = json.loads(route.calls[0].request.content)
    assert "RecordDecision" in [t["name"] for t in first["tools"]]
    assert "RecordDecision" in first["system"][0]["text"]
    second = json.loads(route.calls[1].request.content)  # a refused call goes back to the model as an error
    results = {r["tool_use_id"]: r for r in second["messages"][-1]["content"]}
    assert "recorded decision" in results["toolu_d1"]["content"] and not results["toolu_d1"].get("is_error")
    assert results["toolu_d2"]["is_error"] and "field 'kind'" in results["toolu_d2"]["content"]
    assert not (project / ".claude").exists()  # the agent touched only the memory folder
    stop_step(memory, str(project))  # the Stop worker moves the queued decision into the project's tiers
    folder = decisions_dir(memory, project, compat=False)
    [recorded] = read_journal(folder).decisions
    assert (recorded.source, recorded.confidence, recorded.project) == ("agent", 0.9, "orders")  # capped
    assert recorded.why == "we need JSONB"
    loaded = graph.load_graph(graph.graph_path(folder))
    assert ("PostgreSQL", "MySQL", "CHOSE_OVER") in loaded.relations
    assert not list(memory.glob("project_*.md"))  # not promoted: the agent writes its own memory files


def test_a_decision_is_dated_by_the_message_it_was_said_in_not_the_run(tmp_path):
    from memdir.stages.extractor import decision_tool
    from memdir.stages.extractor.tools import Toolbox

    toolbox = Toolbox(tmp_path / "memory")
    toolbox.said_days = ["2026-02-20", "2026-02-23"]
    for said_on in ("2026-02-20", None, "2030-01-01"):  # its own day; none given; a day not in the window
        call = {"kind": "decision", "what": f"Use uv ({said_on})", "confidence": 0.8,
                **({"said_on": said_on} if said_on else {})}
        assert not decision_tool.run(toolbox, call).is_error
    inbox = (tmp_path / "memory" / ".memdir" / "decision-inbox.jsonl").read_text().splitlines()
    assert [json.loads(line)["decision"]["metadata"]["timestamp"][:10] for line in inbox] == ["2026-02-20", "2026-02-23", "2026-02-23"]
