"""The scan reuses headers it has read only while the file is provably unchanged (the warm server's fast path)."""

from __future__ import annotations

import os

from memdir.scan import scan


def _memory(path, description):
    path.write_text(f"---\nname: Note\ndescription: {description}\ntype: project\n---\n\nBody.\n", encoding="utf-8")


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(tmp_path):
    note = tmp_path / "project_note.md"
    _memory(note, "Deploys go out on Monday")
    first = scan(tmp_path).headers[0]
    assert scan(tmp_path).headers[0] is first  # unchanged: the header read before is reused
    before = os.stat(note)
    _memory(note, "Deploys go out on Friday")  # same length
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old mtime: only ctime moved
    assert scan(tmp_path).headers[0].description == "Deploys go out on Friday"


def test_a_file_swapped_for_a_symlink_is_not_served_from_memory(tmp_path):
    note = tmp_path / "project_note.md"
    _memory(note, "Deploys go out on Monday")
    assert scan(tmp_path).headers
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    _memory(outside, "Secret elsewhere")
    note.unlink()
    note.symlink_to(outside)
    assert scan(tmp_path).headers == []  # a symlink is not a memory (doctor reports it), cached or not


def test_a_file_scanned_from_two_roots_has_each_roots_relative_path(tmp_path):
    # the personal folder's scan sees team memory as team/x.md; the team folder's own scan, as x.md
    (tmp_path / "team").mkdir()
    _memory(tmp_path / "team" / "project_note.md", "Team deploys")
    assert [h.rel_path for h in scan(tmp_path).headers] == ["team/project_note.md"]
    assert [h.rel_path for h in scan(tmp_path / "team").headers] == ["project_note.md"]
    assert [h.rel_path for h in scan(tmp_path).headers] == ["team/project_note.md"]
