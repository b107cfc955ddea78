"""`memdir consolidate` on a folder whose duplicate memories have hostile names (issue 24's merge).

A name that is not UTF-8 cannot be written into the merged memory's note (nor into MEMORY.md): it used
to end the run in a traceback half way, after the kept memory's old bytes were copied but before the
merge. Such a memory is skipped with one line saying to rename it; the others merge as usual.
"""

from __future__ import annotations

import os

from tests.hostile.conftest import run_cli

SAME = "---\nname: Deploy rule\ndescription: deploys go out on Tuesdays\ntype: project\n---\n\nDeploys go out on Tuesdays.\n"


def test_duplicates_with_odd_names_merge_or_are_skipped_in_one_line(memory, tally):
    names = [b"-x.md", b"dup.md", b"b\xffad.md", b"new\nline.md"]
    for name in names:
        (memory / os.fsdecode(name)).write_text(SAME)
    before = {name: (memory / os.fsdecode(name)).read_bytes() for name in names}
    proc = run_cli(tally, "--dir", str(memory), "consolidate", env={"MEMDIR_GIT_HISTORY": "1"})
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr
    assert "not UTF-8" in proc.stdout + proc.stderr  # the odd name is named, with the fix
    assert (memory / os.fsdecode(b"b\xffad.md")).read_bytes() == before[b"b\xffad.md"]  # left as it was
    assert len([p for p in memory.iterdir() if p.suffix == ".md" and p.name != "MEMORY.md"]) == 2
