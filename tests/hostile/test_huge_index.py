"""MEMORY.md past memdir's old 2 MB read cap (issue 22, finding 11): about 25,000 memories' worth of lines.

Every later write used to exit 2 after writing the memory file. Here 2,000 memories are listed with
long lines (2.3 MB, over the old cap; 25,000 real files make the same index but cost the suite
seconds). Writes must succeed without touching the overgrown index, `doctor` must say what to do
without an error per memory, `index --rebuild` must bring MEMORY.md within what Claude Code loads
(200 lines, 25,000 characters) keeping the previous index byte for byte, and the index stays
within that from then on. An index past even the new read cap refuses a write before anything is
written.
"""

from __future__ import annotations

import io
import json

import pytest

from memdir import constants as C
from memdir.index import OVERFLOW_NOTE, fits
from tests.hostile.conftest import count_lost, one_clear_line, run_inproc

HOOK = "the project fact someone saved long ago " * 28  # a hand-lengthened hook: ~1,100 characters


def _overgrown(memory, n: int = 2_000) -> bytes:
    lines = []
    for i in range(n):
        name = f"project_fact_{i}.md"
        (memory / name).write_text(f"---\nname: fact-{i}\ndescription: fact {i}\ntype: project\n---\nFact {i}.\n\n"
                                   "**Why:** x\n**How to apply:** y\n")
        lines.append(f"- [fact-{i}]({name}) — {HOOK}")
    data = ("\n".join(lines) + "\n").encode()
    (memory / C.INDEX_NAME).write_bytes(data)
    assert len(data) > 2 * 1024 * 1024
    return data


@pytest.mark.slow  # seconds: tens of thousands of index lines (.ci/run runs it with --slow)
def test_an_overgrown_index_never_fails_a_write_and_rebuilds_within_the_cap(memory, tally, monkeypatch):
    before = _overgrown(memory)
    d = ("--dir", str(memory))
    code, out, err = run_inproc(tally, *d, "remember", "The user deploys on Fridays", "--type", "project")
    assert code == 0, err
    saved = [p for p in memory.glob("project_*.md") if not p.name.startswith("project_fact_")]
    assert len(saved) == 1 and "Fridays" in saved[0].read_text()  # named by its distinctive words
    assert (memory / C.INDEX_NAME).read_bytes() == before  # memdir never grows an index already past the cap

    code, out, _ = run_inproc(tally, *d, "doctor")
    assert code == 1 and "index-over-cap" not in out and "over the load cap" in out and "index --rebuild" in out
    assert "not listed in MEMORY.md" not in out  # no error per memory: one warning says why
    assert "1 memories are not listed" in out

    code, _, err = run_inproc(tally, *d, "index", "--rebuild")
    assert code == 0 and "not listed (Claude Code loads only 200 lines" in err, err
    lines = (memory / C.INDEX_NAME).read_text().splitlines()
    assert fits(lines) and lines[-1] == OVERFLOW_NOTE and lines[0].startswith("- [fact-0](project_fact_0.md)")
    kept = [p for p in (memory / ".memdir" / "history" / C.INDEX_NAME).iterdir() if p.read_bytes() == before]
    assert kept, "the overgrown index was not kept in history"
    count_lost(tally, {C.INDEX_NAME: before}, {C.INDEX_NAME: kept[0].read_bytes()})

    for text in ("The user reviews on Mondays", "The team ships on Tuesdays"):
        code, _, err = run_inproc(tally, *d, "remember", text, "--type", "project")
        assert code == 0, err
        assert fits((memory / C.INDEX_NAME).read_text().splitlines())
    code, out, _ = run_inproc(tally, *d, "doctor")
    assert code == 0 and "memories are not listed" in out, out
    code, out, _ = run_inproc(tally, *d, "recall", "when does the user review")
    reviews = next(p.name for p in memory.glob("project_*.md") if "reviews on Mondays" in p.read_text())
    assert code == 0 and reviews in out  # recall still finds unlisted ones

    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    from memdir.entry.hooks import main as hook

    tally.tried += 1
    out_io = io.StringIO()
    payload = json.dumps({"session_id": "s", "cwd": str(memory.parent), "source": "startup"})
    assert hook(["session-start"], stdin=io.StringIO(payload), stdout=out_io) == 0
    context = json.loads(out_io.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "fact-0" in context and "WARNING" not in context  # within the load cap: no truncation warning
    assert tally.tracebacks == 0 and tally.bytes_lost == 0


def test_an_index_past_the_read_cap_refuses_a_write_before_writing(memory, tally):
    (memory / C.INDEX_NAME).write_bytes(b"- [x](x.md) - hook\n" * (C.INDEX_READ_MAX_BYTES // 19 + 10))
    code, _, err = run_inproc(tally, "--dir", str(memory), "remember", "The user deploys on Fridays",
                              "--type", "project")
    assert one_clear_line(code, err) and "MEMORY.md" in err, err
    assert [p.name for p in memory.glob("*.md")] == [C.INDEX_NAME]  # nothing half-done
