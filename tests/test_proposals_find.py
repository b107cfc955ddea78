"""`memdir review <ref>` finds a proposal by its target's name or stem as pathlib named them (issue 26 took
pathlib out of memdir.proposals): a target's trailing dot or leading dots are part of its stem."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given, settings, strategies as st

from memdir import proposals

_TEXT = "---\nname: x\ndescription: x\ntype: project\n---\nx\n"


@given(st.text(alphabet="a./", max_size=10))
@settings(max_examples=400, deadline=None)
def test_a_target_s_name_and_stem_are_pathlib_s(target):
    path = PurePosixPath(target)
    assert proposals._name_and_stem(target) == (path.name, path.stem)


def test_a_stem_with_a_trailing_dot_is_not_the_stem_without_it(tmp_path):
    """`foo.` has the stem `foo.` (pathlib): `review foo` names the one proposal for `foo.md`, not both."""
    proposals.propose(tmp_path, target="notes/foo.", action="create", text=_TEXT, source="t")
    wanted = proposals.propose(tmp_path, target="notes/foo.md", action="create", text=_TEXT, source="t")
    assert proposals.find(tmp_path, "foo").id == wanted.id
    assert proposals.find(str(tmp_path), "foo.md").id == wanted.id
