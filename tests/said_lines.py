"""Transcript lines shaped exactly as Claude Code writes them, for tests of what counts as the user's words."""

from __future__ import annotations

from memdir.said import REJECTION_PREFIX

VERSION = "2.1.68"  # a Claude Code version that recorded typed rejection reasons (../shared/realdata)


def rejection_content(reason: str) -> str:
    """A tool_result's content when the user refused the call and typed `reason` (two spaces, as recorded)."""
    return f"{REJECTION_PREFIX}  {reason}"


def rejection_line(uuid: str, parent: str | None, tool_use_id: str, reason: str, **extra) -> dict:
    """A `type: user` line recording a real rejection with a typed reason."""
    content = rejection_content(reason)
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": False,
            "timestamp": "2026-03-02T10:00:00Z", "version": VERSION,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": True}]},
            "toolUseResult": f"Error: {content}", **extra}


def tool_call_line(uuid: str, parent: str | None, tool_use_id: str, name: str, tool_input: dict,
                   message_id: str | None = None) -> dict:
    """An assistant line calling one tool."""
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": False,
            "timestamp": "2026-03-02T10:00:00Z", "version": VERSION,
            "message": {"id": message_id or f"msg_{uuid}", "role": "assistant", "content": [
                {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}]}}
