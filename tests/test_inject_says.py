"""recall.inject.lines_say: whether a memory's shown lines already say its description, from each line's words,
as says() answers for the lines joined (the description is then left out: issue 21, each thing said once)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memdir.stages.recall.inject import lines_say, says

WORDS = ["pnpm", "install", "dependencies", "npm", "lockfile", "the", "use", "never", "数据库", "迁移", "データベース",
         "café", "naïve", "Grafana", "dashboards", "deploys", "deploy", "l'API", "e-mail", "", " ", "—", "\t"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=6),
       st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join))
def test_lines_say_what_the_joined_lines_say(lines, what):
    assert lines_say(lines, what) == says("\n".join(lines), what)


def test_a_description_split_over_lines_is_said():
    assert lines_say(["Never use npm in this repo,", "use pnpm: the lockfile"], "Never use npm; use pnpm")
    assert not lines_say(["Never use npm in this repo"], "Never use npm; use pnpm")
    assert not lines_say([], "Never use npm")
