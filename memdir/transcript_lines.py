"""One line of a Claude Code JSONL transcript as the reader takes it: which line types hold the conversation, and
the message a line holds (SPEC §7).

Every line type is either used or skipped on purpose; types this reader does not know are counted (memdir/transcript.py
reports them as `Transcript.unknown_types`) instead of guessed at. What the user said is told apart from what the
harness put into user lines (memdir/said.py). Reading the file (backwards, bounded, rewinds cut) is memdir/transcript.py's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from memdir.record import Record
from memdir.said import ASK_TOOL, answers_of_line, queued_prompt, rejection_of_line, users_words, words_of_user_line

# Line types that make up the conversation (attachments: only a queued prompt is the user's words).
USED_TYPES = frozenset({"user", "assistant", "attachment"})
# Line types skipped on purpose: metadata, bookkeeping, hook progress. A queued prompt reaches the
# conversation as a user line or a queued_command attachment, so queue-operation is bookkeeping too.
SKIPPED_TYPES = frozenset({
    "system", "summary", "file-history-snapshot", "queue-operation", "progress", "permission-mode",
    "last-prompt", "custom-title", "ai-title", "agent-name", "tag", "pr-link", "api-request-shape",
    "api-request-blob", "api-request", "atis-latch", "cost-state", "mode", "worktree-state",
    "tools-used",  # seen with the real claude 2.1.328 (tests/realclient): the tool names a session used
})
USED_ATTACHMENTS = frozenset({"queued_command"})
SKIPPED_ATTACHMENTS = frozenset({
    "hook_success", "hook_additional_context", "hook_error", "hook_non_blocking_error", "hook_blocking_error",
    "hook_cancelled", "hook_system_message", "hook_stopped_continuation", "environment", "model",
    "deferred_tools_delta", "agent_listing_delta", "skill_listing", "instructions", "session_context", "date",
    "task_reminder", "todo_reminder", "todo", "plan_mode", "plan_mode_exit", "critical_system_reminder",
    "edited_text_file", "edited_image_file", "opened_file_in_ide", "selected_lines_in_ide", "file", "directory",
    "compact_file_reference", "nested_memory", "memory", "diagnostics", "output_style", "mcp_resource",
    "command_permissions", "token_usage", "budget_usd", "async_hook_response", "new_directory", "new_file",
    "structured_output", "ultramemory", "relevant_memories", "current_session_memory",
    # Seen with the real claude 2.1.328 (tests/realclient): the system prompt sent, commit/PR attribution.
    "prompt_snapshot", "remote_session_change",
})


class Message(Record):
    """role: "user" | "assistant"; content: API content blocks (a plain string becomes one text block).

    `said`: for user messages read from Claude Code JSONL, only what the person typed (harness text
    removed; for a rejection Claude Code recorded, the reason typed); None means "work it out from content".
    `kind`: "prompt", "rejection" (the reason typed when refusing a tool call), "answer" (answers to
    the agent's AskUserQuestion) or "queued"; None for a line of tool results, which never holds the user's words.
    """

    role: str
    content: list[dict]
    uuid: str | None = None
    timestamp: str | None = None
    message_id: str | None = None
    cwd: str | None = None
    said: str | None = None
    kind: str | None = None

    def text(self) -> str:
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text").strip()

    def user_text(self) -> str:
        """What the person typed: never tool output, harness wrappers, IDE context or summaries."""
        if self.role != "user":
            return ""
        if self.said is not None:
            return self.said
        return users_words(self.text())

    def tool_uses(self) -> list[dict]:
        return [b for b in self.content if b.get("type") == "tool_use"]


def as_blocks(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [_block(b) for b in content if b is not None]
    return []


def note_type(obj: dict, unknown: Counter) -> str | None:
    """The line's type when it can hold a message; unknown types are counted, never guessed at."""
    kind = obj.get("type")
    if not isinstance(kind, str):  # untrusted input: an odd-typed `type` is counted, never hashed
        unknown[f"(type is {type(kind).__name__})"] += 1
        return None
    if kind in USED_TYPES:
        if kind == "attachment":
            sub = (obj.get("attachment") or {}).get("type") if isinstance(obj.get("attachment"), dict) else None
            sub = sub if isinstance(sub, str) or sub is None else f"({type(sub).__name__})"
            if sub in USED_ATTACHMENTS:
                return kind
            if sub not in SKIPPED_ATTACHMENTS:
                unknown[f"attachment:{sub}"] += 1
            return None
        return kind
    if kind not in SKIPPED_TYPES:
        unknown[str(kind)] += 1
    return None


def _block(block: object) -> dict:
    """One content block with the field types every reader relies on (a transcript is untrusted input)."""
    if not isinstance(block, dict):
        return {"type": "text", "text": str(block)}
    kind = block.get("type")
    if kind == "text" and not isinstance(block.get("text"), str):
        return {**block, "text": "" if block.get("text") is None else str(block.get("text"))}
    if kind == "tool_use" and (not isinstance(block.get("input"), dict) or not isinstance(block.get("name"), str)):
        return {**block, "name": str(block.get("name")), "input": block.get("input") if isinstance(block.get("input"), dict) else {}}
    return block if isinstance(kind, str) else {**block, "type": str(kind)}


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def iso_timestamp(value: object) -> str | None:
    """ISO text as written by Claude Code; an epoch number is converted; anything else is dropped."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        from datetime import UTC, datetime

        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return None


# The model Claude Code names on the assistant lines it writes itself: API errors, "No response requested.", usage limits.
SYNTHETIC_MODEL = "<synthetic>"


def message_from_line(obj: dict, kind: str) -> Message | None:
    """A conversation message from one JSONL object, or None when it holds nothing of the conversation."""
    if obj.get("isSidechain"):
        return None
    common = {"uuid": text_or_none(obj.get("uuid")), "timestamp": iso_timestamp(obj.get("timestamp")),
              "cwd": text_or_none(obj.get("cwd"))}
    if kind == "attachment":
        origin = obj.get("origin")
        if obj.get("isMeta") or (isinstance(origin, dict) and origin.get("kind") not in (None, "human")):
            return None
        prompt = queued_prompt(obj.get("attachment") or {})
        if not prompt:
            return None
        return Message(role="user", content=[{"type": "text", "text": prompt}], said=prompt, kind="queued", **common)
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return None
    role = msg.get("role") or kind
    if not isinstance(role, str) or role not in ("user", "assistant"):
        return None
    content = as_blocks(msg.get("content"))
    if role == "assistant":
        if obj.get("isApiErrorMessage") is True or msg.get("model") == SYNTHETIC_MODEL:
            return None  # Claude Code's own notice ("Not logged in · Please run /login"): neither the model's words nor the user's
        return Message(role=role, content=content, message_id=text_or_none(msg.get("id")), **common)
    said, said_kind = words_of_user_line(obj, content)
    if not said and not any(b.get("type") == "tool_result" for b in content):
        return None  # harness text only (meta, summary, command output, IDE context): not the conversation's words
    return Message(role=role, content=content, message_id=text_or_none(msg.get("id")), said=said, kind=said_kind, **common)


def confirm_rejections(records: list[tuple[dict, Message | None]]) -> None:
    """Give a tool-result line the user's rejection reason only when Claude Code recorded the rejection
    (memdir/said.py) and the rejected tool is one whose own output could not have forged it; and the
    user's answers only when Claude Code recorded them for an AskUserQuestion call. A call not among
    the lines read (outside the window) is not known, and its result is not taken."""
    calls: dict[str, str] = {}
    for _obj, message in records:
        note_calls(message, calls)
    for obj, message in records:
        confirm_line(obj, message, calls)


def note_calls(message: Message | None, calls: dict[str, str]) -> None:
    """Add an assistant message's tool calls to `calls` (id -> tool name), the first name of an id kept."""
    if message is not None and message.role == "assistant":
        for block in message.tool_uses():
            if isinstance(block.get("id"), str):  # untrusted input: an odd-typed id is never hashed
                calls.setdefault(block["id"], block["name"])


def confirm_line(obj: dict, message: Message | None, calls: Mapping[str, str]) -> None:
    """confirm_rejections for one line, given the calls known (`calls`)."""
    if message is None or message.role != "user" or message.said:
        return
    found = rejection_of_line(obj, message.content)
    if found and found.counts(calls.get(found.tool_use_id)):
        message.said, message.kind = found.reason, "rejection"
        return
    answered = answers_of_line(obj, message.content)
    if answered and calls.get(answered.tool_use_id) == ASK_TOOL:
        message.said, message.kind = answered.text, "answer"
