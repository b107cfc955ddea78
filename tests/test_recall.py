from __future__ import annotations

import io
import json
import os
import time
from datetime import date
from pathlib import Path

import httpx
import pytest

from memdir import constants as C
from memdir.config import Settings
from memdir.entry.hooks import main as hook_main
from memdir.model import Memory
from memdir.scan import scan
from memdir.stages.recall import state
from memdir.stages.recall.api import recall
from memdir.stages.recall.inject import render_memory
from memdir.stages.recall.manifest import candidates, manifest_line
from tests import api_payloads as P

DAY = 86400


def _save(store, name, description, type_="user", body=None, age_days=0, now=None):
    if type_ in ("feedback", "project") and body is None:
        body = f"{description}\n\n**Why:** because\n**How to apply:** always"
    result = store.save(Memory(name=name, description=description, type=type_, body=body or description))
    stamp = (now or time.time()) - age_days * DAY
    os.utime(result.path, (stamp, stamp))
    return result


@pytest.fixture
def folder(store):
    _save(store, "Testing style", "Integration tests must hit a real database, not mocks", "feedback", age_days=3)
    _save(store, "Payments dashboard", "Grafana board for payments latency at grafana.internal/d/pay", "reference")
    _save(store, "Alice", "Alice is a backend engineer new to React", "user", age_days=1)
    _save(store, "Release freeze", "Merge freeze for the mobile release starts 2026-03-05", "project", age_days=2)
    return store


def _llm_settings(**kw) -> Settings:
    return Settings(engine="llm", max_attempts=kw.pop("max_attempts", 3), **kw)


def test_selector_request_is_exactly_what_the_spec_says(folder, api):
    route = api.post("/v1/messages").mock(return_value=P.selection("feedback_testing_style.md"))
    result = recall(folder.root, "write tests for the ledger", settings=_llm_settings(), tools=["Read", "Bash"])
    assert [h.rel_path for h in result.selected] == ["feedback_testing_style.md"]
    assert result.engine == "llm" and result.usage["input_tokens"] == 120
    body = json.loads(route.calls[0].request.content)
    assert body["model"] == "claude-haiku-5-5" and body["max_tokens"] == 1024
    # Haiku 5.5 thinks adaptively unless told: a pick from a list needs no thinking, at low effort.
    assert body["thinking"] == {"type": "disabled"} and body["output_config"]["effort"] == "low"
    schema = body["output_config"]["format"]
    assert schema["type"] == "json_schema"
    assert schema["schema"]["properties"]["selected_memories"]["type"] == "array"
    assert schema["schema"]["required"] == ["selected_memories"]
    assert "maxItems" not in json.dumps(schema)  # "{maxItems: 20}" beside "at most 5" told the model two limits
    assert "at most 5" in body["system"].lower() and "empty list" in body["system"]
    assert "gotchas" in body["system"]
    content = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "user"
    assert "<user_message>\nwrite tests for the ledger\n</user_message>" in content
    assert content.startswith(f"Today is {date.today().isoformat()}.\n")  # "last week" can be placed (relay21b)
    for h in scan(folder.root).headers:
        assert manifest_line(h) in content
    assert "<recently_used_tools>\nRead, Bash\n</recently_used_tools>" in content
    assert route.calls[0].request.headers["authorization"] == "Bearer test-key"


def test_the_request_gives_the_date_of_the_moment_recall_is_asked_for(folder, api):
    """recall(now=...) is when the user asks: the model's "Today is" says that day, as the offline engine's named days
    do (an eval or benchmark asking in the time of its memories; before, the model got this machine's date)."""
    route = api.post("/v1/messages").mock(return_value=P.selection("feedback_testing_style.md"))
    asked = time.mktime((2026, 4, 4, 10, 0, 0, 0, 0, -1))
    recall(folder.root, "write tests for the ledger", settings=_llm_settings(), now=asked, record=False)
    assert json.loads(route.calls[0].request.content)["messages"][0]["content"].startswith("Today is 2026-04-04.\n")


@pytest.mark.parametrize("now", [float("nan"), float("inf"), -float("inf"), 1e20, 1e12, -1e12])
def test_a_now_with_no_date_is_refused_in_one_line(folder, api, now):
    """hostile22: recall(now=NaN, an infinity, or a moment past year 9999) made the llm selector fail on the request's
    date and fall back to the offline one, which raised ValueError or OverflowError from deep inside. A moment with
    a date, 1970's or before it, is asked as it is."""
    from memdir.errors import MemdirError

    route = api.post("/v1/messages").mock(return_value=P.selection("feedback_testing_style.md"))
    with pytest.raises(MemdirError) as refused:
        recall(folder.root, "write tests for the ledger", settings=_llm_settings(), now=now, record=False)
    assert str(refused.value).startswith(f"recall: now={now!r} ") and "\n" not in str(refused.value)
    assert not route.calls
    from datetime import date

    for dated in (0.0, -1e9):  # 1970's first day and 1938's (in this machine's time zone, as recall dates `now`)
        day = date.fromtimestamp(dated).isoformat()
        recall(folder.root, "write tests for the ledger", settings=_llm_settings(), now=dated, record=False)
        assert json.loads(route.calls[-1].request.content)["messages"][0]["content"].startswith(f"Today is {day}.")


def test_manifest_line_format(folder):
    h = next(h for h in scan(folder.root).headers if h.type == "reference")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(h.mtime))
    assert manifest_line(h) == f"- [reference] {h.rel_path} ({stamp}): {h.description}"
    h.type, h.description = None, None
    assert manifest_line(h) == f"- {h.rel_path} ({stamp})"


def test_unknown_names_from_the_model_are_dropped(folder, api):
    api.post("/v1/messages").mock(return_value=P.selection("made_up.md", "user_alice.md", "../../etc/passwd"))
    result = recall(folder.root, "who is working on the React side", settings=_llm_settings())
    assert [h.rel_path for h in result.selected] == ["user_alice.md"]
    assert any("made_up.md" in d for d in result.debug)


def test_already_surfaced_memories_are_not_offered_again(folder, api):
    route = api.post("/v1/messages").mock(return_value=P.selection("user_alice.md"))
    first = recall(folder.root, "who is Alice again", settings=_llm_settings(), session_id="s1")
    assert [h.rel_path for h in first.selected] == ["user_alice.md"]
    assert state.load(folder.root, "s1").paths == ["user_alice.md"]
    recall(folder.root, "tell me about Alice", settings=_llm_settings(), session_id="s1")
    second_manifest = json.loads(route.calls[1].request.content)["messages"][0]["content"]
    assert "user_alice.md" not in second_manifest and "feedback_testing_style.md" in second_manifest
    recall(folder.root, "tell me about Alice", settings=_llm_settings(), session_id="other")
    assert "user_alice.md" in json.loads(route.calls[2].request.content)["messages"][0]["content"]


@pytest.mark.parametrize("status", [400, 401, 500])
def test_api_error_falls_back_to_offline(folder, api, status):
    api.post("/v1/messages").mock(return_value=P.error(status))
    result = recall(folder.root, "the payments latency dashboard", settings=_llm_settings(max_attempts=1))
    assert result.engine == "offline"
    assert [h.rel_path for h in result.selected][0].startswith("reference_payments")
    assert any(f"{status}" in d and "offline" in d for d in result.debug)


def test_timeout_budget_falls_back_to_offline(folder, api):
    """The API holds its answer until recall has returned: recall gave up at its budget, it did not wait."""
    import threading

    asked, answer_now = threading.Event(), threading.Event()

    def slow(request):
        asked.set()
        answer_now.wait(60)  # a hang guard, not a speed claim: released as soon as recall is back
        return P.selection("user_alice.md")

    route = api.post("/v1/messages").mock(side_effect=slow)
    try:
        result = recall(folder.root, "payments latency dashboard", settings=_llm_settings(recall_timeout=0.3))
        assert asked.is_set() and route.call_count == 0  # asked, and back before any answer came
    finally:
        answer_now.set()
    assert result.engine == "offline" and "reference_payments" in result.selected[0].rel_path
    assert any("budget" in d or "Timeout" in d for d in result.debug)
    deadline = time.monotonic() + 30  # the abandoned request finishes before the mock closes
    while route.call_count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)


def test_connection_error_is_retried_then_falls_back(folder, api):
    route = api.post("/v1/messages").mock(side_effect=httpx.ConnectError("refused"))
    result = recall(folder.root, "payments dashboard", settings=_llm_settings(max_attempts=2, recall_timeout=5))
    assert route.call_count == 2 and result.engine == "offline"


def test_429_then_success_is_retried_once(folder, api):
    route = api.post("/v1/messages").mock(
        side_effect=[P.error(429, retry_after="0"), P.selection("reference_payments_dashboard.md")]
    )
    result = recall(folder.root, "payments latency", settings=_llm_settings())
    assert route.call_count == 2  # tenacity retried once; the SDK itself did not retry
    assert result.engine == "llm" and result.selected[0].rel_path == "reference_payments_dashboard.md"


def test_529_overloaded_is_retried(folder, api):
    route = api.post("/v1/messages").mock(
        side_effect=[P.error(529, retry_after="0"), P.error(529, retry_after="0"), P.selection("user_alice.md")]
    )
    result = recall(folder.root, "who is alice", settings=_llm_settings(max_attempts=3))
    assert route.call_count == 3 and result.engine == "llm"


def test_base_url_is_honoured(folder, monkeypatch):
    import respx

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/gateway")
    from memdir.evals import api_validator

    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        api_validator.install(router)
        route = router.post("http://127.0.0.1:9/gateway/v1/messages").mock(return_value=P.selection("user_alice.md"))
        result = recall(folder.root, "who is alice", settings=Settings(engine="auto"))
    api_validator.check(router)
    assert route.called and result.engine == "llm"
    assert route.calls[0].request.headers["authorization"] == "Bearer memdir-no-key"


def test_offline_engine_without_key(folder):
    result = recall(folder.root, "should my integration tests use mocks or a database?")
    assert result.engine == "offline"
    assert result.selected[0].rel_path == "feedback_testing_style.md"


def test_offline_returns_nothing_when_nothing_matches(folder):
    assert recall(folder.root, "zebra quantum origami").selected == []


@pytest.mark.slow  # seconds: thousands of files or several processes (.ci/run runs it with --slow)
def test_old_relevant_memory_is_found_among_thousands(store, api):
    now = time.time()
    for i in range(260):
        _save(store, f"Note {i}", f"routine note number {i} about lunch", "user", age_days=1, now=now)
    _save(store, "Kafka gotcha", "Kafka consumer rebalances drop offsets unless commitSync", "feedback", age_days=400)
    headers = scan(store.root).headers
    pool = candidates(headers, "why does the kafka consumer lose offsets")
    assert len(pool) > 200 and "feedback_kafka_gotcha.md" in [h.rel_path for h in pool]
    assert "feedback_kafka_gotcha.md" not in [h.rel_path for h in headers[:200]]
    route = api.post("/v1/messages").mock(return_value=P.selection("feedback_kafka_gotcha.md"))
    result = recall(store.root, "why does the kafka consumer lose offsets", settings=_llm_settings())
    assert "feedback_kafka_gotcha.md" in json.loads(route.calls[0].request.content)["messages"][0]["content"]
    assert result.selected[0].rel_path == "feedback_kafka_gotcha.md"
    offline = recall(store.root, "why does the kafka consumer lose offsets", engine="offline")
    assert offline.selected[0].rel_path == "feedback_kafka_gotcha.md"


@pytest.mark.parametrize(
    "days, expected",
    [
        (0, "Memory (user, saved today): "),
        (1, "Memory (user, saved yesterday): "),
        (2, "Memory (user, saved 2 days ago): "),
        (47, "Memory (user, saved 47 days ago): "),
    ],
)
def test_freshness_headers(store, days, expected):
    now = time.time()
    result = _save(store, "Fact", "a fact", "user", body="Something else, told at length.", age_days=days, now=now)
    header = next(h for h in scan(store.root).headers if h.rel_path == result.rel_path)
    block = render_memory(header, now=now)
    assert block.startswith(expected + str(result.path)) and "<" not in block
    assert "Description: a fact" in block and "---" not in block  # description shown, frontmatter not
    if days > 1:
        assert f"This memory is {days} days old: a point-in-time note, not live state" in block and "verify" in block


def test_long_memory_is_trimmed_to_its_first_lines_with_the_path(store):
    body = "\n".join(f"line {i} " + "x" * 10 for i in range(400))
    result = _save(store, "Long", "long one", "user", body=body)
    header = scan(store.root).headers[0]
    block = render_memory(header)
    assert "line 0 " in block and f"line {C.RECALL_TRIM_BODY_LINES - 1} " in block
    assert f"line {C.RECALL_TRIM_BODY_LINES} " not in block
    assert f"not shown: read the rest at {result.path}]" in block


def test_short_memory_is_shown_whole_without_a_read_the_rest_note(store):
    _save(store, "Short", "short one", "user", body="one\ntwo")
    block = render_memory(scan(store.root).headers[0])
    assert block.endswith("one\ntwo") and "read the rest" not in block


def test_all_recalled_memories_share_one_budget_filled_by_rank(store):
    from memdir.stages.recall.inject import render_all, units

    for i in range(12):
        _save(store, f"Fact {i:02}", f"fact number {i:02}", "user", body="\n".join(f"{i:02}:" + "y" * 60 for _ in range(20)))
    headers = sorted(scan(store.root).headers, key=lambda h: h.name)
    context = render_all(headers)
    assert units(context) <= C.HOOK_OUTPUT_BUDGET
    assert context.index("fact number 00") < context.index("fact number 01")  # rank order kept
    assert context.count("not shown: read the rest at") == 12  # every memory trimmed, none dropped
    assert context.count("00:yyy") > context.count("11:yyy") >= 3  # the best-ranked got more lines
    tight = render_all(headers, budget=2500)
    shown = [h for h in headers if f"fact number {h.name[-2:]}" in tight]
    assert units(tight) <= 2500 and shown == headers[: len(shown)] and 0 < len(shown) < 12  # a prefix by rank
    # Room for one memory's header and a little more: the next ones are listed by path.
    first = render_all(headers[:1], budget=1) or render_memory(headers[0], max_body_lines=0)
    room = units(first) + 400
    listed = render_all(headers[:3], budget=room)
    assert "fact number 00" in listed and "Also relevant, not shown for space" in listed
    assert str(headers[1].path) in listed and units(listed) <= room
    assert render_all(headers, budget=50) == ""  # nothing fits: nothing, not an empty frame


def test_budget_counts_utf16_units_as_claude_code_does(store):
    from memdir.stages.recall.inject import render_all, units

    _save(store, "Emoji", "emoji", "user", body="\n".join("😀" * 200 for _ in range(10)))
    context = render_all(scan(store.root).headers, budget=3000)
    assert len(context) < units(context) <= 3000 and "😀" in context


def test_session_byte_cap_stops_surfacing(folder):
    state.record(folder.root, "s9", ["x.md"], 61 * 1024)
    result = recall(folder.root, "payments latency dashboard", session_id="s9")
    assert result.selected == [] and "cap" in result.debug[0]


def _hook(stdin: str, env_dir: Path | None = None, monkeypatch=None) -> tuple[int, str]:
    out = io.StringIO()
    code = hook_main(["prompt"], stdin=io.StringIO(stdin), stdout=out)
    return code, out.getvalue()


def test_hook_prints_additional_context(folder, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(folder.root))
    payload = {"session_id": "abc", "transcript_path": "/nope.jsonl", "cwd": "/tmp",
               "hook_event_name": "UserPromptSubmit", "prompt": "open the payments latency dashboard"}
    code, out = _hook(json.dumps(payload))
    assert code == 0
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = data["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Saved memories that may help") and "reference_payments_dashboard.md" in context
    code, out = _hook(json.dumps(payload))  # same session: already surfaced
    assert code == 0 and "reference_payments_dashboard.md" not in out


def test_hook_uses_recent_tools_from_the_transcript(folder, monkeypatch, api, tmp_path):
    monkeypatch.setenv("MEMDIR_PATH", str(folder.root))
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi there"}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    route = api.post("/v1/messages").mock(return_value=P.selection())
    payload = {"session_id": "abc", "transcript_path": str(transcript), "cwd": "/tmp", "prompt": "run the tests now"}
    assert _hook(json.dumps(payload)) == (0, "")
    assert "<recently_used_tools>\nBash\n</recently_used_tools>" in json.loads(route.calls[0].request.content)[
        "messages"][0]["content"]


@pytest.mark.parametrize("stdin", ["", "not json", "[]", '{"prompt": 5}', '{"prompt": "x y", "cwd": 3}'])
def test_hook_is_silent_and_exits_zero_on_bad_input(stdin, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path / "m"))
    assert _hook(stdin) == (0, "")


def test_hook_skips_prompts_without_whitespace(folder, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(folder.root))
    assert _hook(json.dumps({"prompt": "dashboard", "cwd": "/tmp"})) == (0, "")


def test_hook_respects_memdirs_own_switch_not_claude_codes(folder, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDIR_PATH", str(folder.root))
    payload = json.dumps({"prompt": "payments latency dashboard", "cwd": str(tmp_path)})
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")  # native off, memdir on
    assert "reference_payments_dashboard.md" in _hook(payload)[1]
    monkeypatch.setenv("MEMDIR_DISABLE", "1")
    assert _hook(payload) == (0, "")
    monkeypatch.delenv("MEMDIR_DISABLE")
    (folder.root / ".memdir").mkdir(exist_ok=True)
    (folder.root / ".memdir" / "config.json").write_text('{"enabled": false}')
    assert _hook(payload) == (0, "")


def test_hook_as_a_real_process(folder, tmp_path):
    from tests.conftest import run_memdir

    payload = json.dumps({"session_id": "p", "cwd": str(tmp_path), "prompt": "payments latency dashboard"})
    proc = run_memdir("hook", "prompt", stdin=payload, env={"MEMDIR_PATH": str(folder.root)})
    assert proc.returncode == 0 and proc.stderr == ""
    assert "reference_payments_dashboard.md" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    bad = run_memdir("hook", "prompt", stdin="{broken", env={"MEMDIR_PATH": str(folder.root)})
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, "", "")


def test_recall_cli_json(folder, cli):
    code, out, err = cli("--dir", str(folder.root), "recall", "payments latency dashboard", "--json")
    data = json.loads(out)
    assert code == 0 and data["engine"] == "offline" and data["selected"][0]["type"] == "reference"


def test_a_misspelt_prompt_still_finds_the_memory_it_means(store):
    """"databse migraton" shares no word with "Database migrations": the typo stands in for the folder's word."""
    store.save(Memory(name="Migrations", description="Database migrations must be backwards compatible for one release",
                      type="feedback", body="Compatible."), rel_path="feedback_migrations.md")
    store.save(Memory(name="Sentry", description="Errors are in Sentry project payments-api", type="reference",
                      body="Sentry."), rel_path="reference_sentry.md")
    chosen = recall(store.root, "add a databse migraton that drops the legacy column", engine="offline", record=False)
    assert [h.rel_path for h in chosen.selected] == ["feedback_migrations.md"]
    # A real word the folder lacks is not bent into one it has when it is more than one edit away (short words).
    assert recall(store.root, "center this div horizontally", engine="offline", record=False).selected == []


def test_typo_correction_is_bounded_edit_distance():
    from memdir.stages.recall.lexical import Ranker, within_edits

    assert within_edits("databse", "database", 1) and within_edits("teh", "the", 1)  # a swap is one edit
    assert not within_edits("kitten", "sitting", 2) and within_edits("kitten", "sitting", 3)
    ranker = Ranker([("Deploys", "Deploys go out on Thursdays", "project", "")])
    assert ranker.corrections("when do we deplyo?") == {"deplyo": "deploy"}
    assert ranker.corrections("when do we ship?") == {}  # unknown but nothing close: no guess
