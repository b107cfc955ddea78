"""Reading and writing the YAML frontmatter of memory files, without ever crashing on bad input.

Two readers with one meaning:
- `parse_header` is the scan path (recall reads hundreds of headers per prompt). Flat `key: value`
  lines, which is all memdir and Claude Code write, are parsed by hand; only headers using real
  YAML structure go to PyYAML, through `bounded_yaml` (no aliases or anchors, depth, size and
  integer-length caps: a planted header cannot stall or crash any reader). Values stay strings,
  so `2026-03-05` is not turned into a date nor `yes` into True.
- `parse_document` is the full read used by the store: the same header rules plus the body. When
  the YAML is malformed it retries leniently (raw `key: value` lines) and reports the problem.
Writing goes through python-frontmatter with `sort_keys=False`, so keys keep their order.
"""

from __future__ import annotations

import re

from memdir import light_json
from memdir.record import Record

_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(?:\s+(.*?))?\s*$")
LENIENT_PROBLEM = "malformed YAML frontmatter"  # how a problem read leniently begins (bounded_yaml.Malformed says it)
# How the one common case ends ("description: Cover letter standards: NYC ..."): every field is read exactly as
# meant, so doctor warns instead of calling the folder unhealthy (3 of the real 55-file folder's files).
COLON_READ_AS_WRITTEN = "read as written; quote the value to make it valid YAML"
_YAML_STRUCTURE = ("|", ">", "[", "{", "&", "*", "!", "%", "@", "`")


class Parsed(Record):
    """fields, body; problem is set when the header was malformed and read leniently."""

    fields: dict
    body: str = ""
    problem: str | None = None
    has_header: bool = True

    def __init__(self, fields: dict, body: str = "", problem: str | None = None, has_header: bool = True) -> None:
        self.fields, self.body, self.problem, self.has_header = fields, body, problem, has_header


def _split(text: str, max_lines: int | None = None) -> tuple[list[str] | None, str, str | None]:
    """(header lines, body, problem). Header lines are None when the text has no frontmatter."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None, text, None
    limit = len(lines) if max_lines is None else min(len(lines), max_lines)
    for i in range(1, limit):
        if lines[i].rstrip() in ("---", "..."):
            return lines[1:i], "\n".join(lines[i + 1 :]), None
    return lines[1:limit], "", "frontmatter is not closed with a '---' line"


def _plain_scalar(value: str) -> str | None:
    """A YAML plain/quoted scalar as a string, or None when it needs a real YAML parser."""
    if not value:
        return ""
    if value[0] == '"':
        end = value.rfind('"')
        tail = value[end + 1 :].strip()
        if end <= 0 or (tail and not tail.startswith("#")):
            return None
        try:
            return light_json.loads(value[: end + 1])  # type: ignore[return-value]  # a JSON string is a str
        except ValueError:
            return None
    if value[0] == "'":
        end = value.rfind("'")
        if end <= 0:
            return None
        tail = value[end + 1 :].strip()
        if tail and not tail.startswith("#"):
            return None
        return value[1:end].replace("''", "'")
    if value.startswith(_YAML_STRUCTURE) or value.startswith(("- ", "? ")):
        return None
    comment = value.find(" #")
    if comment >= 0:
        value = value[:comment]
    if ": " in value:
        return None  # YAML itself rejects this; let the strict path report it
    return value.rstrip()


_SPECIAL_START = frozenset("\"'|>[{&*!%@`?-")


def _fast_fields(header: list[str]) -> dict[str, object] | None:
    """Flat `key: value` lines with str methods (this runs for every file on every prompt);
    None when the header uses YAML structure and needs the real parser.

    One level of nesting is read here too: Claude Code 2.1.x writes `metadata:` with an indented
    `type: feedback` under it in every file, and sending all of those to PyYAML would slow each scan.
    """
    fields: dict[str, object] = {}
    nested: dict[str, object] | None = None  # the map under a bare `key:` line, while its lines last
    indent = ""
    for line in header:
        if not line or line[0] in " \t-#":
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if nested is not None and line[0] in " \t":
                stripped = line.lstrip()
                if not indent:
                    indent = line[: len(line) - len(stripped)]
                if line.startswith(indent) and line[len(indent)] not in " \t-#":
                    sub = _fast_fields([stripped])
                    if sub is None:
                        return None
                    nested.update(sub)
                    continue
            return None  # other block structure: deeper maps, lists, continuations
        nested = None
        key, sep, value = line.partition(":")
        if not sep or not key.replace("_", "a").replace("-", "a").replace(".", "a").isalnum():
            match = _KEY_LINE.match(line)
            if not match:
                return None
            key, value = match.group(1), match.group(2) or ""
        value = value.strip()
        if not value:
            nested, indent = {}, ""
            fields[key] = nested  # stays {} if no indented line follows (YAML: null; treated as empty)
            continue
        if value and (value[0] in _SPECIAL_START or ": " in value or " #" in value or value[-1] == ":"):
            parsed = _plain_scalar(value)
            if parsed is None:
                return None
            value = parsed
        fields[key] = value
    return fields


def _empty_maps_to_none(fields: dict[str, object]) -> dict[str, object]:
    """A bare `key:` with nothing under it is YAML null: read it as an empty string like PyYAML's None."""
    return {k: ("" if isinstance(v, dict) and not v else v) for k, v in fields.items()}


def _lenient_fields(header: list[str]) -> dict[str, object]:
    """Last resort for broken YAML: every `key: rest of line`, raw."""
    fields: dict[str, object] = {}
    parent: str | None = None  # a bare `key:` whose indented `sub: value` lines are kept one level deep
    for line in header:
        if ":" in line and line[:1] in (" ", "\t") and parent is not None:
            key, _, value = line.strip().partition(":")
            known = fields.get(parent)
            sub = known if isinstance(known, dict) else {}
            sub.setdefault(key.strip(), value.strip().strip("\"'"))
            fields[parent] = sub
        elif ":" in line and line[:1] not in (" ", "\t", "-", "#"):
            key, _, value = line.partition(":")
            key = key.strip()
            parent = key if not value.strip() else None
            if key and key not in fields:
                fields[key] = value.strip().strip("\"'")
    return fields


def _stringify(value: object) -> object:
    import datetime

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return str(value)
    return value


def _yaml_fields(header: list[str]) -> tuple[dict[str, object], str | None]:
    """Fields through the bounded loader. Malformed YAML is read leniently; a shape only an attacker
    writes (aliases, anchors, deep nesting, a huge header) yields no fields at all, so recall skips
    the file while `list` and `doctor` show why."""
    from memdir import bounded_yaml

    try:
        loaded = bounded_yaml.load("\n".join(header))
    except bounded_yaml.Malformed as exc:
        return _lenient_fields(header), f"{exc.reason}; read leniently"
    except bounded_yaml.Refused as exc:
        return {}, f"frontmatter refused: {exc.reason}"
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, "frontmatter is not a key: value mapping; treated as empty"
    return {str(k): _stringify_deep(v) for k, v in loaded.items()}, None


def _stringify_deep(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _stringify_deep(v) for k, v in value.items()}
    if value is None:
        return ""
    return _stringify(value)


def memory_type(fields: dict[str, object]) -> str | None:
    """The memory's type in either form: `metadata: {type: ...}` (Claude Code 2.1.x) or top-level `type:`.

    A top-level `type` wins when both are present: it is what older tools (and memdir 0.1) read.
    """
    metadata = fields.get("metadata")
    for value in (fields.get("type"), metadata.get("type") if isinstance(metadata, dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def modified_of(fields: dict[str, object]) -> str | None:
    """The time the memory says it was saved: `metadata.modified` (Claude Code 2.1.x, what memdir writes), else a
    top-level `modified`, in UTC as `2026-03-28T10:30:00Z` (one form, so stamps compare as strings and show inert);
    None when it has none, or what it has is no time (a planted list, 10 KB of text, a year past 9999 in UTC)."""
    from datetime import UTC, datetime

    metadata = fields.get("metadata")
    found = metadata.get("modified") if isinstance(metadata, dict) else fields.get("modified")
    if not found:
        return None
    try:
        moment = datetime.fromisoformat(str(found).strip())
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: 9999-12-31T23:59:59-01:00 is past the calendar in UTC
        return None
    return moment.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"  # year 1 as 0001, unlike strftime's %Y


def is_nested_form(fields: dict[str, object]) -> bool:
    """Written in Claude Code 2.1.x's form (type under `metadata:`)?"""
    metadata = fields.get("metadata")
    return isinstance(metadata, dict) and "type" in metadata and "type" not in fields


def parse_header(text: str, max_lines: int | None = None) -> Parsed:
    header, body, problem = _split(text, max_lines)
    if header is None:
        return Parsed({}, body, None, has_header=False)
    fields = _fast_fields(header)
    if fields is not None:
        fields = _empty_maps_to_none(fields)
    if fields is None:
        colon_line = _colon_in_plain_value(header)
        # YAML's one verdict on such a header, without importing it (~30 ms). Read as the advice would have it written
        # (each such value quoted), not leniently: that strips a closing quote ("use 'tabs'"), keeps a quoted value's
        # escapes and comments, and the first of two same keys, so the warning's "read as written" was not true.
        advised = _fast_fields(_quote_colon_values(header)) if colon_line is not None else None
        if colon_line is not None and advised is not None:
            fields = _empty_maps_to_none(advised)
            yaml_problem: str | None = (f"malformed YAML frontmatter at line {colon_line + 2} "
                                        f"(mapping values are not allowed in this context); {COLON_READ_AS_WRITTEN}")
        else:
            fields, yaml_problem = _yaml_fields(header)
        problem = problem or yaml_problem
    return Parsed(fields, body, problem)


def _colon_in_plain_value(header: list[str]) -> int | None:
    """The index of the first line whose unquoted value holds ": " ("description: Cover letter standards: NYC"),
    when that is all that keeps the header off the fast path: flat `key: value` lines, each value otherwise plain.
    YAML rejects such a header there ("mapping values are not allowed in this context") and it is read
    leniently; 12 of 200 memories of a folder built from the real one are written so, and each sent its
    hook to PyYAML's import. None for anything else (nested maps, lists, quotes, block scalars)."""
    first = None
    nested = False  # under a bare `key:` line (Claude Code's `metadata:`), its indented plain `sub: value` lines
    indent = ""  # theirs, one and the same (YAML reads a deeper one as a map under the line before)
    for index, line in enumerate(header):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" in line:
            return None  # a tab may open a YAML comment ("x\t#note: y" is "x"): the real parser decides
        indented = line[0] in " \t"
        if line[0] == "-" or (indented and not nested):
            return None
        if indented:
            own = line[: len(line) - len(line.lstrip())]
            indent = indent or own
            if own != indent or "\t" in own:
                return None
        key, sep, value = line.strip().partition(":")
        value = value.strip()
        if not sep or not key or not key.replace("_", "a").replace("-", "a").replace(".", "a").isalnum():
            return None
        if indented and (not value or _plain_scalar(value) is None or value.split(" #", 1)[0].rstrip().endswith(":")):
            return None  # deeper maps, or a nested value YAML might read another way: the real parser
        if not indented:
            nested, indent = not value, ""
        if indented or not value:
            continue
        if value.split(" #", 1)[0].rstrip().endswith(":"):
            return None  # YAML may fail here first, on another message
        if _plain_scalar(value) is not None:
            continue
        if value[0] in _SPECIAL_START or value.startswith(_YAML_STRUCTURE) or ": " not in value.split(" #", 1)[0]:
            return None
        if first is None:
            first = index
    return first


def _quote_colon_values(header: list[str]) -> list[str]:
    """`header` with each top-level value YAML reads no plain scalar in ("a: b") double-quoted, as doctor advises."""
    quoted = []
    for line in header:
        key, sep, value = line.partition(":")
        value = value.strip()
        if sep and value and line[:1] not in (" ", "\t", "#") and _plain_scalar(value) is None:
            line = f"{key}: " + light_json.dumps(value)
        quoted.append(line)
    return quoted


def body_of(text: str) -> str:
    """The text after the frontmatter (all of it when there is none; "" when the header never closes)."""
    return _split(text)[1]


# As text, compiled (and cached by re) on the Write tool's path only, not when the hook imports this module.
_BLOCK_SCALAR = r"^[ \t]*[\w.-]+:[ \t]*[|>][-+0-9]*[ \t]*(?:#.*)?$"
_HASH_IN_VALUE = r"^(?P<lead>[ \t]*[\w.-]+:[ \t]+)(?P<value>[^\s\"'|>\[{&*!%@`?#-].*?\s#.*?)[ \t]*$"


def hashes_as_text(text: str) -> str:
    """A model-written header with " #" inside a plain value, its value quoted: YAML reads " #" as the start of a
    comment, so "description: learning Clojure syntax (->>, #(...) anonymous functions)" was stored as "learning
    Clojure syntax (->>," and "tracked in issue #123" as "tracked in issue", with no refusal (relay request 0003 of
    fresh11). The model writes text, never YAML comments. Only `key: value` lines of the header change; each is
    quoted as `_quote_colon_values` quotes one (the store writes the memory back in its own form)."""
    lines = text.split("\n")
    head = text.lstrip("\ufeff").split("\n", 1)[0]
    if head.rstrip() != "---":
        return text
    block: int | None = None  # the indentation of a `key: |` or `key: >` line, while its literal lines last
    for i in range(1, len(lines)):
        line = lines[i]
        if line.rstrip() in ("---", "..."):
            break
        indent = len(line) - len(line.lstrip(" \t"))
        if block is not None and (not line.strip() or indent > block):
            continue  # a block scalar's text is literal already: "#" there is no comment
        block = indent if re.match(_BLOCK_SCALAR, line) else None
        match = re.match(_HASH_IN_VALUE, line)
        if match:
            lines[i] = match.group("lead") + light_json.dumps(match.group("value"))
    return "\n".join(lines)


def parse_document(text: str) -> Parsed:
    """Full read. Same field semantics as `parse_header`; body with surrounding blank lines trimmed."""
    parsed = parse_header(text)
    parsed.body = parsed.body.strip("\n")
    return parsed


def dump_document(fields: dict[str, object], body: str) -> str:
    """Frontmatter in the given key order (name, description, type first) and the body.

    `width` keeps every value on one line, so the fast scan path never needs PyYAML for
    files memdir wrote.
    """
    import frontmatter

    from memdir import bounded_yaml

    post = frontmatter.Post(body.strip("\n"))
    post.metadata = dict(fields)  # not **fields: a field named `handler` would become the Post's YAML handler
    text = frontmatter.dumps(post, sort_keys=False, width=1_000_000, Dumper=bounded_yaml.Dumper)
    # PyYAML quotes a string that looks like a timestamp; Claude Code writes `modified:` bare, and
    # matching it byte for byte lets an unchanged memory stay unchanged on disk.
    text = re.sub(_QUOTED_STAMP, r"\1\2", text)
    return text.rstrip("\n") + "\n"


_QUOTED_STAMP = r"(?m)^(\s+modified: )'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)'$"  # compiled when a file is written
