"""Extraction through the user's own Claude Code login (`--engine claude-code`).

The same system prompt, first message and memory-only Toolbox as the API engine; the loop is the
CLI's. Writes land through the Toolbox, so the store's no-loss rules and the read-before-write
check hold exactly as on the API path.
"""

from __future__ import annotations

from datetime import date

from memdir import claude_code as cc, constants as C
from memdir.config import Settings
from memdir.stages.extractor.agent import EFFORT, AgentRun, StopReasonError, build_request
from memdir.stages.extractor.tools import TOOL_SCHEMAS, Toolbox
from memdir.transcript import Message


def run_claude_code_agent(messages: list[Message], toolbox: Toolbox, settings: Settings, *, today: date,
                          mode: str = "topics", first_message: str | None = None, transport=None,
                          part=None) -> AgentRun:
    """One extraction session; raises ClaudeCodeError / StopReasonError when it must not count as done."""
    from memdir.prompts import render

    request = build_request(messages, toolbox.memory_dir, settings, today, mode=mode, daily_log=toolbox.daily_log,
                            first_message=first_message, part=part)
    names = [cc.tool_name(s["name"]) for s in TOOL_SCHEMAS]
    system = request["system"][0]["text"] + "\n\n" + render("claude_code_tools.j2", names=names)
    prompt = "\n\n".join(b["text"] for b in request["messages"][0]["content"])

    def run_tool(name: str, tool_input: dict) -> tuple[str, bool]:
        outcome = toolbox.run(name, tool_input)
        return outcome.content, outcome.is_error

    opts = cc.options(system=system, model=settings.extract_model, effort=EFFORT,
                      max_turns=min(settings.extract_max_turns + 1, C.CLAUDE_CODE_MAX_TURNS),
                      budget_usd=C.CLAUDE_CODE_MAX_BUDGET_USD, cwd=cc.scratch_dir(toolbox.memory_dir),
                      tools=cc.mcp_tools(TOOL_SCHEMAS, run_tool))
    session = cc.run_session(prompt, opts, timeout=C.CLAUDE_CODE_TIMEOUT_SECONDS, transport=transport)
    run = AgentRun(turns=session.num_turns, usage=session.usage, stop_reason=session.subtype,
                   final_text=session.text, cost_usd=session.cost_usd, model=settings.extract_model)
    if session.subtype == "error_max_turns":
        run.hit_turn_cap = True  # what was written stands, as with the API engine's cap
    elif session.is_error or session.subtype != "success":
        raise StopReasonError(f"the claude-code session ended with {session.subtype}"
                              f"{': ' + session.text[:200] if session.text else ''}", run)
    return run
