"""A 20,000-memory folder built from the real one: every write and check completes, and MEMORY.md stays
within what Claude Code loads. Timings live in benchmarks/scale.py, not here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memdir import constants as C
from memdir.index import OVERFLOW_NOTE

pytestmark = pytest.mark.slow
COUNT = 20_000


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory, realdata):
    from benchmarks.realistic import build

    return build(tmp_path_factory.mktemp("big") / "memory", COUNT,
                 source_folder=realdata / "memory-folders" / "application-pipeline")


def _memdir(folder, *argv: str):
    # A first doctor reads and secret-scans all 20,000 files: minutes on a busy 2-core machine.
    proc = subprocess.run([sys.executable, "-m", "memdir.entry.cli", "--dir", str(folder), *argv],
                          capture_output=True, text=True, env={**os.environ, "MEMDIR_DENSE": "0"}, timeout=900)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _within_load_cap(folder) -> str:
    text = (folder / C.INDEX_NAME).read_text(encoding="utf-8")
    assert len(text.splitlines()) <= C.INDEX_MAX_LINES and len(text) <= C.INDEX_MAX_CHARS
    return text


def test_remember_forget_rebuild_and_doctor_complete_on_20000_memories(big_folder):
    assert sum(1 for p in big_folder.glob("*.md") if p.name != C.INDEX_NAME) == COUNT
    first = _memdir(big_folder, "remember", "--type", "feedback",
                    "Run the staging smoke test before tagging a release, because a tag deploys to production")
    assert first.returncode == 0, first.stderr
    created = first.stdout.split()[-1]
    assert (big_folder / created).is_file()
    assert created in _within_load_cap(big_folder)

    listed = _memdir(big_folder, "list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == COUNT + 1 and created in listed.stdout

    gone = _memdir(big_folder, "forget", created)
    assert gone.returncode == 0, gone.stderr
    assert not (big_folder / created).exists() and created not in _within_load_cap(big_folder)

    rebuilt = _memdir(big_folder, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert OVERFLOW_NOTE in _within_load_cap(big_folder)  # one line says how the others are found

    for run in range(2):  # the second run answers from .memdir/file-facts.json: the same findings
        doctor = _memdir(big_folder, "doctor", "--json")
        assert doctor.returncode in (0, 1), doctor.stderr  # 1: the real folder's own malformed headers
        findings = doctor.stdout
        if run == 0:
            first_findings = findings
    assert findings.count('"code"') == first_findings.count('"code"')
    assert '"index-over-cap"' not in findings and '"index-drift"' not in findings
    assert (big_folder / C.STATE_DIRNAME / "file-facts.json").is_file()
