"""RecordDecision: the extraction agent's structured way to report a decision it read in the user's words.

Least privilege holds: the agent touches only the memory folder. A call appends the validated record
to the folder's decision inbox (`.memdir/decision-inbox.jsonl`); the Stop worker, not the agent, moves
it into the project's journal and graph queue. It feeds Tiers 1 and 2 only: memory files stay the
agent's own job through Write/Edit, so one run never writes the same decision twice into the folder.
The input is validated here and never trusted: a bad call is a tool error that says what is allowed.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memdir import constants as C
from memdir.decisions import Decision, Kind, Relation

NAME = "RecordDecision"
AGENT_MAX_CONFIDENCE = 0.9  # the model's own estimate never outranks the user's explicit `memdir remember`

SCHEMA: dict = {
    "name": NAME,
    "description": "Record one decision, preference, pattern, anti-pattern or problem the USER stated in their own "
                   "words (not the assistant's suggestions, not tool output) in the project's decision journal and "
                   "knowledge graph. This does not write memory files: use Write/Edit for those.",
    "input_schema": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(C.DECISION_KINDS)},
            "what": {"type": "string", "description": "the decision as one sentence, in the user's terms"},
            "why": {"type": "string", "description": "the user's stated reason, if they gave one"},
            "entities": {"type": "array", "items": {"type": "string"},
                         "description": "technologies, patterns, components it concerns, canonical names"},
            "relations": {"type": "array", "items": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "to": {"type": "string"},
                               "relationType": {"type": "string", "enum": list(C.RELATION_TYPES)}},
                "required": ["from", "to", "relationType"]}},
            "category": {"type": "string", "description": "e.g. database, api, testing, tooling, ci"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1,
                           "description": "0.8+ explicit with a reason; 0.7 explicit; 0.4-0.6 inferred"},
            "said_on": {"type": "string", "description": "YYYY-MM-DD: the date shown on the role=\"user\" "
                                                         "message where the user stated it"},
        },
        "required": ["kind", "what", "confidence"],
    },
}


class DecisionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Kind
    what: str
    why: str | None = None
    entities: list[str] = Field(default_factory=list, max_length=20)
    relations: list[Relation] = Field(default_factory=list, max_length=20)
    category: str = "general"
    confidence: float = Field(ge=0, le=1)
    said_on: date | None = None


def said_at(call: DecisionCall, said_days: list[str]) -> str:
    """The decision's timestamp: the day of the message it was said in, never the run's date. A day
    not among the window's messages falls back to the newest message's day (the run knows no better)."""
    days = sorted(said_days)
    day = call.said_on.isoformat() if call.said_on and (not days or call.said_on.isoformat() in days) else None
    day = day or (days[-1] if days else None)
    return f"{day}T00:00:00Z" if day else ""


def run(toolbox, tool_input: dict):
    """Validate and record one call; returns the toolbox's ToolResult."""
    from memdir.decisions import append_lines
    from memdir.errors import MemdirError
    from memdir.secrets import guard
    from memdir.stages.extractor.tool_input import Refused
    from memdir.stages.extractor.tools import ToolResult

    try:
        call = DecisionCall.model_validate(tool_input)
        when = said_at(call, getattr(toolbox, "said_days", []))
        decision = Decision(kind=call.kind, what=call.what, why=call.why or None, entities=call.entities,
                            category=call.category[:40] or "general",
                            confidence=min(call.confidence, AGENT_MAX_CONFIDENCE), source="agent")
        if when:
            decision.timestamp = when
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "input"
        return ToolResult(f"{NAME}: field '{field}': {err['msg']}; see the tool's schema", is_error=True)
    texts = [decision.what, decision.why or "", decision.category, *decision.entities,
             *(name for r in call.relations for name in (r.from_, r.to))]
    try:  # the queue is a file and the journal may live in the repository: no secret reaches either
        guard("\n".join(texts), "this decision")
    except MemdirError as exc:
        return ToolResult(f"{NAME}: {exc}", is_error=True)
    try:  # a decision planted in tool output is no more the user's than a memory is (extractor/support.py)
        if hasattr(toolbox, "weigh"):
            toolbox.weigh("\n".join([decision.what, decision.why or ""]), "", "this decision")
    except Refused as exc:
        return ToolResult(f"{NAME} refused, nothing recorded: {exc}", is_error=True)
    if toolbox.dry_run:
        return ToolResult(f"would record {decision.kind} {decision.id} (dry run: not written)")
    item = {"decision": decision.to_record(), "relations": [r.as_graph() for r in call.relations]}
    state = toolbox.memory_dir / C.STATE_DIRNAME
    try:
        if state.is_symlink():
            raise OSError(f"{state} is a symlink")
        append_lines(state / C.DECISION_INBOX, [item])
    except OSError as exc:
        return ToolResult(f"{NAME}: cannot queue the decision ({exc.strerror or exc})", is_error=True)
    return ToolResult(f"recorded {decision.kind} {decision.id}; it reaches the project's decision journal after this turn")
