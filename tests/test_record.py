"""memdir.record: fields declared as annotations behave like a dataclass's (the basics are in test_transcript)."""

from __future__ import annotations

import pytest

from memdir.record import FrozenRecord, Record, field


class Draftish(Record):
    type: str
    why: str | None = None
    kind: str = field(kw_only=True)
    tags: list[str] = field(default_factory=list)


class Point(FrozenRecord):
    x: int
    y: int = 0


def test_fields_become_slots_in_declaration_order():
    d = Draftish("user", kind="role")
    assert Draftish.__slots__ == ("type", "why", "kind", "tags")
    assert repr(d) == "Draftish(type='user', why=None, kind='role', tags=[])"
    with pytest.raises(AttributeError):
        d.not_a_field = 1  # type: ignore[attr-defined]  # slots: a typo is an error, not a new attribute


def test_keyword_only_field_is_required_and_never_positional():
    with pytest.raises(TypeError, match="missing 'kind'"):
        Draftish("user", "because")  # type: ignore[call-arg]
    # The third positional argument goes to the next positional field, as in a dataclass.
    with pytest.raises(TypeError, match="at most 3 positional"):
        Draftish("user", "because", ["a"], "extra")  # type: ignore[call-arg]
    assert Draftish("user", "because", ["a"], kind="role").tags == ["a"]


def test_factory_defaults_are_fresh_and_plain_defaults_shared():
    a, b = Draftish("user", kind="k"), Draftish("user", kind="k")
    a.tags.append("x")
    assert b.tags == [] and a != b


def test_frozen_record_is_hashable_and_read_only():
    p = Point(1)
    with pytest.raises(AttributeError, match="read-only"):
        p.x = 2  # type: ignore[misc]
    assert {Point(1, 0), p} == {p} and p.replace(y=3) == Point(1, 3)
    with pytest.raises(TypeError):
        hash(Draftish("user", kind="k"))  # mutable records are unhashable, like a plain dataclass


def test_subclass_extends_the_parent_fields():
    class Point3(Point):
        z: int = 0

    q = Point3(1, 2, 3)
    assert (q.x, q.y, q.z) == (1, 2, 3) and q != Point(1, 2) and Point3.__slots__ == ("z",)


def test_old_style_slots_declaration_is_refused_with_the_fix():
    with pytest.raises(TypeError, match="declare Record fields as class annotations"):
        class Old(Record):  # noqa: F841
            __slots__ = ("a",)


def test_lazily_evaluated_annotations_are_refused_not_read_as_no_fields():
    # What Python 3.14 puts in a class body without `from __future__ import annotations`.
    with pytest.raises(TypeError, match="from __future__ import annotations"):
        type(Record)("Lazy", (Record,), {"__annotate__": lambda fmt: {"a": int}})
