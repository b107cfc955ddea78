"""A recent decision is injected only when it clears the bar a memory of the folder faces (issue 21, user17):
a small journal cannot say which words are common, so "pipeline", which every note of the real job-search
folder says and no memory is recalled on alone, let a decision about the nightly pipeline through."""

from __future__ import annotations

import io
import json
import shutil

import pytest

from memdir import constants as C
from memdir.decisions import Decision, append
from memdir.entry.hooks import main as hook_main
from memdir.model import Memory
from memdir.paths import decisions_dir
from memdir.scan import scan
from memdir.stages.recall.offline import select_offline
from memdir.store import MemoryStore

NIGHTLY = "Run the nightly pipeline with --resume after a crash"
JOURNAL = [Decision(kind="decision", what=NIGHTLY, why="a rerun from scratch takes three hours",
                    entities=["pipeline", "nightly"], confidence=0.9),
           Decision(kind="preference", what="Use pnpm, never npm, in this repo", why="the lockfile",
                    entities=["pnpm", "npm"], confidence=0.9)]


def _project(tmp_path, memory, monkeypatch):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    append(decisions_dir(memory, project, compat=False), JOURNAL)
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv(C.RECALL_SERVER_ENV, "0")
    monkeypatch.setenv(C.DISABLE_ENV, "1")
    return project


def _prompt(project, prompt: str, session: str) -> str:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out = io.StringIO()
    assert hook_main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"] if out.getvalue() else ""


@pytest.fixture
def real_folder(realdata, tmp_path):
    from benchmarks import realistic

    memory = tmp_path / "memory"
    shutil.copytree(realdata / realistic.REAL_FOLDER, memory)
    return memory


@pytest.mark.parametrize("prompt", ["how is my application pipeline looking this week?", "is the pipeline running?"])
def test_a_word_common_to_the_folder_brings_no_decision(real_folder, tmp_path, monkeypatch, prompt):
    project = _project(tmp_path, real_folder, monkeypatch)
    # The bar a memory faces: "pipeline" is in so many of this folder's memories that none is recalled on it alone
    headers = scan(real_folder).headers
    assert sum("pipeline" in f"{h.name} {h.description} {h.excerpt}".lower() for h in headers) >= len(headers) / 4
    assert not select_offline("is the pipeline running?", headers)
    assert NIGHTLY not in _prompt(project, prompt, "s1")


def test_a_decision_the_prompt_is_about_still_comes(real_folder, tmp_path, monkeypatch):
    project = _project(tmp_path, real_folder, monkeypatch)
    assert NIGHTLY in _prompt(project, "restart the nightly pipeline after it crashed", "s1")
    assert "Use pnpm, never npm" in _prompt(project, "should I install deps with npm or pnpm?", "s2")


def test_in_a_small_folder_one_distinctive_word_is_what_the_memory_bar_accepts(tmp_path, monkeypatch):
    """Too few memories to say what is common: one word of the prompt in a memory's name recalls it, so it brings
    the decision that names it too. Filler shared with the decision ("use", "repo") brings nothing."""
    memory = tmp_path / "memory"
    MemoryStore(memory).save(Memory(name="Alice", description="Alice owns payments", type="user",
                                    body="Ask her about refunds."), rel_path="user_alice.md")
    project = _project(tmp_path, memory, monkeypatch)
    assert NIGHTLY in _prompt(project, "is the pipeline running?", "s1")
    assert "Use pnpm" not in _prompt(project, "can you use this in the repo?", "s2")


def test_the_warm_servers_answer_says_which_words_are_common_too(real_folder, tmp_path, monkeypatch):
    from memdir.entry.prompt_claim import claimed_context
    from memdir.entry.recall_race import from_reply
    from memdir.stages.recall.server_answer import handle

    project = _project(tmp_path, real_folder, monkeypatch)
    prompt = "how is my application pipeline looking this week?"
    answer = from_reply(handle({"memory_dir": str(real_folder), "query": prompt, "engine": "offline",
                                "cwd": str(project), "session_id": "s1", "record": False,
                                "env": {"MEMDIR_PATH": str(real_folder)}}))
    assert answer is not None and "pipelin" in answer.common
    journal = str(decisions_dir(real_folder, project, compat=False) / C.DECISIONS_JOURNAL)
    assert NIGHTLY not in claimed_context(str(real_folder), "s1", prompt, answer, journal, index_loaded=False)


def test_when_the_model_picks_the_memories_decisions_still_face_the_folders_common_words(real_folder, api):
    """dec19 left the llm recall engine without the common-word set: its decisions faced only the journal's own
    bar, too small to call "pipeline" common. The set is now the one the offline selector would have found."""
    from memdir.config import Settings
    from memdir.stages.recall.api import recall
    from memdir.stages.recall.decision_filter import relevant_decisions
    from tests import api_payloads as P

    prompt = "how is my application pipeline looking this week?"
    offline = recall(real_folder, prompt, settings=Settings(engine="offline"), record=False)
    assert offline.common  # "pipeline" and more: the bar has something to say on this folder
    api.post("/v1/messages").mock(return_value=P.selection(scan(real_folder).headers[0].rel_path))
    chosen = recall(real_folder, prompt, settings=Settings(engine="llm", max_attempts=1), record=False)
    assert chosen.engine == "llm" and chosen.common == offline.common
    records = [d.model_dump(mode="json") for d in JOURNAL]
    assert not relevant_decisions(prompt, records, chosen.context, chosen.common)
