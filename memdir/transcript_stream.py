"""A whole transcript read forward in windows, for `memdir batch`: memory stays bounded by a window, not the file.

`read_transcript` without a budget keeps every line it parsed until the end (a 315 MB session took 458 MB);
here each line is parsed, turned into its message and let go. What the whole file must tell before the first
message can be given out (each line's link, for the rewound branches, and each tool call's name) is learnt by a
first read and kept on disk (memdir/transcript_links.py), not in memory: the file is read twice. The messages are the
ones `read_transcript` gives: the same lines left out, split responses joined, rejections confirmed.
"""

from __future__ import annotations

import json
import os
from collections import Counter, deque
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import BinaryIO

from memdir.constants import TRANSCRIPT_LINE_MAX_BYTES
from memdir.transcript import continues, is_json_list, join_into, link, open_regular
from memdir.transcript_json_list import json_list_items, json_list_messages
from memdir.transcript_lines import Message, confirm_line, message_from_line, note_calls, note_type
from memdir.transcript_links import Links, StoreError, store_failure

SKIP_BLOCK = 64 * 1024


def _lines_forward(handle: BinaryIO, line_max: int, end: int) -> Iterator[bytes]:
    """Each line that starts before byte `end`, oldest first; a line longer than `line_max` is skipped without
    being held whole. Stopping at `end` (the size when the read began) keeps a file that never stops growing
    from keeping the read going for ever, and both passes on the same bytes."""
    handle.seek(0)
    while handle.tell() < end and (line := handle.readline(line_max + 1)):
        if len(line) > line_max and not line.endswith(b"\n"):
            while (rest := handle.readline(SKIP_BLOCK)) and not rest.endswith(b"\n"):
                pass  # the rest of the oversized line, a block at a time
            continue
        if line.strip():
            yield line


class _Uncounted(Counter[str]):
    """The unknown line types are not reported here: not counting them keeps a file of a million distinct ones small."""

    def __setitem__(self, key: str, value: int) -> None:
        pass


def _records(handle: BinaryIO, end: int) -> Iterator[tuple[dict, Message | None]]:
    """(line, its message or None) for each line of the conversation, as `read_jsonl_tail` keeps them."""
    unknown = _Uncounted()
    for raw in _lines_forward(handle, TRANSCRIPT_LINE_MAX_BYTES, end):
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # a line cut short or absurdly nested: not read, as backwards
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("uuid"), str) or obj.get("isSidechain"):
            continue
        kind = note_type(obj, unknown)
        yield obj, message_from_line(obj, kind) if kind else None


def iter_messages(path: Path) -> Iterator[Message]:
    """The messages of a JSONL transcript, oldest first, one at a time.

    The first pass learns the links (for rewinds) and every tool call, as the whole read knows them all before
    it confirms a rejection or an answer (a result can be logged before its call); the second gives the
    messages. Both read the same open file up to the size it had at the start."""
    with open_regular(path) as handle:
        end = os.fstat(handle.fileno()).st_size
        links = Links()
        try:
            for obj, message in _records(handle, end):
                line_calls: dict[str, str] = {}
                note_calls(message, line_calls)
                links.add(link(obj, message), line_calls)
            links.settle()
            calls = links.calls()
            pending: Message | None = None
            for obj, message in _records(handle, end):
                if message is None:
                    continue
                confirm_line(obj, message, calls)
                if links.is_dead(obj["uuid"]):
                    continue
                if pending is not None and continues(pending, message):
                    join_into(pending, message)
                    continue
                if pending is not None:
                    yield pending
                pending = message
            if pending is not None:
                yield pending
        except StoreError as exc:  # its temporary file could not be written: a disk error, told as one
            raise store_failure(exc) from None
        finally:
            links.close()


def transcript_windows(path: Path, cursor: str | None, size: int) -> Generator[list[Message], None, None]:
    """The messages after `cursor` (all of them when it is not found) in windows of `size`, oldest first.

    A JSON-list transcript is read through once first, so that one that is not valid is refused before any window,
    as when it was parsed whole; then an item at a time."""
    json_list = is_json_list(path)
    if json_list:
        deque(json_list_items(path), maxlen=0)

    def messages() -> Iterator[Message]:
        return json_list_messages(path) if json_list else iter_messages(path)

    stream = messages()
    if cursor is not None and not any(message.uuid == cursor for message in stream):
        stream = messages()  # the cursor is not in this transcript (any more): from the start
    window: list[Message] = []
    for message in stream:
        window.append(message)
        if len(window) >= size:
            yield window
            window = []
    if window:
        yield window
