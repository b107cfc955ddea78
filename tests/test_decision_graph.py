"""Tier 1: the graph in the MCP reference memory server's JSONL format, its queue and links.

That the real server reads it: tests/realclient/test_mcp_memory_server.py (node and npm; --realclient)."""

from __future__ import annotations

import json
from pathlib import Path

from memdir import graph
from memdir.paths import decisions_dir, resolve_memory_dir
from memdir.stages.extractor.capture import capture_text
from memdir.stages.extractor.decision_pipeline import flush, record


def write_memory(root: Path, slug: str, mtype: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{slug}.md").write_text(f"---\nname: {slug}\ndescription: about {slug}\nmetadata:\n  type: {mtype}\n---\n\n{body}\n")


def test_queue_is_flushed_into_a_deduplicated_graph(tmp_path):
    folder = decisions_dir(tmp_path / "memory", tmp_path / "shop", compat=False)
    for text in ("Let's use PostgreSQL for analytics because we need JSONB.",
                 "We chose Postgres over MySQL for orders.",
                 "We chose Postgres over MySQL for orders."):  # captured twice: no duplicate anything
        record(capture_text(text, project="shop"), folder=folder, memory_dir=None)
    queued = graph.queue_path(folder).read_text().splitlines()
    assert queued and all(json.loads(line)["action"] in ("create_entity", "create_relation") for line in queued)
    assert not graph.graph_path(folder).exists()  # nothing reaches the graph before the Stop worker
    result = flush(folder, None)
    assert result.error == "" and result.changed > 0
    assert graph.queue_path(folder).read_text() == ""
    lines = [json.loads(line) for line in graph.graph_path(folder).read_text().splitlines()]
    names = [e["name"] for e in lines if e["type"] == "entity"]
    rels = [(r["from"], r["to"], r["relationType"]) for r in lines if r["type"] == "relation"]
    assert len(names) == len(set(names)) and len(rels) == len(set(rels))
    assert {("shop", "PostgreSQL", "USES"), ("PostgreSQL", "MySQL", "CHOSE_OVER")} <= set(rels)
    postgres = next(e for e in lines if e.get("name") == "PostgreSQL")
    assert postgres["entityType"] == "Technology" and len(postgres["observations"]) == 2
    assert set(lines[0]) == {"type", "name", "entityType", "observations"}
    again = flush(folder, None)
    assert again.changed == 0


def test_memory_file_links_become_relations(tmp_path):
    memory = tmp_path / "memory"
    write_memory(memory, "build-tooling", "feedback", "Use pnpm. See [[ci-setup]] and [[release|how we release]].")
    write_memory(memory, "ci-setup", "project", "CI runs on every push, tested locally with act.")
    folder = decisions_dir(memory, tmp_path / "proj", compat=False)
    assert flush(folder, memory).applied == 0  # the project does not use the decision tiers yet
    assert not folder.exists()
    folder.mkdir(parents=True)
    result = flush(folder, memory)
    assert result.error == ""
    loaded = graph.load_graph(graph.graph_path(folder))
    assert loaded.entities["build-tooling"]["entityType"] == "Memory:feedback"
    assert ("build-tooling", "ci-setup", "LINKS_TO") in loaded.relations
    assert ("build-tooling", "release", "LINKS_TO") in loaded.relations
    write_memory(memory, "build-tooling", "feedback", "Use pnpm. See [[ci-setup]].")  # a link removed by hand
    assert flush(folder, memory).changed
    loaded = graph.load_graph(graph.graph_path(folder))
    assert ("build-tooling", "release", "LINKS_TO") not in loaded.relations
    assert ("build-tooling", "ci-setup", "LINKS_TO") in loaded.relations
    assert flush(folder, memory).changed == 0  # nothing new: the file is not rewritten


def test_graph_search_show_export_cli(tmp_path, cli, monkeypatch):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    folder = decisions_dir(resolve_memory_dir(project).path, project, compat=False)  # where the CLI looks
    record(capture_text("We chose Postgres over MySQL for orders.", project="shop"), folder=folder,
           memory_dir=None, flush_graph=True)
    code, out, _ = cli("--cwd", str(project), "graph", "search", "mysql")
    assert code == 0 and "MySQL  (Technology)" in out and "PostgreSQL -CHOSE_OVER-> MySQL" in out
    code, out, _ = cli("--cwd", str(project), "graph", "show", "postgresql", "--json")
    shown = json.loads(out)
    assert [e["name"] for e in shown["entities"]] == ["PostgreSQL"] and shown["relations"]
    code, out, _ = cli("--cwd", str(project), "graph", "export")
    assert out == graph.graph_path(folder).read_text()
    code, _, err = cli("--cwd", str(project), "graph", "show", "Oracle")
    assert code == 2 and "no entity named 'Oracle'" in err
