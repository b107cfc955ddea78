"""Each thing said once when two prompt hooks run at once (issue 21): memdir's UserPromptSubmit hook registered
with different commands in the user's and the project's settings runs twice for every prompt, both processes
recalling from the same session state. Only one of them may say a memory or a decision."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.decisions import Decision, append
from memdir.entry.hooks import main as hook_main
from memdir.paths import decisions_dir
from memdir.stages.recall import state
from memdir.stages.recall.inject import memory_blocks

PROMPT = "write a cover letter for the Grafana Labs role"  # recalls four memories of the real folder on words alone
DECIDED = "should we send NLnet the governance engine proposal again?"  # a decision and memories, room for both
DECISION = "NLnet proposals go out from the foundation account, signed by both founders"

# One hook process, as Claude Code starts it, whose first read of each piece of session state waits until the
# other process has made the same read: the interleaving the race needs (both read before either writes),
# made certain instead of left to the scheduler. The rest runs as it does in a real hook.
_HOOK = """
import os, sys, time
from memdir import decision_context
from memdir.stages.recall import state

barrier, me = sys.argv[1], sys.argv[2]

def first_read_waits(module, name):
    real, waited = getattr(module, name), []
    def read(*args, **kwargs):
        found = real(*args, **kwargs)
        if not waited:
            waited.append(1)
            os.makedirs(os.path.join(barrier, name), exist_ok=True)
            open(os.path.join(barrier, name, me), "w").close()
            deadline = time.monotonic() + 10
            while len(os.listdir(os.path.join(barrier, name))) < 2 and time.monotonic() < deadline:
                time.sleep(0.002)
        return found
    setattr(module, name, read)

first_read_waits(state, "load")
first_read_waits(decision_context, "shown_in_session")
from memdir.entry.hooks import main
sys.exit(main(["prompt"]))
"""


@pytest.fixture
def real_folder(realdata, tmp_path, monkeypatch):
    """A copy of the real 55-memory folder, this process's memory folder, offline, for a project with a
    decision about the prompt's subject in its journal."""
    from benchmarks import realistic

    memory = tmp_path / "memory"
    shutil.copytree(realdata / realistic.REAL_FOLDER, memory)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    append(decisions_dir(memory, project, compat=False),
           [Decision(kind="decision", what=DECISION, why="failover", entities=["NLnet", "proposal"], confidence=0.9)])
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv(C.DISABLE_ENV, "1")  # Claude Code's own memory off: the hook repeats no index line
    return memory, project


def _payload(project: Path, session: str = "s1", prompt: str = PROMPT) -> str:
    return json.dumps({"session_id": session, "transcript_path": "/nope.jsonl", "cwd": str(project),
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def _context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


def _paths(context: str, memory: Path) -> list[str]:
    """The memories a context says, by file name, in order."""
    return [block.split("\n", 1)[0].rsplit(str(memory) + os.sep, 1)[-1] for block in memory_blocks(context)]


def _in_process(project: Path, session: str = "s1", prompt: str = PROMPT) -> str:
    out = io.StringIO()
    assert hook_main(["prompt"], stdin=io.StringIO(_payload(project, session, prompt)), stdout=out) == 0
    return _context(out.getvalue())


@pytest.mark.parametrize("prompt", [PROMPT, DECIDED])
def test_two_hooks_at_once_say_each_memory_and_decision_once(real_folder, tmp_path, prompt):
    memory, project = real_folder
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    payload = tmp_path / "payload.json"
    payload.write_text(_payload(project, prompt=prompt), encoding="utf-8")
    with payload.open("rb") as first, payload.open("rb") as second:
        hooks = [subprocess.Popen([sys.executable, "-c", _HOOK, str(barrier), name], stdin=stdin,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=project)
                 for name, stdin in (("user", first), ("project", second))]
        outputs = [hook.communicate(timeout=30) for hook in hooks]
    assert all(hook.returncode == 0 and not err for hook, (_, err) in zip(hooks, outputs, strict=True)), outputs
    contexts = [_context(out) for out, _ in outputs]
    said = [path for context in contexts for path in _paths(context, memory)]
    assert said and len(said) == len(set(said)), said  # each recalled memory once across both outputs
    assert sum(context.count(DECISION) for context in contexts) == (prompt == DECIDED), contexts
    assert sorted(state.load(memory, "s1").paths) == sorted(said)  # the session knows what it was told

    # The same prompt typed again later in the session is a new turn: as ever, nothing already said comes back
    later = _in_process(project, prompt=prompt)
    assert not set(_paths(later, memory)) & set(said) and DECISION not in later


def test_what_another_hook_said_meanwhile_is_left_out_and_the_rest_rendered_whole(real_folder, monkeypatch):
    """The other hook claims part of this one's memories between this one's recall and its claim."""
    memory, project = real_folder
    alone = _in_process(project, "alone")
    chosen = _paths(alone, memory)
    assert len(chosen) >= 2
    from memdir.stages.recall import api

    real_recall = api.recall

    def then_the_other_hook_claims(*args, **kwargs):
        result = real_recall(*args, **kwargs)
        state.record(memory, "s1", chosen[:1], 100)
        return result

    monkeypatch.setattr(api, "recall", then_the_other_hook_claims)
    context = _in_process(project)
    assert _paths(context, memory) == chosen[1:]
    assert context.startswith("Saved memories that may help") and chosen[0] not in context
    assert state.load(memory, "s1").paths == chosen  # the first by the other hook, the rest by this one


def test_a_session_lock_held_elsewhere_costs_the_prompt_its_memories_not_a_wait(real_folder):
    memory, project = real_folder
    with state.held(memory, "s1"):
        started = time.monotonic()
        out = io.StringIO()
        assert hook_main(["prompt"], stdin=io.StringIO(_payload(project)), stdout=out) == 0
        waited = time.monotonic() - started
    assert waited < 5, waited  # before: the lock's 30 s, then nothing
    assert out.getvalue() == ""  # nothing said, so nothing can be said twice
    assert "left out rather than risk saying them twice" in (memory / C.STATE_DIRNAME / "hook.log").read_text()
    assert state.load(memory, "s1").paths == []  # not recorded: the next prompt may still bring them
    assert _paths(_in_process(project), memory)


def test_a_twin_that_renders_the_rest_of_a_server_answer_keeps_its_check_against_the_code(tmp_path, monkeypatch):
    """Found by guard17: the memories of a warm server's answer that another hook did not say were rendered again
    from their files, without the server's "Checked against the current code" line."""
    from memdir.entry.prompt_claim import claimed_context
    from memdir.entry.recall_race import from_reply
    from memdir.stages.recall.server_answer import handle
    from tests.git_repos import git_in

    repo, memory = tmp_path / "repo", tmp_path / "memory"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "deploy.py").write_text("def push_release():\n    pass\n")
    git_in(repo, "init", "-q")
    memory.mkdir()
    for rel, body in {"project_release.md": "Releases go out through `push_release()` in src/deploy.py.",
                      "feedback_release_notes.md": "Release notes list every user-visible change."}.items():
        (memory / rel).write_text(f"---\nname: {rel[:-3]}\ndescription: how a release goes out\ntype: project\n---\n\n"
                                  f"{body}\n", encoding="utf-8")
    query = "how does a release go out?"
    reply = handle({"memory_dir": str(memory), "query": query, "engine": "offline", "cwd": str(repo),
                    "session_id": "s1", "record": False,
                    "env": {"MEMDIR_PATH": str(memory)}})  # the session's folder, which the server may serve
    answer = from_reply(reply)
    assert answer is not None and sorted(answer.selected) == ["feedback_release_notes.md", "project_release.md"]
    check = "Checked against the current code: still there: `push_release`"
    assert check in answer.context
    other = next(rel for rel in answer.selected if rel != "project_release.md")
    state.record(memory, "s1", [other], 100)  # the twin hook said that one meanwhile
    context = claimed_context(str(memory), "s1", query, answer, "", index_loaded=False)
    assert _paths(context, memory) == ["project_release.md"] and check in context


CAPPED = "Cover letters for Zurich roles are capped at 350 words"


def _fullest_five(memory: Path) -> tuple[list[str], str]:
    """Five of the real folder's eight longest memories that fill the most of the hook's output budget, rendered
    as recall renders them (how full depends on the folder's path, which is in every block)."""
    import itertools

    from memdir.scan import read_header
    from memdir.stages.recall.inject import render_all, units

    longest = sorted(memory.glob("*.md"), key=lambda p: -p.stat().st_size)[:8]
    headers = [read_header(path, memory) for path in longest]
    rendered = (render_all(list(five)) for five in itertools.combinations(headers, 5))
    full = max(rendered, key=units)
    return _paths(full, memory), full


@pytest.mark.parametrize("session", ["s1", None])
def test_a_relevant_decision_is_not_crowded_out_by_five_long_memories(real_folder, session):
    from memdir.decision_context import decisions_block
    from memdir.entry.prompt_claim import claimed_context
    from memdir.entry.recall_race import Answer
    from memdir.scan import read_header
    from memdir.stages.recall.inject import units

    memory, project = real_folder
    journal = str(decisions_dir(memory, project, compat=False) / C.DECISIONS_JOURNAL)
    append(decisions_dir(memory, project, compat=False),
           [Decision(kind="decision", what=CAPPED, why="reviewers skim", entities=["Zurich", "cover letter"],
                     confidence=0.9)])
    five, full = _fullest_five(memory)
    block = decisions_block(journal, keep=lambda records: [r for r in records if r["content"]["what"] == CAPPED])[0]
    assert units(full) + 2 + units(block) > C.HOOK_OUTPUT_BUDGET  # no room left for the decision as it was
    prompt = "tighten the cover letter for the Zurich role"
    context = claimed_context(str(memory), session, prompt, Answer(full, five, "local"), journal, index_loaded=False)
    assert CAPPED in context and units(context) <= C.HOOK_OUTPUT_BUDGET
    assert _paths(context, memory) == five  # every memory still there, with its header and description
    assert all(read_header(memory / rel, memory).description[:60] in context for rel in five)
