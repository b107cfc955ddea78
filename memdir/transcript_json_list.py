"""A `[{role, content}]` JSON-list transcript read one item at a time (SPEC §7), so that reading it costs the
messages kept, not the file: parsed whole, a 100 MB one took 220 MB.

The file is decoded as it is read (utf-8, a BOM allowed) and each item taken with the stdlib's
`json.JSONDecoder.raw_decode` from a buffer that holds one item at most (refused past TRANSCRIPT_LINE_MAX_BYTES, as
a JSONL line over it is skipped). What it accepts and refuses is what `json.loads` of the whole file did.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from memdir.constants import TRANSCRIPT_LINE_MAX_BYTES
from memdir.errors import MemdirError
from memdir.transcript_lines import Message, as_blocks, iso_timestamp, text_or_none

CHUNK_CHARS = 64 * 1024
_NOT_SPACE = re.compile(r"[^ \t\n\r]")  # JSON's own whitespace, which json.loads allows between values
_LOOKAHEAD = 64  # characters after a value that show it has ended
_DECODER = json.JSONDecoder()


def _invalid(path: Path, why: object) -> MemdirError:
    return MemdirError(f"{path}: not valid JSON ({why}); expected JSONL or a [{{role, content}}] list")


class _Buffer:
    """The file's text from `pos` on, read more only when an item does not fit (doubling, so a long item is
    parsed a few times, not once per chunk)."""

    def __init__(self, path: Path, handle) -> None:
        self.path, self.handle, self.text, self.pos, self.eof = path, handle, "", 0, False
        self.item_max = TRANSCRIPT_LINE_MAX_BYTES

    def more(self) -> bool:
        """Read more of the file; False at its end. One clear line when an item alone is too long."""
        if self.eof:
            return False
        held = len(self.text) - self.pos
        if held > self.item_max:
            raise MemdirError(f"{self.path}: an item of this JSON-list transcript is over {self.item_max >> 20} MB or "
                              "not valid JSON; convert it to JSONL (a line that long is skipped there)")
        try:
            chunk = self.handle.read(max(CHUNK_CHARS, held))
        except UnicodeDecodeError as exc:
            raise _invalid(self.path, exc) from None
        if not chunk:
            self.eof = True
            return False
        self.text, self.pos = self.text[self.pos:] + chunk, 0
        return True

    def skip_space(self) -> str:
        """The next character that is not whitespace ("" at the end of the file), not taken."""
        while True:
            found = _NOT_SPACE.search(self.text, self.pos)
            self.pos = found.start() if found else len(self.text)
            if found or not self.more():
                return self.text[self.pos:self.pos + 1]

    def value(self) -> object:
        """The next JSON value, whole: a value that ends where the text read so far ends may go on (a number)."""
        while True:
            try:
                item, end = _DECODER.raw_decode(self.text, self.pos)
            except RecursionError:
                raise MemdirError(f"{self.path}: nested too deeply to be a transcript") from None
            except ValueError as exc:
                if self.more():
                    continue
                raise _invalid(self.path, exc) from None
            if len(self.text) - end < _LOOKAHEAD and self.more():
                continue  # a number cut by the buffer's end ("1.5e" of "1.5e3") parses as a shorter one
            self.pos = end
            return item


def json_list_items(path: Path) -> Iterator[object]:
    """Each item of a JSON-list transcript in turn; one clear line (MemdirError) when the file is not one."""
    from memdir.transcript import open_regular  # here: memdir.transcript reads JSON lists through this module

    with io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline="") as handle:
        buffer = _Buffer(path, handle)
        if buffer.skip_space() != "[":
            raise MemdirError(f"{path}: expected a JSON list of {{role, content}} messages")
        buffer.pos += 1
        if buffer.skip_space() == "]":
            buffer.pos += 1
        else:
            while True:
                buffer.skip_space()
                yield buffer.value()
                mark = buffer.skip_space()
                buffer.pos += 1
                if mark == "]":
                    break
                if mark != ",":
                    raise _invalid(path, f"expected ',' or ']' at {mark!r}" if mark else "the list is not closed")
        if buffer.skip_space():
            raise _invalid(path, "extra data after the list")


def json_list_messages(path: Path, invalid: list[int] | None = None) -> Iterator[Message]:
    """The messages of a JSON-list transcript, oldest first; items that are no {role: user|assistant} message are
    counted in `invalid[0]` when given. A message without a uuid is `msg-<its index in the list>`."""
    for i, item in enumerate(json_list_items(path)):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str) or item["role"] not in ("user", "assistant"):
            if invalid is not None:
                invalid[0] += 1
            continue
        yield Message(role=item["role"], content=as_blocks(item.get("content")),
                      uuid=text_or_none(item.get("uuid")) or f"msg-{i}", timestamp=iso_timestamp(item.get("timestamp")))
