"""Frontmatter built to exhaust a YAML reader (issue 22 finding 2), against every reader of the folder.

Each shape sits in one memory file beside a real one. Every reader runs in one child process
(tests/hostile/reader_driver.py) under a generous time limit and a 2 GB address-space limit: the
limits are the hang guard, not a speed claim. The promises: no reader hangs or prints a traceback,
the real memory is still recalled (one bad file never silences the folder), `list` shows the bad
file with a one-line reason, `doctor` reports it, and nothing planted expands.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.conftest import TALLY, TIMEOUT

REAL = "---\nname: Real\ndescription: editor choice vim\ntype: user\n---\nThe user edits with vim.\n"
HEAD = "---\nname: Bad\ndescription: PLANTED-DESCRIPTION\ntype: user\n"


def _laughs(open_: str, close: str, item: str) -> str:
    """Nine anchors, each nine aliases of the one before: 9**10 nodes once expanded, under 1 KB written."""
    lines = [f"a0: &a0 {open_}" + ",".join(item.format(j=j, v="lol") for j in range(9)) + close]
    lines += [f"a{i}: &a{i} {open_}" + ",".join(item.format(j=j, v=f"*a{i - 1}") for j in range(9)) + close
              for i in range(1, 10)]
    return "\n".join(lines)


SHAPES = {
    # refused outright: nothing of the header is used
    "laughs-maps": _laughs("{", "}", "k{j}: {v}"),
    "laughs-lists": _laughs("[", "]", "{v}"),
    "recursive-map": "x: &a {y: *a}",
    "recursive-list": "x: &a [*a]",
    "merge-alias": "base: &b {k: v}\nother: {<<: *b, j: w}",
    "deep-flow-map": "x: " + "{a: " * 3000 + "1" + "}" * 3000,
    "deep-flow-list": "x: " + "[" * 3000 + "]" * 3000,
    "deep-block-map": "x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 20)) + "  " * 20 + "v: 1",
    "many-values": "x: [" + "a," * 20_000 + "a]",
    "huge-header": "notes: [" + ", ".join(["word"] * 30_000) + "]",
    # read, with the dangerous value kept as text
    "int-4400-digits": "n: [" + "9" * 4400 + "]",
    "int-tagged": "n: !!int " + "9" * 5000 + "\nl: [x]",
    "int-sexagesimal": "n: [" + "1:" * 20_000 + "1]",
    # malformed: read leniently, as before
    "bad-date": "d: [2026-02-31]",
    "python-tag": "x: !!python/object/apply:os.system ['touch /tmp/memdir-pwned']",
    "unhashable-key": "? [a, b]\n: c\nl: [x]",
}
REFUSED = {"laughs-maps", "laughs-lists", "recursive-map", "recursive-list", "merge-alias", "deep-flow-map",
           "deep-flow-list", "deep-block-map", "many-values", "huge-header"}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.fixture(scope="module")
def outcomes(hostile_root) -> dict[str, dict[str, dict]]:
    """Every reader against every shape, in one child process: {shape: {step: outcome}}.

    The steps run per folder with a 30 s alarm each; the whole run has a time limit too, for a stall
    in C code that an alarm cannot interrupt. A hang is counted, never waited out.
    """
    home = hostile_root / "written" / "yaml-bombs"
    argv, folders = [], {}
    for shape, header in SHAPES.items():
        memory = home / shape / "memory"
        memory.mkdir(parents=True)
        text = HEAD + header + "\n---\nThe PLANTED body.\n"
        (memory / "user_real.md").write_text(REAL)
        (memory / "user_bad.md").write_text(text)
        (memory / "MEMORY.md").write_text("- [Real](user_real.md) — editor choice vim\n")
        (memory.parent / "planted.txt").write_text(text)
        argv += [str(memory), str(memory.parent / "planted.txt")]
        folders[str(memory)] = shape
    result: dict[str, dict[str, dict]] = {shape: {} for shape in SHAPES}
    try:
        proc = subprocess.run([sys.executable, "-m", "tests.hostile.reader_driver", *argv], capture_output=True,
                              text=True, timeout=TIMEOUT * 10, preexec_fn=_limit_memory, env={**os.environ,
                              "HOME": str(home)}, cwd=Path(__file__).resolve().parents[2])
        stdout, failure = proc.stdout, proc.stderr[-2000:] if proc.returncode else ""
    except subprocess.TimeoutExpired as exc:
        stdout, failure = (exc.stdout or b"").decode(), "the readers hung"
    for line in stdout.splitlines():
        if line.startswith("{"):
            outcome = json.loads(line)
            result[folders[outcome["folder"]]][outcome["step"]] = outcome
    TALLY.tried += sum(len(steps) for steps in result.values())
    for shape, steps in result.items():
        for step, outcome in steps.items():
            if outcome["exc"] == "hang":
                TALLY.hangs += 1
                TALLY.notes.append(f"hang: {step} ({shape})")
            elif outcome["exc"] or "Traceback" in outcome["err"]:
                TALLY.tracebacks += 1
                TALLY.notes.append(f"traceback: {step} ({shape}): {outcome['exc'] or outcome['err']}"[:240])
    if failure:
        TALLY.hangs += "hung" in failure
        TALLY.notes.append(f"reader driver: {failure.splitlines()[-1] if failure.strip() else 'failed'}")
    return result


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_reader_survives_a_planted_header(shape, outcomes):
    steps = outcomes[shape]
    memory = Path(next(iter(steps.values()))["folder"]) if steps else None
    assert memory is not None, "the reader driver produced nothing"
    assert not [s for s, o in steps.items() if o["exc"]], {s: o["exc"] for s, o in steps.items() if o["exc"]}
    assert len(steps) == 19, sorted(steps)
    assert [steps[f"consolidate --engine offline{dry}"]["code"] for dry in ("", " --dry-run")] == [0, 0]
    for step in ("recall " + "which editor does the user use", "hook prompt", "server handle"):
        assert "The user edits with vim." in steps[step]["out"], (step, steps[step])  # the folder is not silenced
    bad_line = [line for line in steps["list"]["out"].splitlines() if "user_bad.md" in line]
    assert len(bad_line) == 1, steps["list"]["out"]
    listed = {m["file"]: m for m in json.loads(steps["list --json"]["out"])}
    assert "user_real.md" in listed and "user_bad.md" in listed
    assert steps["show Real"]["code"] == 0 and steps["remember The user deploys on Fridays --type project"]["code"] == 0
    assert steps["stop worker"]["code"] == 0
    assert "worker failed" not in (memory / ".memdir" / "hook.log").read_text()
    assert any("Mondays" in p.read_text() for p in memory.glob("*.md") if p.name != "MEMORY.md"), "the worker saved nothing"
    if shape in REFUSED:
        # the scan reads 64 KB of a header: a longer one is cut, and reported as not closed
        reason = "frontmatter is not closed" if shape == "huge-header" else "frontmatter refused:"
        assert reason in bad_line[0] and reason in listed["user_bad.md"]["problem"]
        assert f"[error] user_bad.md: {reason}" in steps["doctor"]["out"] and steps["doctor"]["code"] == 1
        for step in ("recall " + "which editor does the user use", "hook prompt", "server handle"):
            assert "PLANTED" not in steps[step]["out"]  # recall skips it
        assert steps["memory tool create"]["out"].startswith("refused: "), steps["memory tool create"]
        assert not (memory / "user_planted.md").exists()
        assert "Error" in steps["agent Write"]["out"] or "frontmatter" in steps["agent Write"]["out"]
        assert not (memory / "user_agent.md").exists()
    assert not Path("/tmp/memdir-pwned").exists()
    assert TALLY.tracebacks == 0 and TALLY.hangs == 0
