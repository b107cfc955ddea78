"""Where each memory's content came from (issue 24): who wrote it, in which session, from which messages.

Kept in `.memdir/provenance.jsonl`, one line per write, keyed by the file's path below the memory
folder, never in the memory file: Claude Code reads a memory's frontmatter into its model's context,
and message uuids are noise there. An entry holds no memory text (so no secret can reach it), only:

    {"at": "...Z", "file": "deploy-steps.md", "by": "extractor:llm", "session": "8f2c...",
     "from": [{"uuid": "...", "origin": "user", "kind": "prompt", "terms": 6}, ...]}

`origin` says whether those words were the user's own (`user`, with the `kind`: prompt, queued,
answer, rejection), tool output (`tool`) or the assistant's (`assistant`). The file is bounded: past
MAX_BYTES it is rewritten keeping the newest entries (at most KEEP_PER_FILE per file) in half that.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memdir import inert, safefs, safefs_write
from memdir.errors import MemdirError

NAME = "provenance.jsonl"
MAX_BYTES = 512 * 1024
KEEP_PER_FILE = 5
MAX_FROM = 8  # messages named per entry
MAX_ID_CHARS = 80
ORIGINS = ("user", "tool", "assistant")
WRITERS_FROM_THE_USER = ("remember", "review")  # a person typed the command: the content is their words


def entry(by: str, *, session: str | None = None, messages: list[dict] | tuple = ()) -> dict:
    """One write's provenance, bounded: `by` the writer, the session, the messages it drew on."""
    kept = []
    for message in list(messages)[:MAX_FROM]:
        origin = message.get("origin")
        if origin not in ORIGINS:
            continue
        item = {"uuid": _short(message.get("uuid")), "origin": origin}
        if isinstance(message.get("kind"), str):
            item["kind"] = message["kind"][:20]
        if isinstance(message.get("terms"), int):
            item["terms"] = message["terms"]
        kept.append(item)
    out: dict = {"by": by[:40]}
    if session:
        out["session"] = _short(session)
    if kept:
        out["from"] = kept
    return out


def _short(value: object) -> str | None:
    return str(value)[:MAX_ID_CHARS] if value is not None else None


def record(base, state_rel: str, file_rel: str, item: dict) -> None:
    """Append one entry for `file_rel` (relative to `base`); call under the folder lock.
    Bookkeeping never fails the write it describes: an unwritable state folder is skipped."""
    line = json.dumps({"at": _now(), "file": file_rel, **item}, ensure_ascii=False, sort_keys=False)
    rel = f"{state_rel}/{NAME}"
    try:
        safefs_write.append_text(base, rel, line + "\n")
        st = safefs.lstat(base, rel)
        if st is not None and st.st_size > MAX_BYTES:
            _compact(base, rel)
    except (OSError, MemdirError):
        pass


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _entries(base, rel: str) -> list[dict]:
    try:
        text = safefs.read_text_or(base, rel, max_bytes=4 * MAX_BYTES)
    except (OSError, MemdirError, UnicodeDecodeError):
        return []
    out = []
    for raw in text.splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue  # a torn last line (a crash mid-append) is skipped, never fatal
        if isinstance(item, dict) and isinstance(item.get("file"), str):
            out.append(item)
    return out


def _compact(base, rel: str) -> None:
    entries = _entries(base, rel)
    seen: dict[str, int] = {}
    kept: list[str] = []
    size = 0
    for item in reversed(entries):  # newest first, until half the cap: the file stays bounded however many memories
        seen[item["file"]] = seen.get(item["file"], 0) + 1
        line = json.dumps(item, ensure_ascii=False) + "\n"
        if seen[item["file"]] > KEEP_PER_FILE:
            continue
        if size + len(line.encode()) > MAX_BYTES // 2:
            break
        kept.append(line)
        size += len(line.encode())
    text = "".join(reversed(kept))
    safefs_write.write_text(base, rel, text)


def moved(base, state_rel: str, old_rel: str, new_rel: str) -> None:
    """A rename: the file's earlier entries stay under its old path, and `of_file` follows the link."""
    record(base, state_rel, new_rel, {"by": "rename", "was": old_rel})


def of_file(base, state_rel: str, file_rel: str) -> list[dict]:
    """The entries recorded for one file, oldest first, through its renames (a few hops at most)."""
    entries = _entries(base, f"{state_rel}/{NAME}")
    found: list[dict] = []
    seen = {file_rel}
    for _hop in range(KEEP_PER_FILE):
        mine = [item for item in entries if item["file"] == file_rel]
        found = mine + found
        was = next((item.get("was") for item in reversed(mine) if isinstance(item.get("was"), str)), None)
        if was is None or was in seen:
            break
        seen.add(was)
        file_rel = was
    return found


def lines(entries: list[dict]) -> list[str]:
    """`memdir show`'s provenance block: one line per write, newest last, every value made inert."""
    out = []
    for item in entries[-KEEP_PER_FILE:]:
        where = f" in session {item['session']}" if item.get("session") else ""
        where += f" (renamed from {item['was']})" if isinstance(item.get("was"), str) else ""
        head = f"- {item.get('at', '?')} by {item.get('by', '?')}{where}"
        sources = item.get("from") or []
        if sources:
            shown = ", ".join(f"{_origin(s)} {s.get('uuid') or '(no id)'}" for s in sources if isinstance(s, dict))
            head += f": from {shown}"
        elif str(item.get("by")) in WRITERS_FROM_THE_USER:
            head += ": typed by the user"
        out.append(inert.one_line(head))
    return out


def _origin(source: dict) -> str:
    origin = source.get("origin")
    if origin == "user":
        return f"the user's {source.get('kind') or 'words'}"
    return "tool output" if origin == "tool" else "the assistant's text"
