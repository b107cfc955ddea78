"""A correction's **How to apply:** line says something the rule does not (issue 20: "follow this in future work
instead of the corrected behaviour" was filler on every correction, and `memdir demo` showed it)."""

from __future__ import annotations

from datetime import date

import pytest

from memdir.entry.demo import run_demo
from memdir.stages.extractor.drafts import Draft
from memdir.stages.extractor.filing import to_memory


def _how(rule: str, kind: str = "correction") -> str:
    body = to_memory(Draft("feedback", rule, kind=kind, correction=kind == "correction"), date(2026, 3, 2)).body
    return body.split("**How to apply:** ", 1)[1]


@pytest.mark.parametrize(("rule", "how"), [
    ("Don't mock the database in integration tests", "check any work in integration tests against this before handing it back"),
    ("Never push on main", "check any work on main against this before handing it back"),
    ("Use pnpm instead of npm", "use pnpm wherever npm would have been used"),
    ("Use pnpm, not npm", "use pnpm wherever npm would have been used"),
    ("No uses npm", "check new work against this before handing it back"),
])
def test_a_correction_says_where_or_what_replaces_what(rule, how):
    assert _how(rule) == how


def test_no_corrected_behaviour_filler_on_a_confirmation_or_a_correction():
    for kind in ("correction", "confirmation"):
        assert "corrected behaviour" not in _how("Keep the tests next to the code", kind)


def test_the_demo_shows_no_filler_how_line(tmp_path, capsys):
    assert run_demo(tmp_path / "demo") == 0
    out = capsys.readouterr().out
    assert "corrected behaviour" not in out
    assert "**How to apply:** check any work in integration tests against this before handing it back" in out
