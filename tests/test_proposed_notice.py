""""N memories proposed: `memdir review`" reaches the user once per set of proposals (write mode confirm)."""

from __future__ import annotations

import os

import pytest

from memdir import proposals, safefs

NOTE = "---\nname: {0}\ndescription: {0}\ntype: project\n---\n{0}\n"


def _propose(folder, target: str, text: str, run: str = "r1"):
    return proposals.propose(folder, target=target, action="create", text=NOTE.format(text), source="t", run=run)


def _later(folder, proposal) -> None:
    """The proposal's file a second newer, as a rewrite a moment later leaves it on any clock."""
    path = folder / proposals.FOLDER / f"{proposal.id}.json"
    stamp = path.stat().st_mtime + 1
    os.utime(path, (stamp, stamp))


def test_a_proposal_rewritten_in_place_is_not_told_again(tmp_path):
    """A run's later proposal for the same file replaces its earlier one (the worker's next chunk): the same set,
    which the old check (the newest file's mtime) told again as "1 memory proposed"."""
    folder = tmp_path / "memory"
    folder.mkdir()
    first = _propose(folder, "project_deploys.md", "Deploys on Tuesdays")
    assert proposals.new_batch_notice(folder) == "1 memory proposed: `memdir review`"

    again = _propose(folder, "project_deploys.md", "Deploys on Tuesdays, after the freeze check")
    _later(folder, again)

    assert again.id == first.id and proposals.new_batch_notice(folder) is None
    _propose(folder, "project_freeze.md", "The freeze is on Mondays")
    assert proposals.new_batch_notice(folder) == "2 memories proposed: `memdir review`"  # a new one is news
    assert proposals.new_batch_notice(folder) is None


def test_two_hooks_at_once_tell_it_once(tmp_path, monkeypatch):
    """Two prompt hooks (memdir registered twice) both read `.told` before either wrote it: both told the user."""
    folder = tmp_path / "memory"
    folder.mkdir()
    _propose(folder, "project_deploys.md", "Deploys on Tuesdays")
    twin: list[str | None] = []
    real = safefs.read_text_or

    def read_while_a_twin_runs(root, rel, *args, **kwargs):
        value = real(root, rel, *args, **kwargs)
        if rel == proposals.TOLD and not twin:
            twin.append(None)
            twin[0] = proposals.new_batch_notice(folder)  # the other hook, between this one's read and write
        return value

    monkeypatch.setattr(safefs, "read_text_or", read_while_a_twin_runs)
    first = proposals.new_batch_notice(folder)

    assert [first, *twin].count("1 memory proposed: `memdir review`") == 1


def test_a_decided_proposals_name_given_to_a_new_one_is_news(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    first = _propose(folder, "project_deploys.md", "Deploys on Tuesdays")
    assert proposals.new_batch_notice(folder)
    proposals.move_aside(folder, first, "accepted")
    assert proposals.new_batch_notice(folder) is None

    second = _propose(folder, "project_deploys.md", "Deploys on Thursdays now", run="r2")

    assert second.id == first.id and proposals.new_batch_notice(folder) == "1 memory proposed: `memdir review`"


def test_a_told_file_from_an_older_memdir_is_not_told_again(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    proposal = _propose(folder, "project_deploys.md", "Deploys on Tuesdays")
    newest = (folder / proposals.FOLDER / f"{proposal.id}.json").stat().st_mtime_ns
    (folder / proposals.FOLDER / ".told").write_text(str(newest))

    assert proposals.new_batch_notice(folder) is None


@pytest.mark.parametrize("garbled", [b"\xff\xfe\x00garbled\x80", b"x" * (3 << 20)])
def test_a_garbled_told_record_is_replaced_and_the_notice_told_once(tmp_path, garbled):
    """A `.told` that is not UTF-8 or is over the read cap (garbled, or planted) was an error read as 'nothing to
    tell', and never rewritten: the user was never told of any proposal again. It now counts as nothing told, and a
    fresh record is written."""
    folder = tmp_path / "memory"
    folder.mkdir()
    _propose(folder, "project_deploys.md", "Deploys on Tuesdays")
    (folder / proposals.TOLD).write_bytes(garbled)

    assert proposals.new_batch_notice(folder) == "1 memory proposed: `memdir review`"
    assert proposals.new_batch_notice(folder) is None
