"""The bounded frontmatter loader: what it refuses, what it keeps as text, and that memdir reads back all it writes."""

from __future__ import annotations

import pytest

from memdir import bounded_yaml
from memdir.frontmatter_io import dump_document, parse_document, parse_header

HEAD = "---\nname: Bad\ndescription: planted\ntype: user\n"


@pytest.mark.parametrize("header, reason", [
    ("x: &a {y: *a}", "YAML anchor &a at line 5"),
    ("base: {k: v}\nother: *b", "YAML alias *b at line 6"),
    ("x: &keep [1]", "YAML anchor &keep"),
    ("x: " + "[" * 16 + "]" * 16, "nests deeper than 16 levels"),  # the top-level map is the 1st level
    ("x: [" + "a," * 2_500 + "a]", "over 2,000 values"),
    ("x: ['" + "a" * 70_000 + "']", "over the 65,536 memdir reads"),
])
def test_shapes_only_an_attacker_writes_are_refused_with_no_fields(header, reason):
    parsed = parse_header(HEAD + header + "\n---\nbody\n")
    assert parsed.fields == {}  # nothing of a refused header is trusted, so recall skips the file
    assert parsed.problem is not None and parsed.problem.startswith("frontmatter refused: ")
    assert reason in parsed.problem and "\n" not in parsed.problem


def test_nesting_up_to_the_cap_and_ordinary_structure_still_read():
    parsed = parse_header(HEAD + "x: " + "[" * 15 + "1" + "]" * 15 + "\ntags: [a, b]\nmeta: {k: 1, when: 2026-03-05}\n---\n")
    assert parsed.problem is None
    assert parsed.fields["tags"] == ["a", "b"] and parsed.fields["meta"] == {"k": "1", "when": "2026-03-05"}


@pytest.mark.parametrize("value", ["9" * 4400, "!!int " + "9" * 5000, "1:" * 20_000 + "1"])
def test_an_integer_past_the_int_string_limit_stays_text(value):
    loaded = bounded_yaml.load(f"n: {value}\nl: [x]")
    assert isinstance(loaded, dict) and loaded["n"] == value.removeprefix("!!int ")
    assert bounded_yaml.load("n: 0x1F")["n"] == 31  # short ones are still numbers


@pytest.mark.parametrize("header", ["d: [2026-02-31]", "x: !!python/object/apply:os.system ['true']",
                                    "? [a, b]\n: c\nl: [x]", "x: [\udcff]", "x: [unclosed"])
def test_malformed_yaml_is_one_line_and_read_leniently(header):
    parsed = parse_header(HEAD + header + "\n---\nbody\n")
    assert parsed.problem is not None and parsed.problem.startswith("malformed YAML frontmatter")
    assert parsed.problem.endswith("; read leniently") and "\n" not in parsed.problem
    assert parsed.fields["name"] == "Bad"


def test_memdir_never_writes_an_anchor_it_would_refuse():
    shared = ["a", "b"]
    text = dump_document({"name": "n", "description": "d", "type": "user", "tags": shared, "more": shared}, "body")
    assert "&" not in text and "*" not in text
    parsed = parse_document(text)
    assert parsed.problem is None and parsed.fields["tags"] == parsed.fields["more"] == ["a", "b"]
