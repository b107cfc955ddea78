"""Recall without any cosine (no model, the recall server down, no vectors yet): words must stand on their own
(issue 21, offline.stands_on_words). The dense path's bar is not changed (tests/test_recall_bars.py)."""

from __future__ import annotations

from memdir.scan import Header
from memdir.stages.recall.explain import explain
from memdir.stages.recall.lexical import COMMON_MIN_MEMORIES
from memdir.stages.recall.offline import select_offline
from memdir.words import chance_words

# A folder big enough to say which words are rare: each other memory about its own topic.
_TOPICS = ["kafka offsets", "terraform state", "grafana alerts", "pytest fixtures", "docker layers", "nginx proxy",
           "redis eviction", "postgres vacuum", "celery retries", "sentry releases", "helm charts", "vault tokens",
           "airflow sensors", "jaeger traces", "webpack chunks", "eslint plugins", "mypy plugins", "sqlite locks",
           "nomad jobs", "consul checks", "varnish purges", "rabbitmq queues"]


def _other_memories() -> list[Header]:
    return [Header(f"project_{i}.md", f"/m/project_{i}.md", 0.0, topic.title(), f"How we run {topic}", "project",
                   excerpt=f"Notes on {topic} for the team.") for i, topic in enumerate(_TOPICS)]


def _picked(query: str, headers: list[Header]) -> list[str]:
    chosen = [h.rel_path for h in select_offline(query, headers)]
    assert chosen == [v.header.rel_path for v in explain(query, headers) if v.passed]  # the ui says the same
    return chosen


def test_single_letters_bare_numbers_and_extensions_are_chance_words():
    assert chance_words("rename the variable x to count in utils.py") == {"x", "py"}
    assert chance_words("speed up the CI pipeline, it takes 20 minutes") == {"20"}
    assert chance_words("Claude Code warns that CLAUDE.md is too big. Cut it down") == {"md"}
    assert chance_words("how do I center a div with flexbox") == {"i", "a"}  # stop words anyway


def test_chance_words_alone_make_no_match_without_the_model():
    note = Header("project_session.md", "/m/project_session.md", 0.0, "Session 12", "What we did on Tuesday",
                  "project", excerpt="Set x = 3 in setup.py, then ran the py tests; 20 of them passed.")
    big = [*_other_memories(), note]
    assert len(big) >= COMMON_MIN_MEMORIES
    assert _picked("rename the variable x in utils.py", big) == []
    assert _picked("the 20 py", big) == []
    # In a folder too small to say what is rare, they do not count either.
    assert _picked("rename the variable x in utils.py", [note]) == []
    # A word of its own still does.
    assert _picked("what did we do in session 12 with setup.py?", [note]) == ["project_session.md"]


def test_rare_words_scattered_in_a_body_match_only_when_they_carry_most_of_the_prompt():
    body = ("Long session. Talked to the recruiter about venture capital and the studio; then the trip to "
            "Portugal came up, and the flexbox layout of the portfolio page.")
    note = Header("project_session.md", "/m/project_session.md", 0.0, "Session 12", "What we did on Tuesday",
                  "project", excerpt=body)
    big = [*_other_memories(), note]
    # Two rare words of a longer prompt, in the body only: chance.
    assert _picked("how do I center a flexbox layout in css grid", big) == []
    # The same words named in its description: the memory is about them.
    titled = Header("project_layout.md", "/m/project_layout.md", 0.0, "Portfolio page",
                    "The flexbox layout of the portfolio page", "project", excerpt=body)
    assert _picked("how do I center a flexbox layout in css grid", [*_other_memories(), titled]) == [
        "project_layout.md"]
    # Words that carry most of the prompt's information are a match wherever they are.
    assert _picked("venture capital trip to Portugal", big) == ["project_session.md"]
