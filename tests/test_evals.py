from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from memdir.config import Settings
from memdir.evals.cases import load_file, load_suite
from memdir.evals.report import compare, load_run, summary, wilson
from memdir.evals.runner import run_cases, write_results
from tests import api_payloads as P

EXTRACTION_CASE = """
- id: scripted-feedback
  tags: [feedback]
  today: 2026-03-02
  transcript:
    - {role: user, content: "Don't mock the database in integration tests, because mocks hid a broken migration."}
  expect:
    memories: [{type: feedback, keywords: [database], why_how: true}]
"""

BEHAVIOUR_CASE = """
- id: scripted-behaviour
  tags: [verify]
  memories:
    - {file: reference_flags.md, name: Flags, description: "Flags live in src/flags.py", type: reference,
       body: "src/flags.py", age_days: 90}
  context: "src/flags.py no longer exists."
  prompt: "Where do I add a flag?"
  rubric: ["Checks the path before recommending it", "Mentions config/flags.yaml"]
"""

MEMORY = ("---\nname: Real database in tests\ndescription: Integration tests must hit the real database\n"
          "type: feedback\n---\nNever mock the database.\n\n**Why:** mocks hid a broken migration\n"
          "**How to apply:** use the test DB\n")


def _suite(tmp_path: Path, suite: str, text: str) -> Path:
    folder = tmp_path / "cases" / suite
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.yaml").write_text(text)
    return tmp_path / "cases"


def _write_response(path: str, content: str) -> httpx.Response:
    return httpx.Response(200, json=P.message([P.tool_use("Write", {"file_path": path, "content": content})],
                                              stop_reason="tool_use", model="claude-sonnet-5-5",
                                              input_tokens=900, output_tokens=200, cache_read=700))


def _settings():
    return Settings(engine="llm", max_attempts=1)


def _write_from_request(content: str):
    """Answer with a Write into whatever memory folder the request's system prompt names."""
    def respond(request):
        system = json.loads(request.content)["system"][0]["text"]
        folder = system.split("look at existing memory files in ")[1].split(".\n")[0]
        return _write_response(f"{folder}/feedback_real_db.md", content)
    return respond


def test_scripted_extraction_passes_a_case(api, tmp_path):
    cases, errors = load_suite("extraction", _suite(tmp_path, "extraction", EXTRACTION_CASE))
    api.post("/v1/messages").mock(side_effect=_write_from_request(MEMORY))
    (record,) = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert errors == [] and record["status"] == "pass", record
    assert record["usage"]["cache_read_input_tokens"] == 700 and record["cache_hit"] is True
    assert record["cost_usd"] > 0 and record["model"] == "claude-sonnet-5-5"
    assert "feedback_real_db.md" in record["outputs"]["files"]


def test_scripted_extraction_fails_for_the_right_reason(api, tmp_path):
    cases, _ = load_suite("extraction", _suite(tmp_path, "extraction", EXTRACTION_CASE))
    wrong = MEMORY.replace("database", "datastore").replace("type: feedback", "type: project")
    api.post("/v1/messages").mock(side_effect=_write_from_request(wrong))
    (record,) = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert record["status"] == "fail"
    (grade,) = record["grades"]
    assert grade["check"] == "memory #1 (feedback)" and "no created or updated memory matches database" in grade["reason"]


def test_api_error_is_recorded_as_error_not_failure(api, tmp_path):
    cases, _ = load_suite("extraction", _suite(tmp_path, "extraction", EXTRACTION_CASE))
    api.post("/v1/messages").mock(return_value=P.error(500))
    (record,) = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert record["status"] == "error" and "500" in record["error"] and record["grades"] == []
    assert "errors" in summary([record], "t") and "| extraction | 0/0 | - |" in summary([record], "t")


def test_judge_verdicts_come_from_structured_output(api, tmp_path):
    cases, _ = load_suite("behaviour", _suite(tmp_path, "behaviour", BEHAVIOUR_CASE))
    verdicts = {"criteria": [
        {"criterion": "Checks the path before recommending it", "passed": True, "reason": "it checks first"},
        {"criterion": "Mentions config/flags.yaml", "passed": False, "reason": "never mentions it"},
    ]}
    route = api.post("/v1/messages").mock(side_effect=[
        httpx.Response(200, json=P.message([P.text("Let me check whether src/flags.py still exists first.")])),
        httpx.Response(200, json=P.message([P.text(json.dumps(verdicts))], model="claude-sonnet-5-5")),
    ])
    (record,) = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert record["status"] == "fail"
    assert [(g["passed"], g["reason"]) for g in record["grades"]] == [(True, "it checks first"), (False, "never mentions it")]
    agent, judge = [json.loads(c.request.content) for c in route.calls]
    assert "check that it still exists" in agent["system"] and "## MEMORY.md" in agent["system"]
    assert "This memory is 90 days old" in agent["messages"][0]["content"]
    assert judge["output_config"]["format"]["type"] == "json_schema"
    assert "<agent_reply>\nLet me check whether src/flags.py still exists first.\n</agent_reply>" in judge["messages"][0]["content"]


def test_behaviour_is_skipped_offline(tmp_path):
    cases, _ = load_suite("behaviour", _suite(tmp_path, "behaviour", BEHAVIOUR_CASE))
    (record,) = run_cases(cases, engine="offline", settings=Settings(engine="offline"), concurrency=1)
    assert record["status"] == "skipped" and "need an LLM" in record["error"]


def test_repeat_and_variant_wiring(api, tmp_path):
    cases, _ = load_suite("extraction", _suite(tmp_path, "extraction", EXTRACTION_CASE))
    variant = tmp_path / "variant"
    variant.mkdir()
    original = (Path(__file__).parents[1] / "prompts" / "extract_system.j2").read_text()
    (variant / "extract_system.j2").write_text("VARIANT B.\n" + original)
    route = api.post("/v1/messages").mock(side_effect=_write_from_request(MEMORY))
    records = run_cases(cases, engine="llm", settings=_settings(), repeat=3, concurrency=2, variant=str(variant))
    assert [r["repeat"] for r in records] == [0, 1, 2] and route.call_count == 3
    assert all(json.loads(c.request.content)["system"][0]["text"].startswith("VARIANT B.") for c in route.calls)
    plain = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert not json.loads(route.calls[-1].request.content)["system"][0]["text"].startswith("VARIANT B.")
    assert records[0]["inputs_hash"] != plain[0]["inputs_hash"]


def test_compare_two_saved_runs(tmp_path):
    def rec(case, status):
        return {"case": case, "suite": "recall", "tags": [], "repeat": 0, "status": status, "grades": [],
                "latency_s": 0.1, "usage": {}, "cost_usd": 0.0}

    write_results([rec("a", "pass"), rec("b", "fail"), rec("c", "pass")], tmp_path / "A" / "results.jsonl")
    write_results([rec("a", "fail"), rec("b", "pass"), rec("c", "pass"), rec("d", "pass")], tmp_path / "B" / "results.jsonl")
    text = compare(load_run(tmp_path / "A"), load_run(tmp_path / "B"), "A", "B")
    assert "pass rate over 3 shared cases: A 66.7%, B 66.7% (+0.0 points)" in text
    assert "- broke: `recall/a` pass -> fail" in text and "- fixed: `recall/b` fail -> pass" in text
    assert "cases in only one run: 1" in text


def test_malformed_case_file_is_one_clear_line_and_others_still_run(tmp_path, cli):
    folder = _suite(tmp_path, "recall", """
- id: good
  memories: [{file: user_a.md, name: A, description: "Alice leads payments", type: user}]
  query: "who leads payments?"
  expect: [user_a.md]
""")
    (folder / "recall" / "bad.yaml").write_text("""
- id: broken
  memories: [{file: user_a.md, name: A, description: d, type: opinion}]
  query: q
  expect: [user_a.md]
""")
    code, out, err = cli("eval", "run", "--suite", "recall", "--engine", "offline", "--cases", str(folder),
                         "--out", str(tmp_path / "runs"))
    assert code == 1
    (line,) = [text for text in err.splitlines() if "bad.yaml" in text]
    assert "case broken: field 'memories.0.type'" in line
    assert "| recall | 1/1 | 100% |" in out
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (run_dir / "results.jsonl").exists() and (run_dir / "summary.md").exists()


def test_builtin_suites_load_and_meet_their_counts():
    counts = {}
    for suite in ("extraction", "recall", "behaviour"):
        cases, errors = load_suite(suite)
        assert errors == [], errors
        counts[suite] = len(cases)
    assert counts["extraction"] >= 40 and counts["recall"] >= 30 and counts["behaviour"] >= 10


def test_wilson_interval():
    assert wilson(0, 0) == (0.0, 0.0)
    low, high = wilson(8, 10)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95


def test_unreadable_yaml_names_the_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("- id: [unclosed")
    cases, errors = load_file(path, "recall")
    assert cases == [] and "cannot read YAML" in errors[0].message and errors[0].file == str(path)


def test_locomo_score_counts_hits_evidence_recall_and_precision():
    from memdir.evals.locomo import Score

    score = Score()
    score.add({"a.md", "b.md"}, ["a.md", "x.md", "y.md"])  # hit, 1 of 2 evidence, 1 of 3 picks
    score.add({"c.md"}, [])  # nothing recalled: a miss that costs no precision
    assert (score.hit_at_5, score.recall_at_5) == (0.5, 0.25)
    assert score.precision == 1 / 3 and score.selected == 3


SEEDED_CASE = """
- id: scripted-clock
  today: 2026-03-02
  existing:
    - {file: feedback_staging.md, name: Staging first, description: "Deploys go to staging first", type: feedback,
       body: "Deploy to staging first.\\n\\n**Why:** a bad deploy\\n**How to apply:** every deploy", age_days: 3}
  transcript:
    - {role: user, content: "Don't mock the database in integration tests, because mocks hid a broken migration."}
  expect:
    memories: [{type: feedback, keywords: [database]}]
"""


def test_a_case_is_extracted_on_its_own_clock_its_memories_seeded_before_it(api, tmp_path, monkeypatch):
    """The case's day is "today" in the request; the memories it writes are stamped then (its messages' time), and
    the ones it starts with `age_days` before, in their file time and their `modified:` alike. Not the clock's."""
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")
    cases, _ = load_suite("extraction", _suite(tmp_path, "extraction", SEEDED_CASE))
    sent: list[str] = []

    def respond(request):
        sent.append(request.content.decode())
        if len(sent) > 1:
            return httpx.Response(200, json=P.message([P.text("Saved.")], model="claude-sonnet-5-5"))
        system = json.loads(request.content)["system"][0]["text"]
        folder = system.split("look at existing memory files in ")[1].split(".\n")[0]
        return httpx.Response(200, json=P.message(
            [P.tool_use("Write", {"file_path": f"{folder}/feedback_real_db.md", "content": MEMORY}),
             P.tool_use("Read", {"file_path": f"{folder}/feedback_staging.md"})],
            stop_reason="tool_use", model="claude-sonnet-5-5"))

    api.post("/v1/messages").mock(side_effect=respond)
    (record,) = run_cases(cases, engine="llm", settings=_settings(), concurrency=1)
    assert record["status"] == "pass", record
    assert "Today is 2026-03-02." in sent[0] and "feedback_staging.md (2026-02-27T09:00:00Z)" in sent[0]
    assert re.findall(r"modified: (\S+?)(?:\\n|\")", sent[1]) == ["2026-03-02T09:00:00.000Z", "2026-02-27T09:00:00.000Z"]
