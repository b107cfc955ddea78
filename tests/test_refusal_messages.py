"""Refusals say what is there and why memdir will not touch it; "no memory named X" only when
nothing is there at all."""

from __future__ import annotations

import os

import pytest

MEMORY = "---\nname: real\ndescription: a real memory\ntype: user\n---\nThe user is a data engineer.\n"


@pytest.fixture
def odd_folder(memory_dir, tmp_path):
    memory_dir.mkdir(parents=True)
    (memory_dir / "user_real.md").write_text(MEMORY)
    (memory_dir / "MEMORY.md").write_text("# Memory\n- [real](user_real.md) — a real memory\n")
    outside = tmp_path / "outside.md"
    outside.write_text(MEMORY.replace("real", "outside"))
    os.mkfifo(memory_dir / "pipe.md")
    (memory_dir / "link.md").symlink_to(outside)
    (memory_dir / "notes").mkdir()
    return memory_dir


def _entries(folder) -> dict[str, tuple]:
    """The folder's entries as they are on disk; `.memdir/` (memdir's own state: with the git history on,
    `history` and `restore` first commit what others changed) is not the folder's content."""
    return {p.name: (os.lstat(p).st_mode, os.lstat(p).st_ino, os.lstat(p).st_size, os.lstat(p).st_mtime_ns)
            for p in folder.iterdir() if p.name != ".memdir"}


@pytest.mark.parametrize("argv, kind", [
    (["show", "pipe.md"], "a FIFO"),
    (["show", "pipe"], "a FIFO"),
    (["show", "link"], "a symlink"),
    (["forget", "pipe.md"], "a FIFO"),
    (["forget", "link.md"], "a symlink"),
    (["history", "pipe.md"], "a FIFO"),
    (["restore", "link.md"], "a symlink"),
    (["show", "notes"], "a folder"),
])
def test_a_non_regular_entry_is_named_for_what_it_is(odd_folder, cli, argv, kind):
    before = _entries(odd_folder)
    code, out, err = cli("--dir", str(odd_folder), *argv)
    assert code != 0 and out == ""
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert kind in line and "no memory named" not in line
    if kind != "a folder":
        assert "memdir doctor" in line and "refuse" in line
    assert _entries(odd_folder) == before  # nothing touched


def test_the_index_is_not_called_missing(odd_folder, cli):
    code, _, err = cli("--dir", str(odd_folder), "show", "MEMORY.md")
    assert code != 0 and "no memory named" not in err and "memdir index" in err


def test_a_name_that_is_truly_absent_still_says_so(odd_folder, cli):
    code, _, err = cli("--dir", str(odd_folder), "show", "nothing-here")
    assert code != 0 and "no memory named 'nothing-here'" in err


def test_restore_onto_a_symlink_with_history_names_it(odd_folder, store, cli):
    from memdir import history

    history.keep_bytes(store.state_dir, "link.md", MEMORY.encode(), "deleted")
    code, _, err = cli("--dir", str(odd_folder), "restore", "link.md")
    assert code != 0 and "a symlink" in err and "memdir doctor" in err
    assert (odd_folder / "link.md").is_symlink()


def test_a_team_memory_named_from_the_personal_folder_points_to_team(odd_folder, cli):
    (odd_folder / "team").mkdir()
    (odd_folder / "team" / "project_deploy.md").write_text(MEMORY.replace("real", "deploy"))
    code, _, err = cli("--dir", str(odd_folder), "show", "team/project_deploy.md")
    assert code != 0 and "no memory named" not in err and "--team project_deploy.md" in err
    code, out, _ = cli("--dir", str(odd_folder), "show", "--team", "project_deploy.md")
    assert code == 0 and "deploy" in out
