from __future__ import annotations

import pytest

from memdir.errors import MemdirError
from memdir.frontmatter_io import dump_document, parse_document, parse_header
from memdir.model import Memory, compose_body, memory_from_fields


def test_round_trip_keeps_key_order_and_string_values():
    fields = {"name": "Ship date", "description": "yes", "type": "project", "due": "2026-03-05", "flag": "on"}
    text = dump_document(fields, "Body line.\n\n**Why:** x\n**How to apply:** y\n")
    assert text.splitlines()[1:4] == ["name: Ship date", "description: 'yes'", "type: project"]
    parsed = parse_document(text)
    assert parsed.fields == fields  # no date objects, no booleans
    assert parsed.body == "Body line.\n\n**Why:** x\n**How to apply:** y"
    assert parsed.problem is None


def test_hand_written_yaml_values_stay_strings():
    text = "---\nname: Deadline\ndescription: 2026-03-05\ntype: project   # closed set\nok: yes\n---\nbody\n"
    parsed = parse_header(text)
    assert parsed.fields == {"name": "Deadline", "description": "2026-03-05", "type": "project", "ok": "yes"}


def test_quoted_values_and_bom():
    text = '\ufeff---\nname: "A \\"quoted\\" name"\ndescription: \'it\'\'s fine\'\ntype: user\n---\nx'
    assert parse_header(text).fields == {"name": 'A "quoted" name', "description": "it's fine", "type": "user"}


def test_real_yaml_structure_goes_through_pyyaml():
    text = "---\nname: Tags\ndescription: >\n  folded\n  text\ntype: reference\ntags: [a, b]\n---\nx"
    parsed = parse_header(text)
    assert parsed.fields["description"] == "folded text\n"
    assert parsed.fields["tags"] == ["a", "b"]
    assert parsed.problem is None


def test_malformed_yaml_is_read_leniently_and_reported():
    text = "---\nname: Broken: yes: [\ndescription: still readable\ntype: feedback\n  - stray\n---\nbody"
    parsed = parse_document(text)
    assert parsed.problem and "malformed YAML" in parsed.problem
    assert parsed.fields["description"] == "still readable"
    assert parsed.fields["type"] == "feedback"
    assert parsed.body == "body"


def test_unclosed_frontmatter_is_reported():
    parsed = parse_header("---\nname: x\ntype: user\nno closing line")
    assert parsed.problem and "not closed" in parsed.problem


def test_no_frontmatter_means_empty_fields():
    parsed = parse_header("# Just markdown\n")
    assert parsed.fields == {} and parsed.has_header is False


def test_memory_from_fields_names_the_bad_field():
    with pytest.raises(MemdirError, match=r"x.md: frontmatter field 'type'"):
        memory_from_fields({"name": "a", "description": "b", "type": "opinion"}, "", "x.md")
    with pytest.raises(MemdirError, match=r"'description'"):
        memory_from_fields({"name": "a", "type": "user"}, "", "x.md")


def test_memory_keeps_extra_keys_and_flattens_lines():
    m = memory_from_fields({"name": "a\nb", "description": "d", "type": "user", "origin": "x"}, "body", "f")
    assert m.name == "a b" and m.extra == {"origin": "x"}
    assert list(m.frontmatter()) == ["name", "description", "type", "origin"]


def test_why_how_are_required_only_for_feedback_and_project():
    body = compose_body("Use pnpm.", "lockfile is pnpm", "run pnpm install")
    assert body == "Use pnpm.\n\n**Why:** lockfile is pnpm\n**How to apply:** run pnpm install"
    assert Memory(name="n", description="d", type="feedback", body=body).missing_why_how() == []
    assert Memory(name="n", description="d", type="project", body="x").missing_why_how() == [
        "**Why:**",
        "**How to apply:**",
    ]
    assert Memory(name="n", description="d", type="user", body="x").missing_why_how() == []


def test_a_field_named_handler_is_kept_as_frontmatter():
    # python-frontmatter's Post(content, handler, **metadata): passed as **fields, `handler` broke dumps.
    text = dump_document({"name": "n", "description": "d", "type": "user", "handler": "payments-team"}, "Body.")
    assert parse_document(text).fields["handler"] == "payments-team"
