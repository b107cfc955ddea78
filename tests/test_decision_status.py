"""`memdir status` per tier, and graceful degradation when the graph file cannot be written."""

from __future__ import annotations

import json

import pytest

from memdir import graph
from memdir.decisions import journal_path, read_journal
from memdir.paths import decisions_dir
from memdir.stages.extractor.capture import capture_text
from memdir.stages.extractor.decision_pipeline import flush, record
from memdir.store import MemoryStore
from memdir.tier_status import tier_status


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


def states(project, memory):
    return {t.tier: (t.state, t.reason) for t in tier_status(project, memory)}


def tiers(memory, project):
    return decisions_dir(memory, project, compat=False)


def test_missing_setup_is_unavailable_with_reasons(project, tmp_path, cli):
    got = states(project, tmp_path / "memory")
    assert [s for s, _ in got.values()] == ["unavailable"] * 3
    assert "nothing captured yet" in got["2 journal"][1] and "does not exist" in got["3 memory folder"][1]
    code, out, _ = cli("--cwd", str(project), "--dir", str(tmp_path / "memory"), "status", "--json")
    assert code == 1 and [t["state"] for t in json.loads(out)] == ["unavailable"] * 3
    assert not (project / ".claude").exists() and not (tmp_path / "memory").exists()  # status changes nothing


def test_healthy_then_corrupt(project, tmp_path, cli):
    memory = tmp_path / "memory"
    record(capture_text("Let's use Redis for the job queue because it is already deployed.", project="shop"),
           folder=tiers(memory, project), memory_dir=memory, flush_graph=True)
    got = states(project, memory)
    assert [s for s, _ in got.values()] == ["healthy"] * 3, got
    assert "1 decision(s)" in got["2 journal"][1] and "1 promoted decision memory" in got["3 memory folder"][1]
    code, out, _ = cli("--cwd", str(project), "--dir", str(memory), "status")
    assert code == 0 and sum(" healthy " in line for line in out.splitlines()) == 3
    with open(journal_path(tiers(memory, project)), "ab") as handle:
        handle.write(b"{not json\n")
    with open(graph.graph_path(tiers(memory, project)), "ab") as handle:
        handle.write(b'{"type": "entity", "name": "x"}\n')  # no entityType: the server would choke on it
    got = states(project, memory)
    assert got["2 journal"][0] == "degraded" and "1 corrupt line(s) skipped, 1 readable" in got["2 journal"][1]
    assert got["1 graph"][0] == "degraded" and "1 corrupt line(s)" in got["1 graph"][1]
    code, out, _ = cli("--cwd", str(project), "--dir", str(memory), "status")
    assert code == 1 and "degraded" in out


def test_deep_queue_is_degraded(project, tmp_path):
    ops = [{"action": "create_entity", "entity": {"name": f"e{i}", "entityType": "T", "observations": []}}
           for i in range(600)]
    graph.enqueue(tiers(tmp_path / "memory", project), ops)
    got = states(project, tmp_path / "memory")
    assert got["1 graph"][0] == "degraded" and "queue depth 600" in got["1 graph"][1]


@pytest.mark.parametrize("how", ["graph path is a directory", "graph path under a file"])
def test_unwritable_graph_still_journals_and_promotes(project, tmp_path, monkeypatch, how):
    memory = tmp_path / "memory"
    if how == "graph path is a directory":
        (tiers(memory, project) / "graph.jsonl").mkdir(parents=True)
    else:  # works as root too, where permission bits do not stop writes
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("")
        monkeypatch.setenv("MEMDIR_GRAPH_FILE", str(blocker / "graph.jsonl"))
    outcome = record(capture_text("We decided to use cursor-based pagination for all list endpoints.", project="shop"),
                     folder=tiers(memory, project), memory_dir=memory, flush_graph=True)
    assert len(outcome.journaled) == 1 and len(read_journal(tiers(memory, project)).decisions) == 1
    assert [p.action for p in outcome.promotions] == ["created"] and MemoryStore(memory).scan().headers
    assert outcome.errors and "cannot write the graph" in outcome.errors[0]
    assert outcome.flush.pending > 0 and graph.queue_path(tiers(memory, project)).read_text()  # nothing lost
    got = states(project, memory)
    assert got["1 graph"][0] == "degraded" and "unwritable" in got["1 graph"][1]
    assert got["2 journal"][0] == "healthy" and got["3 memory folder"][0] == "healthy"
    # once the file can be written again, the next flush delivers what waited
    if how == "graph path is a directory":
        (tiers(memory, project) / "graph.jsonl").rmdir()
    else:
        monkeypatch.delenv("MEMDIR_GRAPH_FILE")
    assert flush(tiers(memory, project), memory).error == ""
    assert "cursor-pagination" in graph.load_graph(graph.graph_path(tiers(memory, project))).entities
    assert states(project, memory)["1 graph"][0] == "healthy"
