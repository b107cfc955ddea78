"""A scripted stand-in for the `claude` CLI on the Claude Agent SDK's transport.

It speaks the CLI side of the SDK's control protocol (stream-json lines): answers `initialize`,
takes the user's prompt, then plays a script of model turns. A turn's tool calls are made the way
the real CLI makes calls to in-process MCP tools: a `control_request` of subtype `mcp_message`
carrying a JSON-RPC `tools/call`, answered by the SDK running memdir's handler in this process.
Everything the SDK writes is recorded in `written`, and the options it was built with are checked
separately against the real SubprocessCLITransport command line.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from claude_agent_sdk import Transport


class ScriptedCLI(Transport):
    def __init__(self, turns: list[list[dict]], *, result: dict | None = None, server: str = "memdir") -> None:
        """turns: per model turn, its content blocks; a tool_use block {"name", "input"} is called
        through the SDK's MCP bridge before the next turn."""
        self.turns, self.result, self.server = turns, result or {}, server
        self.written: list[dict] = []
        self.tool_results: list[dict] = []
        self.prompt: str | None = None
        self._out: asyncio.Queue = asyncio.Queue()
        self._pending: dict[str, asyncio.Future] = {}
        self._ready = False
        self._ids = 0
        self._mcp_ready = False
        self.listed_tools: list[str] = []

    async def connect(self) -> None:
        self._ready = True

    def is_ready(self) -> bool:
        return self._ready

    async def end_input(self) -> None:
        pass

    async def close(self) -> None:
        self._ready = False

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if not line.strip():
                continue
            message = json.loads(line)
            self.written.append(message)
            kind = message.get("type")
            if kind == "control_request" and message["request"].get("subtype") == "initialize":
                await self._out.put({"type": "control_response", "response": {
                    "subtype": "success", "request_id": message["request_id"], "response": {"commands": []}}})
            elif kind == "control_response":
                future = self._pending.pop(message["response"]["request_id"], None)
                if future is not None:
                    future.set_result(message["response"])
            elif kind == "user":
                content = message["message"]["content"]
                self.prompt = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                asyncio.get_running_loop().create_task(self._play())

    async def _mcp(self, message: dict) -> dict:
        self._ids += 1
        request_id = f"cli_req_{self._ids}"
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._out.put({"type": "control_request", "request_id": request_id, "request": {
            "subtype": "mcp_message", "server_name": self.server, "message": message}})
        response = await asyncio.wait_for(future, 10)
        return response["response"]["mcp_response"]

    async def _call_tool(self, name: str, arguments: dict) -> dict:
        if not self._mcp_ready:  # the MCP handshake the real CLI makes before its first call
            await self._mcp({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "claude-code", "version": "2.1.328"}}})
            await self._mcp({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed = await self._mcp({"jsonrpc": "2.0", "id": 1000, "method": "tools/list"})
            self.listed_tools = [t["name"] for t in listed["result"]["tools"]]
            self._mcp_ready = True
        reply = await self._mcp({"jsonrpc": "2.0", "id": self._ids + 1, "method": "tools/call",
                                 "params": {"name": name, "arguments": arguments}})
        if "result" not in reply:
            raise AssertionError(f"the SDK answered the tool call with {reply}")
        return reply["result"]

    async def _play(self) -> None:
        for n, blocks in enumerate(self.turns):
            content = []
            for block in blocks:
                if block["type"] == "tool_use":
                    content.append({"type": "tool_use", "id": f"toolu_{n}_{len(content)}",
                                    "name": f"mcp__{self.server}__{block['name']}", "input": block["input"]})
                else:
                    content.append(block)
            await self._out.put({"type": "assistant", "session_id": "fake-session", "message": {
                "id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
                "content": content, "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
                "usage": {"input_tokens": 100, "output_tokens": 20}}})
            for block in blocks:
                if block["type"] == "tool_use":
                    self.tool_results.append(await self._call_tool(block["name"], block["input"]))
        result = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 10, "duration_api_ms": 8,
                  "num_turns": len(self.turns), "session_id": "fake-session", "total_cost_usd": 0.0123,
                  "usage": {"input_tokens": 100 * len(self.turns), "output_tokens": 20 * len(self.turns),
                            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
                  "result": "done", **self.result}
        await self._out.put(result)
        await self._out.put(None)

    async def read_messages(self):
        while True:
            message = await self._out.get()
            if message is None:
                return
            yield message


def command_line(opts: Any) -> list[str]:
    """The argv the real SDK would start the CLI with for these options."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    return SubprocessCLITransport(prompt="x", options=opts)._build_command()
