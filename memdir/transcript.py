"""Reading agent transcripts (SPEC §7): Claude Code JSONL, or a plain `[{role, content}]` JSON list.

JSONL is read backwards in blocks until enough messages are found, so the cost depends on how many
messages are wanted, not on the file's size (a 200 MB session costs what a 2 MB one does).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memdir.errors import MemdirError
from memdir.record import Record

BLOCK = 64 * 1024


class Message(Record):
    """role: "user" | "assistant"; content: API content blocks (a plain string becomes one text block)."""

    __slots__ = ("role", "content", "uuid", "timestamp", "message_id", "cwd")
    _defaults = {"uuid": None, "timestamp": None, "message_id": None, "cwd": None}

    def text(self) -> str:
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text").strip()

    def user_text(self) -> str:
        """What the person typed: text blocks of a user message (tool results are not authored)."""
        return self.text() if self.role == "user" else ""

    def tool_uses(self) -> list[dict]:
        return [b for b in self.content if b.get("type") == "tool_use"]


class Transcript(Record):
    """messages: oldest first. cursor_found: None when no cursor was asked for."""

    __slots__ = ("messages", "invalid_lines", "partial_last_line", "cursor_found", "session_id", "cwd")
    _defaults = {"invalid_lines": 0, "partial_last_line": False, "cursor_found": None, "session_id": None, "cwd": None}


def _as_blocks(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
    return []


def _message_from_line(obj: dict) -> Message | None:
    """A conversation message from one JSONL object, or None for metadata/injected/sidechain lines."""
    if obj.get("type") not in ("user", "assistant") or obj.get("isMeta") or obj.get("isSidechain"):
        return None
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return None
    role = msg.get("role") or obj["type"]
    if role not in ("user", "assistant"):
        return None
    return Message(
        role=role,
        content=_as_blocks(msg.get("content")),
        uuid=obj.get("uuid"),
        timestamp=obj.get("timestamp"),
        message_id=msg.get("id"),
        cwd=obj.get("cwd"),
    )


def _lines_backwards(path: Path):
    """Yield (line_bytes, is_last_line) from the end of the file, one block read at a time."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        pos = handle.tell()
        tail = b""
        first = True
        while pos > 0:
            size = min(BLOCK, pos)
            pos -= size
            handle.seek(pos)
            chunk = handle.read(size) + tail
            lines = chunk.split(b"\n")
            tail = lines.pop(0)  # may be incomplete: carried into the next (earlier) block
            for line in reversed(lines):
                if line.strip():
                    yield line, first
                    first = False
                elif first and line == b"":
                    continue
        if tail.strip():
            yield tail, first


def _merge_split(messages: list[Message]) -> list[Message]:
    """One API response may be logged over several lines sharing `message.id`: join them."""
    merged: list[Message] = []
    for m in messages:
        prev = merged[-1] if merged else None
        if prev and m.message_id and prev.message_id == m.message_id and prev.role == m.role:
            prev.content.extend(m.content)
            prev.uuid = m.uuid or prev.uuid
            prev.timestamp = m.timestamp or prev.timestamp
        else:
            merged.append(m)
    return merged


def read_jsonl_tail(path: Path, last_n: int | None = None, after_uuid: str | None = None) -> Transcript:
    """The newest `last_n` messages (after `after_uuid` when given and found), oldest first."""
    result = Transcript([], cursor_found=None if after_uuid is None else False)
    collected: list[Message] = []
    distinct_ids: set[str] = set()
    count = 0
    for raw, is_last in _lines_backwards(path):
        try:
            obj = json.loads(raw)
        except ValueError:
            if is_last:
                result.partial_last_line = True  # a session still writing its last line
            else:
                result.invalid_lines += 1
            continue
        if not isinstance(obj, dict):
            result.invalid_lines += 1
            continue
        if result.session_id is None and obj.get("sessionId"):
            result.session_id = obj.get("sessionId")
        if result.cwd is None and obj.get("cwd"):
            result.cwd = obj.get("cwd")
        if after_uuid is not None and obj.get("uuid") == after_uuid:
            result.cursor_found = True
            break
        message = _message_from_line(obj)
        if message is None:
            continue
        key = message.message_id or f"line-{id(message)}"
        if key not in distinct_ids:
            if last_n is not None and count >= last_n:
                # Still collect lines of the same split response we are in the middle of.
                if not (collected and message.message_id and collected[-1].message_id == message.message_id):
                    break
            else:
                distinct_ids.add(key)
                count += 1
        collected.append(message)
    collected.reverse()
    result.messages = _merge_split(collected)
    if last_n is not None and len(result.messages) > last_n:
        result.messages = result.messages[-last_n:]
    return result


def read_json_list(path: Path, last_n: int | None = None) -> Transcript:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as exc:
        raise MemdirError(f"{path}: not valid JSON ({exc}); expected JSONL or a [{{role, content}}] list") from None
    if not isinstance(data, list):
        raise MemdirError(f"{path}: expected a JSON list of {{role, content}} messages")
    messages: list[Message] = []
    invalid = 0
    for i, item in enumerate(data):
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            invalid += 1
            continue
        messages.append(
            Message(
                role=item["role"],
                content=_as_blocks(item.get("content")),
                uuid=item.get("uuid") or f"msg-{i}",
                timestamp=item.get("timestamp"),
            )
        )
    if last_n is not None:
        messages = messages[-last_n:]
    return Transcript(messages, invalid_lines=invalid)


def _check_regular(path: Path) -> None:
    """A FIFO or device would hang or never end a read: only regular files are transcripts."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise MemdirError(f"{path}: not a regular file; a transcript is a .jsonl or .json file")
    finally:
        os.close(fd)


def read_transcript(path: Path, last_n: int | None = None, after_uuid: str | None = None) -> Transcript:
    try:
        _check_regular(path)
        with open(path, "rb") as handle:
            start = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except FileNotFoundError:
        raise MemdirError(f"{path}: transcript not found") from None
    except OSError as exc:
        raise MemdirError(f"{path}: cannot read transcript ({exc.strerror})") from None
    if start.startswith(b"["):
        transcript = read_json_list(path, None)
        if after_uuid is not None:
            ids = [m.uuid for m in transcript.messages]
            transcript.cursor_found = after_uuid in ids
            if transcript.cursor_found:
                transcript.messages = transcript.messages[ids.index(after_uuid) + 1 :]
        if last_n is not None:
            transcript.messages = transcript.messages[-last_n:]
        return transcript
    return read_jsonl_tail(path, last_n, after_uuid)


def recent_tool_names(messages: list[Message], limit: int = 10) -> list[str]:
    """Tools the agent used most recently, newest first, without repeats."""
    names: list[str] = []
    for message in reversed(messages):
        for block in reversed(message.tool_uses()):
            name = block.get("name")
            if isinstance(name, str) and name not in names:
                names.append(name)
                if len(names) >= limit:
                    return names
    return names
