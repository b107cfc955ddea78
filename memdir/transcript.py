"""Reading agent transcripts (SPEC §7): Claude Code JSONL, or a plain `[{role, content}]` JSON list.

JSONL is read backwards in blocks until enough messages are found, so the cost depends on how many
messages are wanted, not on the file's size (a 200 MB session costs what a 2 MB one does).

Only the real conversation is read: a rewind leaves an abandoned branch in the file (two prompts
with the same `parentUuid`); the earlier prompt and everything under it are left out. What one line holds (which
types are the conversation, the message, the user's words told apart from the harness's) is memdir/transcript_lines.py's;
types that reader does not know are counted (`Transcript.unknown_types`) instead of guessed at.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter, deque
from pathlib import Path
from typing import BinaryIO

from memdir.constants import RESPONSE_BLOCKS_MAX, TRANSCRIPT_LINE_MAX_BYTES
from memdir.errors import MemdirError
from memdir.record import Record, field
from memdir.transcript_json_list import json_list_messages
from memdir.transcript_lines import (
    Message,
    confirm_rejections,
    message_from_line,
    note_type,
)

BLOCK = 64 * 1024


class Transcript(Record):
    """messages: oldest first. cursor_found: None when no cursor was asked for.

    unknown_types: line types (and `attachment:<type>`) this reader neither uses nor skips on purpose.
    off_branch_lines: lines of abandoned branches (rewinds) and sidechains that were not read.
    unread_bytes: what a byte budget left unread at the start of the file (`memdir batch` reads it all).
    """

    messages: list[Message]
    invalid_lines: int = 0
    partial_last_line: bool = False
    cursor_found: bool | None = None
    session_id: str | None = None
    cwd: str | None = None
    unknown_types: Counter[str] = field(default_factory=Counter)
    off_branch_lines: int = 0
    unread_bytes: int = 0  # bytes before the window that the read budget left unread (0: read to the start)
    oversized_lines: int = 0  # lines over TRANSCRIPT_LINE_MAX_BYTES, skipped without parsing


class _Budget:
    """How far back a backward read may go, and what it left out."""

    def __init__(self, max_bytes: int | None, line_max: int) -> None:
        self.max_bytes = max_bytes
        self.line_max = line_max
        self.unread = 0
        self.oversized = 0


def _lines_backwards(path: Path, budget: _Budget):
    """Yield (line_bytes, is_last_line) from the end of the file, one block read at a time.

    Memory stays bounded: a line longer than `budget.line_max` is skipped (counted, never joined in
    memory), and reading stops at the first line boundary past `budget.max_bytes` from the end.
    """
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        pos = handle.tell()
        end = pos
        tail = b""
        skipping = False  # inside an oversized line: drop bytes until its start (the previous newline)
        first = True
        while pos > 0:
            if budget.max_bytes is not None and end - pos >= budget.max_bytes:
                budget.unread = pos + len(tail)
                return
            size = min(BLOCK, pos)
            pos -= size
            handle.seek(pos)
            chunk = handle.read(size)
            if skipping:
                cut = chunk.rfind(b"\n")
                if cut < 0:
                    continue
                chunk, skipping = chunk[: cut + 1], False
            chunk += tail
            lines = chunk.split(b"\n")
            tail = lines.pop(0)  # may be incomplete: carried into the next (earlier) block
            if len(tail) > budget.line_max:
                tail, skipping = b"", True
                budget.oversized += 1
            for line in reversed(lines):
                if len(line) > budget.line_max:
                    budget.oversized += 1
                    first = False
                elif line.strip():
                    yield line, first
                    first = False
                elif first and line == b"":
                    continue
        if tail.strip():
            yield tail, first


def continues(prev: Message | None, message: Message) -> bool:
    """One API response may be logged over several lines sharing `message.id`: is `message` the next of `prev`'s?
    (Not past RESPONSE_BLOCKS_MAX blocks: a joined message never grows with the file.)"""
    return bool(prev and message.message_id and prev.message_id == message.message_id and prev.role == message.role
                and len(prev.content) < RESPONSE_BLOCKS_MAX)


def join_into(prev: Message, message: Message) -> None:
    prev.content.extend(message.content)
    prev.uuid = message.uuid or prev.uuid
    prev.timestamp = message.timestamp or prev.timestamp


def _merge_split(messages: list[Message]) -> list[Message]:
    """Lines of one API response (see `continues`) joined into one message."""
    merged: list[Message] = []
    for m in messages:
        if merged and continues(merged[-1], m):
            join_into(merged[-1], m)
        else:
            merged.append(m)
    return merged


def _abandoned(records: list[tuple[dict, Message | None]]) -> set[str]:
    return rewound([link(obj, message) for obj, message in records])


def link(obj: dict, message: Message | None) -> tuple[str, str | None, bool]:
    """What `rewound` needs of one line: (uuid, parentUuid when a string, is a prompt that names its parent)."""
    parent = obj.get("parentUuid")
    prompt = (message is not None and message.kind == "prompt" and "parentUuid" in obj
              and isinstance(parent, (str, type(None))))
    return obj["uuid"], parent if isinstance(parent, str) else None, prompt


def rewound(links: list[tuple[str, str | None, bool]]) -> set[str]:
    """uuids of rewound branches: when several prompts share one parent, all but the last were rewound,
    and so is everything that descends from them. (Following only the chain from the last line would
    also drop parallel tool results and lines Claude Code parents oddly, so the rewind is what is cut.)"""
    prompts: dict[object, list[str]] = {}
    for uuid, parent, prompt in links:
        if prompt:
            prompts.setdefault(parent, []).append(uuid)
    dead = {uuid for siblings in prompts.values() for uuid in siblings[:-1]}
    if not dead:
        return dead
    children: dict[str, list[str]] = {}  # a child can be logged before its parent, so the order is not used
    for uuid, parent, _prompt in links:
        if parent is not None:
            children.setdefault(parent, []).append(uuid)
    todo = list(dead)
    while todo:  # each uuid is taken once: a cycle in parentUuid ends
        for child in children.get(todo.pop(), ()):
            if child not in dead:
                dead.add(child)
                todo.append(child)
    return dead


def read_jsonl_tail(
    path: Path, last_n: int | None = None, after_uuid: str | None = None, max_bytes: int | None = None
) -> Transcript:
    """The newest `last_n` messages (after `after_uuid` when given and found), oldest first.

    Lines of rewound branches, sidechains and harness-only user lines are left out. With `max_bytes`,
    no more than about that much of the file's end is read (`unread_bytes` says what was left).
    """
    result = Transcript([], cursor_found=None if after_uuid is None else False)
    records: list[tuple[dict, Message | None]] = []
    distinct_ids: set[str] = set()
    budget = _Budget(max_bytes, TRANSCRIPT_LINE_MAX_BYTES)
    for raw, is_last in _lines_backwards(path, budget):
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            if is_last:
                result.partial_last_line = True  # a session still writing its last line
            else:
                result.invalid_lines += 1
            continue
        if not isinstance(obj, dict):
            result.invalid_lines += 1
            continue
        kind = note_type(obj, result.unknown_types)
        uuid = obj.get("uuid")
        if after_uuid is not None and uuid == after_uuid:
            result.cursor_found = True
            break
        if not isinstance(uuid, str):
            continue  # metadata lines stand outside the conversation (and an odd-typed id is not trusted)
        if obj.get("isSidechain"):
            result.off_branch_lines += 1  # an old-layout subagent line: not the main conversation
            continue
        if result.session_id is None and isinstance(obj.get("sessionId"), str) and obj.get("sessionId"):
            result.session_id = obj.get("sessionId")
        if result.cwd is None and isinstance(obj.get("cwd"), str) and obj.get("cwd"):
            result.cwd = obj.get("cwd")
        message = message_from_line(obj, kind) if kind else None
        if message is not None and last_n is not None:
            key = message.message_id or f"line-{uuid}"
            if key not in distinct_ids and len(distinct_ids) >= last_n:
                break
            distinct_ids.add(key)
        records.append((obj, message))
    result.unread_bytes, result.oversized_lines = budget.unread, budget.oversized
    records.reverse()
    confirm_rejections(records)
    dead = _abandoned(records)
    result.off_branch_lines += sum(1 for obj, _m in records if obj["uuid"] in dead)
    collected = [m for obj, m in records if m is not None and obj["uuid"] not in dead]
    result.messages = _merge_split(collected)
    if last_n is not None and len(result.messages) > last_n:
        result.messages = result.messages[-last_n:]
    return result


def read_json_list(path: Path, last_n: int | None = None, after_uuid: str | None = None) -> Transcript:
    """A JSON-list transcript's messages (after the first `after_uuid` when given and found; the newest `last_n`),
    read one item at a time: only the messages kept are held."""
    invalid = [0]
    kept: deque[Message] = deque(maxlen=last_n or None)  # as [-0:] kept them all
    found = None if after_uuid is None else False
    for message in json_list_messages(path, invalid):
        if not found and message.uuid == after_uuid:
            found = True
            kept.clear()
            continue
        kept.append(message)
    return Transcript(list(kept), invalid_lines=invalid[0], cursor_found=found)


def open_regular(path: Path) -> BinaryIO:
    """The transcript opened for reading; one clear line when it is missing, unreadable or not a regular file
    (a FIFO or device would hang or never end a read: it is opened without waiting on a writer, then refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise MemdirError(f"{path}: transcript not found") from None
    except OSError as exc:
        raise MemdirError(f"{path}: cannot read transcript ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise MemdirError(f"{path}: not a regular file; a transcript is a .jsonl or .json file")
    return os.fdopen(fd, "rb")


def is_json_list(path: Path) -> bool:
    """Whether a transcript is a `[{role, content}]` JSON list rather than JSONL; one clear line when it cannot be read."""
    with open_regular(path) as handle:
        try:
            start = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
        except OSError as exc:
            raise MemdirError(f"{path}: cannot read transcript ({exc.strerror})") from None
    return start.startswith(b"[")


def read_transcript(
    path: Path, last_n: int | None = None, after_uuid: str | None = None, max_bytes: int | None = None
) -> Transcript:
    """Read a transcript; `max_bytes` bounds how much of a JSONL file's end is read (a JSON list
    file is parsed whole, so it is refused above that size)."""
    if is_json_list(path):
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise MemdirError(f"{path}: a JSON-list transcript over {max_bytes >> 20} MB; convert it to JSONL to read its end")
        return read_json_list(path, last_n, after_uuid)
    return read_jsonl_tail(path, last_n, after_uuid, max_bytes)


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
