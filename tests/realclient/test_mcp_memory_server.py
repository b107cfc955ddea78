"""The real MCP reference memory server (from npm) reads the decision graph memdir wrote.

Moved here from tests/test_decision_graph.py: it runs `npm install` on first use, so it belongs with the
other node/npm tests and runs only with `--realclient` (.ci/run passes it when node and npm exist).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memdir import graph
from memdir.paths import decisions_dir
from memdir.stages.extractor.capture import capture_text
from memdir.stages.extractor.decision_pipeline import flush, record
from tests.realclient import harness as H
from tests.test_decision_graph import write_memory

SERVER_PACKAGE = "@modelcontextprotocol/server-memory"
SERVER_VERSION = "2026.8.31"  # pinned: the format test must not drift with a new release


def _npm_cache() -> Path:
    """A deliberate, documented cache outside the repo, beside the pinned claude CLI's (see H.cache_root)."""
    return Path(os.environ.get("MEMDIR_NPM_CACHE") or H.cache_root() / "npm")


def _server_entry() -> Path:
    cache = _npm_cache()
    entry = cache / f"server-memory-{SERVER_VERSION}" / "node_modules" / SERVER_PACKAGE / "dist" / "index.js"
    if entry.exists():
        return entry
    # parents: dist, server-memory, @modelcontextprotocol, node_modules, server-memory-<version>. npm installs
    # into <prefix>/node_modules, so the prefix is the folder above node_modules.
    target = entry.parents[4]
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(target),
                           f"{SERVER_PACKAGE}@{SERVER_VERSION}"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "npm_config_cache": str(cache / "_npm-cache")})
    if done.returncode != 0 or not entry.exists():
        pytest.fail(f"npm install {SERVER_PACKAGE}@{SERVER_VERSION} into {target} left no {entry.name} "
                    f"(exit {done.returncode}): {done.stderr.strip()[-400:]}")
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
    links = {(r["from"], r["to"], r["relationType"]) for r in full["relations"]}
    assert ("db-choice", "analytics", "LINKS_TO") in links
    assert "MySQL" in [e["name"] for e in found["entities"]]
    assert {"from": "PostgreSQL", "to": "MySQL", "relationType": "CHOSE_OVER"} in found["relations"]
