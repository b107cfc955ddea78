"""Issue 22 finding 6, at the command line: distinct memories never overwrite each other.

The hostile pass saw three "remember that X is owned by Y" requests end as one live memory, `dream`
keep 296 of 600 distinct facts, and names in non-Latin scripts all become `<type>_memory.md`. Each
fact below is an input; one that is not live afterwards (its text in no memory file) counts its
bytes as lost.
"""

from __future__ import annotations

import json
from datetime import date

import pytest

from memdir.daylog import append, entry_line
from tests.hostile.conftest import run_inproc

OWNED = [f"The {x} service is owned by team {y}" for x, y in
         (("billing", "payments"), ("auth", "identity"), ("search", "discovery"))]
NAMES = ["デプロイ手順", "テスト方針", "部署流程", "测试策略", "Порядок деплоя", "Политика тестов", "سياسة الاختبار",
         "خطوات النشر"]


def _count_missing(tally, memory, facts: list[str]) -> list[str]:
    text = "\n".join(p.read_text() for p in memory.glob("*.md") if p.name != "MEMORY.md")
    missing = [f for f in facts if f not in text]
    tally.bytes_lost += sum(len(f.encode()) for f in missing)
    tally.notes += [f"fact not live: {f[:80]}" for f in missing[:5]]
    return missing


@pytest.mark.parametrize("form", ["current", "legacy"])
def test_remembered_facts_and_names_in_any_script_all_stay_live(memory, tally, monkeypatch, form):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", form)
    facts = []
    for fact in OWNED:
        run_inproc(tally, "--dir", str(memory), "remember", fact, "--type", "project")
        facts.append(fact)
    for fact in ("Deploys go through ArgoCD", "Deploys are announced in #deploys", "Deploys freeze at 4pm"):
        run_inproc(tally, "--dir", str(memory), "remember", fact, "--type", "reference", "--name", "Deploys")
        facts.append(fact)
    for name in NAMES:
        run_inproc(tally, "--dir", str(memory), "remember", f"{name}: rule {len(facts)}", "--type", "project",
                   "--name", name)
        facts.append(f"{name}: rule {len(facts)}")
    assert _count_missing(tally, memory, facts) == []
    assert not (memory / "project_memory.md").exists()
    assert len([p for p in memory.glob("*.md") if p.name != "MEMORY.md"]) == len(facts)


def test_owned_by_requests_in_a_session_stay_three_memories(memory, tally, hostile_home):
    transcript = hostile_home / "session.jsonl"
    for n, fact in enumerate(OWNED):  # one Stop per prompt, as the worker runs
        with transcript.open("a") as out:
            out.write(json.dumps({"type": "user", "uuid": f"u{n}", "sessionId": "s", "timestamp": "2026-03-02T09:00:00Z",
                                  "message": {"role": "user", "content": f"Remember that {fact[0].lower()}{fact[1:]}."}}) + "\n")
        code, _, err = run_inproc(tally, "--dir", str(memory), "extract", str(transcript), "--engine", "offline")
        assert code == 0, err
    assert _count_missing(tally, memory, [f[4:] for f in OWNED]) == []


@pytest.mark.slow
def test_dream_keeps_600_distinct_facts_live(memory, tally):
    facts = [f"The svc{i} service is owned by team t{i % 7}" for i in range(300)]
    facts += [f"Deploys of app{i} go through pipeline p{i % 5}" for i in range(300)]
    append(memory, date(2026, 3, 2), [entry_line("project", f) for f in facts])
    code, _, err = run_inproc(tally, "--dir", str(memory), "dream", "--engine", "offline")
    tally.tried += len(facts) - 1
    assert code == 0, err
    assert _count_missing(tally, memory, facts) == []
