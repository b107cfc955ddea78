"""Text the memory tool writes, as a memdir memory: frontmatter filled in where missing, and a
refusal when storing it would silently drop text the model wrote."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from anthropic.lib.tools import ToolError

from memdir import constants as C
from memdir.entry.memory_tool_paths import ROOT
from memdir.frontmatter_io import dump_document, hashes_as_text, parse_document
from memdir.model import Memory, memory_from_fields


@contextlib.contextmanager
def _one_line_validation(where: str):
    from pydantic import ValidationError

    try:
        yield
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ToolError(f"{where}: {'.'.join(map(str, err['loc'])) or 'frontmatter'}: {err['msg']}") from None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def _kept(stored: object, written: object) -> bool:
    """`written` survives as `stored` (a mapping may gain keys, e.g. the `modified` stamp memdir adds)."""
    if isinstance(written, dict) and isinstance(stored, dict):
        return all(_kept(stored.get(key), value) for key, value in written.items())
    return stored == written


def as_memory(rel: str, text: str) -> tuple[Memory, str]:
    """The memory to store for `text` at `rel`, and a note when memdir filled in frontmatter."""
    if not rel.endswith(".md"):
        raise ToolError(f"{ROOT}/{rel}: memdir keeps memories as markdown; use a name ending in .md")
    parsed = parse_document(hashes_as_text(text))
    fields = dict(parsed.fields) if parsed.has_header else {}
    filled = []
    stem = Path(rel).stem
    if not fields.get("name"):
        fields["name"] = (_first_line(parsed.body) or stem.replace("_", " "))[: C.NAME_MAX_CHARS]
        filled.append("name from the first line")
    if not fields.get("description"):
        line = _first_line(parsed.body) or stem.replace("_", " ")
        fields["description"] = line if len(line) <= C.INDEX_LINE_TARGET else line[: C.INDEX_LINE_TARGET - 1] + "…"
        filled.append("description from the first line")
    metadata = fields.get("metadata")
    if not fields.get("type") and not (isinstance(metadata, dict) and metadata.get("type")):
        prefix = re.split(r"[_\-]", stem, maxsplit=1)[0].lower()
        mtype = prefix if prefix in C.MEMORY_TYPES else C.MEMORY_TOOL_DEFAULT_TYPE
        fields["type"] = mtype
        filled.append(f"type: {mtype}")
    if parsed.has_header:  # the writer's own frontmatter keeps its form and its other keys
        memory = memory_from_fields(fields, parsed.body, f"{ROOT}/{rel}")
    else:  # none at all: the store writes the form the installed Claude Code reads
        with _one_line_validation(f"{ROOT}/{rel}"):
            memory = Memory(name=fields["name"], description=fields["description"], type=fields["type"],
                            body=parsed.body)
    note = ""
    if filled:
        note = (
            f" memdir added frontmatter ({', '.join(filled)}); edit it if wrong. "
            f"Types: {', '.join(C.MEMORY_TYPES)}."
        )
    return memory, note


def checked(rel: str, text: str, baseline: str, added: str = "") -> tuple[Memory, str]:
    """`as_memory`, refused when storing it would silently drop text the model wrote.

    A frontmatter block that no longer parses is read leniently (raw `key: value` lines), so a
    sentence or a list inside it would vanish while the tool reported success. `baseline` is the
    text before the edit: a header that was already malformed there is not the edit's doing, but
    the `added` text must still come through it.
    """
    memory, note = as_memory(rel, text)
    parsed = parse_document(hashes_as_text(text))
    if parsed.problem and not parse_document(baseline).problem:
        reason = parsed.problem.split(";")[0]
        raise ToolError(
            f"Nothing was written: this edit puts text into the frontmatter of {ROOT}/{rel} ({reason}), "
            f"where memdir would drop it; put notes below the closing `---`, or keep the frontmatter valid YAML"
        )
    rendered = dump_document(memory.frontmatter(), memory.body)
    stored = parse_document(rendered)
    metadata = stored.fields.get("metadata")
    lost = [
        key for key, value in parsed.fields.items()
        if not _kept(stored.fields.get(key), value) and not (isinstance(metadata, dict) and _kept(metadata.get(key), value))
    ]
    what = f"frontmatter key(s) {', '.join(lost)}" if lost else ""
    if parsed.problem and any(line.strip() not in rendered for line in added.splitlines()):
        what = "the text you added"  # read leniently, the malformed header keeps only `key: value` lines
    elif not what and stored.body != parsed.body:
        what = "part of the body"
    if what:
        raise ToolError(f"Nothing was written: memdir would not keep {what} in {ROOT}/{rel}; "
                        "write it as plain `key: value` frontmatter or as body text below the closing `---`")
    return memory, note
