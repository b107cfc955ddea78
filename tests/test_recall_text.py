"""What recall reads of a prompt (memdir.prompt_scope.recall_text): a pasted log of a megabyte no longer costs the
prompt hook a second; the question said before or after it is still what recall answers."""

from __future__ import annotations

import io
import json

from memdir import constants as C
from memdir.model import Memory
from memdir.prompt_scope import recall_text
from memdir.stages.recall import server_answer
from memdir.store import MemoryStore
from tests.hook_runs import deploys_memory

LOG = "2026-11-26 12:00:01 INFO worker started pid=1234 queue=payments\n" * 20_000  # ~1.3 MB


def test_a_short_prompt_is_read_whole_and_a_long_one_by_its_start_and_end():
    assert recall_text("  fix the flaky test  ") == "fix the flaky test"
    long = "how do deploys go out? " + LOG + " and why does the release train stall?"
    text = recall_text(long)
    assert len(text) <= C.RECALL_PROMPT_MAX_CHARS and recall_text(text) == text  # read twice: the same
    assert text.startswith("how do deploys go out?") and text.endswith("why does the release train stall?")


def test_the_hook_recalls_for_the_question_around_a_pasted_log(tmp_path, monkeypatch):
    from memdir.entry.hooks import main

    deploys_memory(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMDIR_RECALL_SERVER", "0")
    project = tmp_path / "project"
    project.mkdir()
    for prompt in ("when do deploys go out on the release train?\n" + LOG, LOG + "\nwhen do deploys go out on the release train?"):
        out = io.StringIO()
        payload = {"session_id": f"s{len(prompt) % 7}{prompt[:3]}", "cwd": str(project), "prompt": prompt,
                   "hook_event_name": "UserPromptSubmit"}
        assert main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
        assert "Tuesdays" in out.getvalue()


def test_recall_itself_reads_a_long_query_by_its_start_and_end(tmp_path, monkeypatch):
    """The CLI, MCP and the memory tool call recall() with a query as long as it comes: it ranks on what
    recall_text keeps of it, and still finds the memory the question is about."""
    from memdir.stages.recall import api
    from memdir.stages.recall.api import recall

    ranked_on: list[int] = []
    real_candidates = api.candidates
    monkeypatch.setattr(api, "candidates", lambda headers, query, *a: ranked_on.append(len(query))
                        or real_candidates(headers, query, *a))
    memory = tmp_path / "memory"
    MemoryStore(memory).save(Memory(name="Deploys", description="Deploys go out on Tuesdays via the release train",
                                    type="project"))
    result = recall(memory, "when do deploys go out on the release train?\n" + LOG, engine="offline", record=False)
    assert [h.rel_path for h in result.selected] == ["project_deploys.md"]
    assert ranked_on and max(ranked_on) <= C.RECALL_PROMPT_MAX_CHARS


def test_the_server_reads_a_raw_payloads_prompt_as_the_hook_does():
    prompt = "when do deploys go out? " + LOG
    request = server_answer.from_hook_payload({"hook_payload": json.dumps({"prompt": prompt, "cwd": "/p"})})
    assert request["query"] == recall_text(prompt)
