"""Recall matches on the words that carry meaning (issue 21): filler and words common to the folder never
make a match on their own, in a memory's name, description or body."""

from __future__ import annotations

import pytest

from memdir.model import Memory
from memdir.scan import scan
from memdir.stages.recall.api import recall
from memdir.stages.recall.offline import select_offline

PNPM = Memory(name="never-use-npm-in-this-repo-use", description="Never use npm in this repo, use pnpm",
              type="feedback", body="Never use npm in this repo, use pnpm; the reason is the lockfile\n\n"
                                    "**Why:** the lockfile\n**How to apply:** apply it whenever the situation above comes up")
RECALLED = ["how do I install dependencies with pnpm", "install the dependencies"]
NOT_RECALLED = ["should I use tabs or spaces?", "rename the repo", "write a short haiku about autumn leaves"]


def _picked(folder, prompt, dense=None) -> list[str]:
    return [h.rel_path for h in recall(folder, prompt, engine="offline", record=False, dense=dense).selected]


@pytest.mark.parametrize("name", ["never-use-npm-in-this-repo-use", "use-pnpm-not-npm"])
def test_one_memory_folder_recalls_on_meaning_not_on_filler(store, name):
    """As the Stop worker saved it (the issue's name) and as a person would name it."""
    store.save(Memory(name=name, description=PNPM.description, type=PNPM.type, body=PNPM.body),
               rel_path="feedback_pnpm.md")
    for prompt in RECALLED:
        assert _picked(store.root, prompt) == ["feedback_pnpm.md"], prompt
    for prompt in NOT_RECALLED:
        assert _picked(store.root, prompt) == [], prompt


@pytest.mark.dense
def test_one_memory_folder_with_the_dense_model(store):
    from memdir.embeddings import DenseModel

    store.save(PNPM, rel_path="feedback_pnpm.md")
    model = DenseModel()
    model.embed_missing(store.root, scan(store.root).headers)
    for prompt in RECALLED:
        assert _picked(store.root, prompt, model) == ["feedback_pnpm.md"], prompt
    for prompt in NOT_RECALLED:  # "rename the repo" is 0.83 from the memory in e5's cosine
        assert _picked(store.root, prompt, model) == [], prompt


def _folder(store, count, common="pipeline"):
    """`count` memories that all say `common` (as every note of a job-search folder says "pipeline")."""
    topics = ["grafana dashboards", "resume templates", "cover letters", "linkedin outreach", "freshness gate",
              "market intelligence", "weekly rhythm", "portfolio blockers", "network graph", "session handoff"]
    for i in range(count):
        topic = topics[i % len(topics)]
        store.save(Memory(name=f"note {i}", description=f"How the {common} handles {topic} ({i})", type="project",
                          body=f"The {common} step for {topic}, variant {i}."), rel_path=f"project_note_{i}.md")


def test_a_word_common_to_the_folder_never_makes_a_match_on_its_own(store):
    _folder(store, 24)
    assert _picked(store.root, "is the pipeline running?") == []
    picked = _picked(store.root, "how does the pipeline handle market intelligence?")
    assert picked and all(rel in ("project_note_5.md", "project_note_15.md") for rel in picked)


def test_the_body_template_labels_are_not_the_memorys_words(store):
    store.save(Memory(name="Deploy freeze", description="No deploys on Fridays", type="feedback",
                      body="No deploys on Fridays.\n\n**Why:** weekend pages\n**How to apply:** every release"),
               rel_path="feedback_freeze.md")
    assert _picked(store.root, "why should I apply this?") == []
    assert _picked(store.root, "can I deploy on Friday?") == ["feedback_freeze.md"]


def test_the_job_of_a_tool_a_memory_names_matches_it(store):
    store.save(Memory(name="JS style", description="Run eslint with --max-warnings 0 before every commit",
                      type="feedback", body="Zero warnings allowed."), rel_path="feedback_eslint.md")
    store.save(Memory(name="Knitting", description="The user knits with merino yarn", type="user",
                      body="Merino yarn only."), rel_path="user_knitting.md")
    assert _picked(store.root, "fix these lint errors") == ["feedback_eslint.md"]
    assert _picked(store.root, "install the packages") == []  # yarn is also wool: not taken for npm's kin


def test_a_word_whose_stem_is_a_tools_name_is_not_that_tool(store):
    """Found by a hostile review: the tools were matched by stem, and "pipe", "pipes" and "piping" stem to pip, so a
    memory about shell pipes took the package manager's job words and was recalled to install dependencies."""
    store.save(Memory(name="Pipe logs through jq", description="Pipe the server logs through jq when showing them",
                      type="feedback", body="Readable logs."), rel_path="feedback_pipe_logs.md")
    store.save(Memory(name="Package manager", description="Use pnpm, never npm", type="feedback",
                      body="The lockfile is pnpm's."), rel_path="feedback_pnpm.md")
    assert _picked(store.root, "install the dependencies") == ["feedback_pnpm.md"]


def test_a_rare_proper_name_is_enough_a_common_one_is_not(store):
    _folder(store, 20, common="python")
    store.save(Memory(name="Agents verdict", description="Parallel agents were a net negative", type="project",
                      body="The Gemini run broke docstrings; stateless tasks only."), rel_path="project_agents.md")
    assert _picked(store.root, "what did we decide about using Gemini here?") == ["project_agents.md"]
    assert _picked(store.root, "explain what a Python decorator is") == []


def test_filler_alone_in_a_prompt_matches_nothing_even_in_a_memorys_name():
    from memdir.scan import Header

    headers = [Header("feedback_x.md", "/x/feedback_x.md", 0.0, "use-the-repo-code", "please use the code", "feedback")]
    assert select_offline("please use the repo code", headers) == []


def test_a_failing_dense_model_leaves_recall_lexical_and_says_why(store):
    class Broken:
        def similarities(self, memory_dir, query, pool):
            raise RuntimeError("model file truncated")

    store.save(PNPM, rel_path="feedback_pnpm.md")
    result = recall(store.root, RECALLED[0], engine="offline", record=False, dense=Broken())
    assert [h.rel_path for h in result.selected] == ["feedback_pnpm.md"]
    assert "dense stage failed (RuntimeError: model file truncated); lexical only" in result.debug
