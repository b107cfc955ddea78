"""A header whose only YAML fault is ": " in an unquoted value ("description: Cover letter standards: NYC") is
read without PyYAML (~30 ms of a prompt hook's import), with YAML's problem and the fields the header has once
quoted as doctor's warning advises ("read as written"): checked here on generated headers."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from memdir import frontmatter_io as F

_VALUES = ["plain words", "Cover letter standards: NYC location", "a: b: c", "ends with colon:", "x #comment",
           "x #note: y", "'quoted: fine'", '"double: fine"', "'it''s'", "- dash", "[1, 2]", "{a: 1}", "&anchor v",
           "*alias", "| block", "yes", "2026-11-26", "12", "~", "a  :  b", "key:value", "tab\there: x", "x\t#note: y",
           "C#: the language", "é: ü"]
_KEYS = ["name", "description", "type", "node_type", "originSessionId", "x-y", "a.b"]


@st.composite
def headers(draw) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(st.sampled_from(_KEYS))
        kind = draw(st.sampled_from(["value", "value", "value", "bare", "comment", "blank"]))
        if kind == "value":
            lines.append(f"{key}: {draw(st.sampled_from(_VALUES))}")
        elif kind == "bare":
            lines.append(f"{key}:")
            for _ in range(draw(st.integers(0, 3))):
                indent = draw(st.sampled_from(["  ", "  ", "    ", "\t"]))
                lines.append(f"{indent}{draw(st.sampled_from(_KEYS))}: {draw(st.sampled_from(_VALUES))}")
        elif kind == "comment":
            lines.append("# a comment: with a colon")
        else:
            lines.append("")
    return lines


def _as_written(yaml_problem: str | None) -> str | None:
    """YAML's problem, ending as the shortcut says it: every field is read as meant (doctor warns, see
    tests/test_cli_and_doctor.py), where YAML's path says only that it read the header leniently."""
    assert yaml_problem is not None and yaml_problem.endswith("; read leniently"), yaml_problem
    return yaml_problem.removesuffix("read leniently") + F.COLON_READ_AS_WRITTEN


def _as_advised(header: list[str]) -> dict:
    """The fields memdir reads once each top-level value holding ": " is double-quoted, as the warning advises (then
    with no problem at all): what "read as written" promises."""
    quoted = []
    for line in header:
        key, _, value = line.partition(":")
        value = value.strip()
        if line[:1] not in " \t#" and ": " in value.split(" #", 1)[0] and value[:1] not in "'\"":
            line = f"{key}: {json.dumps(value)}"
        quoted.append(line)
    parsed = F.parse_header("---\n" + "\n".join(quoted) + "\n---\nbody\n")
    assert parsed.problem is None, (quoted, parsed.problem)
    return parsed.fields


@settings(max_examples=400, deadline=None)
@given(headers())
def test_a_colon_in_a_plain_value_is_read_as_yaml_would_read_it(header):
    colon = F._colon_in_plain_value(header)
    if colon is None or F._fast_fields(header) is not None:
        return  # the fast path or the real parser reads it, as before
    problem = F._yaml_fields(header)[1]
    parsed = F.parse_header("---\n" + "\n".join(header) + "\n---\nbody\n")
    assert (parsed.fields, parsed.problem) == (_as_advised(header), _as_written(problem))


def test_a_header_read_as_written_keeps_what_a_lenient_read_loses():
    """Found by hostile16: the shortcut read such a header leniently, yet doctor's warning says "read as written".
    A lenient read strips a closing quote, keeps a quoted value's escapes and a comment, and keeps the first of two
    same keys where YAML (and the fast path) keep the last."""
    header = ["name: first", "description: the rule: indent with 'tabs'", "type: user # the user's own",
              "name: 'it''s mine'"]
    parsed = F.parse_header("---\n" + "\n".join(header) + "\n---\nbody\n")
    assert parsed.problem is not None and parsed.problem.endswith(F.COLON_READ_AS_WRITTEN)
    assert parsed.fields == {"name": "it's mine", "description": "the rule: indent with 'tabs'", "type": "user"}


def test_a_tab_leaves_the_header_to_yaml():
    """Found on rereading: a tab before '#' opens a YAML comment, so "x\t#note: y" is "x" to YAML, where a
    lenient read kept the whole text."""
    header = ["name: x", "description: x\t#note: y", "type: user"]
    assert F._colon_in_plain_value(header) is None
    assert F.parse_header("---\n" + "\n".join(header) + "\n---\nbody\n").fields["description"] == "x"


def test_the_real_folders_colon_descriptions_are_read_without_yaml_as_yaml_reads_them(realdata):
    """The real folder's memories whose header fails YAML only on such a value take the shortcut, with YAML's
    fields and problem."""
    checked = 0
    for path in sorted((realdata / "memory-folders").rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        header = F._split(text, None)[0]
        if header is not None and F._fast_fields(header) is None and F._colon_in_plain_value(header) is not None:
            checked += 1
            parsed = F.parse_header(text)
            assert (parsed.fields, parsed.problem) == (_as_advised(header), _as_written(F._yaml_fields(header)[1]))
    assert checked >= 1
