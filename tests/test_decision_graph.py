"""Tier 1: the graph in the MCP reference memory server's JSONL format, its queue, links, and the real server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memdir import graph
from memdir.paths import decisions_dir, resolve_memory_dir
from memdir.stages.extractor.capture import capture_text
from memdir.stages.extractor.decision_pipeline import flush, record

SERVER_PACKAGE = "@modelcontextprotocol/server-memory"
SERVER_VERSION = "2026.8.31"  # pinned: the format test must not drift with a new release
# A deliberate, documented cache outside the repo (tests otherwise never touch the real ~/.cache).
# Computed at import, before the per-test HOME is swapped in.
NPM_CACHE = Path(os.environ.get("MEMDIR_NPM_CACHE") or Path.home() / ".cache" / "memdir-tests" / "npm")


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


def _server_entry() -> Path:
    entry = NPM_CACHE / f"server-memory-{SERVER_VERSION}" / "node_modules" / SERVER_PACKAGE / "dist" / "index.js"
    if entry.exists():
        return entry
    target = entry.parents[3]
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(target),
                    f"{SERVER_PACKAGE}@{SERVER_VERSION}"], check=True, timeout=600,
                   env={**os.environ, "npm_config_cache": str(NPM_CACHE / "_npm-cache")})
    return entry


async def _read_back(entry: Path, graph_file: Path) -> tuple[dict, dict]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command="node", args=[str(entry)],
                                   env={"PATH": os.environ["PATH"], "MEMORY_FILE_PATH": str(graph_file)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        full = await session.call_tool("read_graph", {})
        found = await session.call_tool("search_nodes", {"query": "MySQL"})
    return json.loads(full.content[0].text), json.loads(found.content[0].text)


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                    reason="node/npm absent: the real MCP memory server cannot run here")
def test_the_real_mcp_memory_server_reads_the_graph_memdir_wrote(tmp_path):
    memory = tmp_path / "memory"
    folder = decisions_dir(memory, tmp_path / "shop", compat=False)
    write_memory(memory, "db-choice", "project", "Orders live in Postgres; see [[analytics]].")
    record(capture_text("We chose Postgres over MySQL for orders because we need JSONB.", project="shop")
           + capture_text("I prefer pnpm over npm.", project="shop"),
           folder=folder, memory_dir=None)
    assert flush(folder, memory).error == ""
    ours = graph.load_graph(graph.graph_path(folder)).as_dict()
    full, found = asyncio.run(asyncio.wait_for(_read_back(_server_entry(), graph.graph_path(folder)), 120))
    assert full == ours  # every entity and relation, exactly as memdir wrote them
    assert ("db-choice", "analytics", "LINKS_TO") in {(r["from"], r["to"], r["relationType"]) for r in full["relations"]}
    assert "MySQL" in [e["name"] for e in found["entities"]]
    assert {"from": "PostgreSQL", "to": "MySQL", "relationType": "CHOSE_OVER"} in found["relations"]
