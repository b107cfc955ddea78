"""The extraction agent's tool schemas and the checks every tool input passes before a handler sees it.

The names and input shapes are the ones the model knows from Claude Code (Read, Grep, Glob, Write,
Edit); there is no Bash. `extractor/tools.py` implements them over the memory folder only.
"""

from __future__ import annotations

import re

TOOL_SCHEMAS: list[dict] = [
    {
        "name": "Read",
        "description": "Read a markdown file in the memory folder (a memory, MEMORY.md, team/ or logs/). Returns numbered lines.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "absolute path inside the memory folder, or relative to it"},
                "offset": {"type": "integer", "description": "first line (1-based)"},
                "limit": {"type": "integer", "description": "number of lines"},
            },
            "required": ["file_path"],
        },
    },
    {
        "name": "Grep",
        "description": "Search the memory folder's markdown files with a regular expression.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "folder or file inside the memory folder (default: the memory folder)"},
                "glob": {"type": "string", "description": "only files matching this name pattern, e.g. *.md"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List the memory folder's markdown files matching a glob pattern (e.g. **/*.md).",
        "input_schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
    {
        "name": "Write",
        "description": "Create or replace a memory file (a .md file directly inside the memory folder) with "
        "frontmatter (name, description, type) and a body. Writing empty content deletes the memory. "
        "Replacing an existing file requires reading it first in this run. Name the file and `name` by the "
        "memory's distinctive words (feedback_use_pnpm_not_npm.md), in the user's own script; a new memory "
        "never takes a name another memory has. The file is stored in the form this memory folder uses, which "
        "Read then returns: in Claude Code 2.1.x's form the name becomes a kebab-case slug and the type moves "
        "under `metadata:` (with node_type and modified), and values are quoted where YAML needs it. The result "
        "of a Write shows the stored frontmatter.",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
    {
        "name": "Edit",
        "description": "Replace old_string with new_string in a memory file you have read in this run. "
        "old_string must occur exactly once unless replace_all is true. Match the text as Read returns it "
        "(without the line-number prefixes), which is the stored form, not necessarily what you wrote.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
]



class Refused(Exception):
    """A tool call the rules do not allow; its message is shown to the model."""


TOOL_NAMES = tuple(s["name"] for s in TOOL_SCHEMAS)
_PARAMS = {s["name"]: s["input_schema"] for s in TOOL_SCHEMAS}
_JSON_TYPES = {"string": (str,), "integer": (int,), "boolean": (bool,)}


def check_input(name: str, tool_input: dict) -> None:
    """Types and NUL bytes against the schema, before any handler sees the values."""
    schema = _PARAMS[name]
    props = schema["properties"]
    unknown = [k for k in tool_input if k not in props]
    if unknown:
        raise Refused(f"{name}: unknown parameter {str(unknown[0])[:40]!r}; parameters are {', '.join(props)}")
    missing = [k for k in schema.get("required", []) if k not in tool_input]
    if missing:
        raise Refused(f"{name}: missing required parameter {missing[0]!r}")
    for key, value in tool_input.items():
        if value is None and key not in schema.get("required", []):
            continue
        wanted = props[key]["type"]
        ok = isinstance(value, _JSON_TYPES[wanted]) and not (wanted == "integer" and isinstance(value, bool))
        if not ok:
            raise Refused(f"{name}: {key} must be a {wanted}, not {type(value).__name__}")
        if isinstance(value, str) and "\x00" in value:
            raise Refused(f"{name}: {key} contains a NUL byte")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over '/'-separated relative paths: `**` spans folders, `*` and `?` stay inside one."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    try:
        return re.compile("(?s:" + "".join(out) + r")\Z")
    except re.error:
        raise Refused(f"invalid glob pattern {pattern[:80]!r}") from None
