"""The `claude-code` engine's client: the user's own `claude` CLI and its login, driven through
the Claude Agent SDK (an optional extra: `pip install 'memdir[claude-code]'`).

Why the SDK and not `claude -p` by hand: the SDK speaks the CLI's control protocol, so memdir's
memory-only tools run in this process as an in-process MCP server over the very Toolbox the API
engine uses (same confinement, same read-before-write state), with no second server process and
no hand-written MCP or stream-json code. Its wheel bundles a CLI of its own (~370 MB), which is
why it is an extra and never a core dependency; memdir always points it at the user's installed
`claude` (`cli_path`), so their login and their Claude Code version are the ones used.

Every session memdir starts: no built-in tool (`tools=[]` plus an explicit deny list), only the
tools given here, no setting sources (so no hooks: memdir's own Stop hook never runs inside its
extraction session), native auto memory off, a turn cap and a budget.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import MemdirError

SERVER = "memdir"
# Claude Code's built-in tools, denied by name as well as left out of `tools`.
BUILTIN_TOOLS = ("Agent", "AskUserQuestion", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep",
                 "KillShell", "LS", "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "Skill", "SlashCommand",
                 "Task", "TodoWrite", "WebFetch", "WebSearch", "Write")


class ClaudeCodeError(RuntimeError):
    """The session ended without a usable answer (error result, budget, no result at all)."""


@dataclass
class SessionResult:
    subtype: str
    is_error: bool
    num_turns: int
    usage: dict = field(default_factory=dict)
    cost_usd: float = 0.0
    structured_output: object = None
    text: str = ""
    tool_calls: list[str] = field(default_factory=list)  # every tool name the model called, in order


def sdk():
    try:
        import claude_agent_sdk
    except ImportError:
        raise MemdirError("--engine claude-code needs the Claude Agent SDK: pip install 'memdir[claude-code]'") from None
    return claude_agent_sdk


def mcp_tools(schemas: list[dict], run) -> list:
    """In-process MCP tools from Messages-API tool schemas; `run(name, input)` -> (text, is_error)."""
    agent_sdk = sdk()
    tools = []
    for schema in schemas:
        def handler_for(name: str):
            async def handler(args: dict) -> dict:
                text, is_error = run(name, dict(args or {}))
                return {"content": [{"type": "text", "text": text or "(empty)"}], "is_error": bool(is_error)}
            return handler

        tools.append(agent_sdk.tool(schema["name"], schema.get("description", ""), schema["input_schema"])(
            handler_for(schema["name"])))
    return tools


def tool_name(name: str) -> str:
    """The name the model sees for one of memdir's tools."""
    return f"mcp__{SERVER}__{name}"


def options(*, system: str, model: str | None, effort: str | None, max_turns: int, budget_usd: float, cwd: Path,
            tools: list | None = None, output_schema: dict | None = None, env: dict | None = None):
    """ClaudeAgentOptions for one memdir session (see the module docstring for each choice)."""
    from memdir.engines import claude_cli

    agent_sdk = sdk()
    tools = tools or []
    servers = {SERVER: agent_sdk.create_sdk_mcp_server(SERVER, tools=tools)} if tools else {}
    cwd.mkdir(parents=True, exist_ok=True)
    kwargs = dict(
        tools=[], allowed_tools=[tool_name(t.name) for t in tools], disallowed_tools=list(BUILTIN_TOOLS),
        system_prompt=system, mcp_servers=servers, strict_mcp_config=True, setting_sources=[],
        permission_mode="dontAsk", max_turns=max_turns, max_budget_usd=budget_usd, model=model, effort=effort,
        cli_path=claude_cli(env), cwd=str(cwd),
        env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1", "MEMDIR_ENGINE": "offline"},  # no native memory, no recursion
    )
    if output_schema is not None:
        kwargs["output_format"] = {"type": "json_schema", "schema": output_schema}
    return agent_sdk.ClaudeAgentOptions(**kwargs)


async def _collect(prompt: str, opts, transport) -> SessionResult:
    agent_sdk = sdk()
    result: SessionResult | None = None
    calls: list[str] = []
    texts: list[str] = []
    async for message in agent_sdk.query(prompt=prompt, options=opts, transport=transport):
        if isinstance(message, agent_sdk.AssistantMessage):
            for block in message.content:
                if isinstance(block, agent_sdk.ToolUseBlock):
                    calls.append(block.name)
                elif isinstance(block, agent_sdk.TextBlock) and block.text.strip():
                    texts.append(block.text)
        elif isinstance(message, agent_sdk.ResultMessage):
            usage = {k: int(v) for k, v in (message.usage or {}).items() if isinstance(v, (int, float))}
            result = SessionResult(message.subtype, bool(message.is_error), int(message.num_turns or 0), usage,
                                   float(message.total_cost_usd or 0.0), message.structured_output,
                                   message.result or "\n".join(texts), calls)
    if result is None:
        raise ClaudeCodeError("the claude CLI ended without a result")
    result.tool_calls = calls
    return result


def run_session(prompt: str, opts, *, timeout: float, transport=None) -> SessionResult:
    """Run one session to its result (sync wrapper; the CLI is a child process of this one)."""
    async def bounded():
        return await asyncio.wait_for(_collect(prompt, opts, transport), timeout)

    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(bounded())
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:  # called from async code (batch): a loop of its own
            return pool.submit(lambda: asyncio.run(bounded())).result()
    except TimeoutError:
        raise ClaudeCodeError(f"the claude CLI did not finish within {timeout:.0f}s") from None


def scratch_dir(memory_dir: Path) -> Path:
    """The session's working folder: inside memdir's own state, never the user's project."""
    return Path(os.path.abspath(memory_dir)) / ".memdir" / "claude-code"
