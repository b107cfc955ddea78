"""The MCP server's stdio loop (memdir.entry.mcp_stdio): end of input waits for the requests still running, but
not for one the client cancelled, and not past its drain timeout."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60  # generous: two cores shared by several test runs

# A server with one tool that never answers, served by the loop under test with the drain timeout given.
SERVER = """
import sys, anyio
from mcp.server.mcpserver import MCPServer
from memdir.entry.mcp_stdio import serve_stdio_answering_all

server = MCPServer("t")

@server.tool()
async def hang() -> str:
    await anyio.sleep_forever()
    return "never"

anyio.run(serve_stdio_answering_all, server, float(sys.argv[1]))
"""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
HANG = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}


def _piped(drain_timeout_s: float, *messages: dict) -> tuple[dict, float]:
    """The answers by request id to `messages` piped in and followed by end of input, and the seconds the server
    took to exit."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", SERVER, str(drain_timeout_s)], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT, input="".join(json.dumps(m) + "\n" for m in messages))
    assert proc.returncode == 0, proc.stderr
    return {m["id"]: m for m in map(json.loads, proc.stdout.splitlines()) if "id" in m}, time.monotonic() - started


def test_a_request_that_never_finishes_holds_the_server_only_until_the_drain_timeout():
    answers, took = _piped(1.0, INITIALIZE, INITIALIZED, HANG)
    assert answers[1]["result"]["serverInfo"]["name"] == "t"
    assert 1.0 <= took < TIMEOUT  # waited for the hanging call, then gave up on it and exited


def test_a_request_the_client_cancelled_is_not_waited_for():
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    answers, took = _piped(TIMEOUT * 2, INITIALIZE, INITIALIZED, HANG, cancel)
    assert 1 in answers and 2 not in answers
    assert took < TIMEOUT / 2  # not the drain timeout: nothing the client still waits for was running
