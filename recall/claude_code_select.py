"""The recall selector through the user's own Claude Code login: the same question as the API
selector, answered as structured output (`--json-schema`), with no tools at all.

A CLI start costs seconds, so the prompt hook does not use it (it stays within its budget with the
offline answer); `memdir recall --engine claude-code` and evals do.
"""

from __future__ import annotations

from memdir import claude_code as cc, constants as C
from memdir.config import Settings
from memdir.paths import config_home
from memdir.scan import Header
from memdir.stages.recall.llm_select import EFFORT, LLMSelection, Selection, UnusableAnswer, request_messages


def select_claude_code(query: str, candidates: list[Header], tools: list[str], settings: Settings,
                       transport=None) -> LLMSelection:
    if not candidates:
        return LLMSelection([])
    system, messages = request_messages(query, candidates, tools, settings.recall_max)
    opts = cc.options(system=system, model=settings.recall_model, effort=EFFORT,
                      max_turns=C.CLAUDE_CODE_RECALL_MAX_TURNS, budget_usd=C.CLAUDE_CODE_RECALL_MAX_BUDGET_USD,
                      cwd=config_home() / "memdir" / "run" / "claude-code", tools=[],
                      output_schema=Selection.model_json_schema())
    session = cc.run_session(messages[0]["content"], opts, timeout=C.CLAUDE_CODE_RECALL_TIMEOUT_SECONDS,
                             transport=transport)
    if session.is_error or session.subtype != "success":
        raise UnusableAnswer(f"the claude-code session ended with {session.subtype}")
    try:
        parsed = Selection.model_validate(session.structured_output)
    except ValueError:
        raise UnusableAnswer("no parsable selection in the structured output") from None
    by_path = {h.rel_path: h for h in candidates}
    chosen = [by_path[n.strip()] for n in parsed.selected_memories if n.strip() in by_path]
    unknown = [n for n in parsed.selected_memories if n.strip() not in by_path]
    return LLMSelection(list(dict.fromkeys(chosen))[: settings.recall_max], unknown, session.usage, session.cost_usd)
