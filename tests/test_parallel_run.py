"""The suite runs on every core (tests/xdist_plugin.py): folders kept whole, a hung test reported once with its
stacks, and the hostile suite's tallies added up across workers as a serial run counts them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.conftest import Poisoning, Tally
from tests.xdist_plugin import scope_of

REPO = Path(__file__).resolve().parents[1]


def test_the_folders_that_need_one_process_are_one_unit_and_every_other_test_its_own():
    assert scope_of("tests/hostile/test_fuzz.py::test_transcript_reader") == "tests/hostile/"
    assert scope_of("tests/hostile/test_zz_secret_scan.py::test_no_secret_in_any_file_memdir_wrote") == "tests/hostile/"
    assert scope_of("tests/realclient/test_claude_code.py::test_x[a]") == "tests/realclient/"
    assert scope_of("tests/browser/test_ui_browser.py::test_x") == "tests/browser/"
    assert scope_of("tests/test_store.py::test_x") == "tests/test_store.py::test_x"
    assert scope_of("tests/test_hostile_names.py::test_x") == "tests/test_hostile_names.py::test_x"


def test_workers_tallies_add_up_to_what_one_process_counts():
    one, a, b = Tally(), Tally(), Tally()
    for tally, tried, hangs in ((one, 7, 1), (a, 3, 1), (b, 4, 0)):
        tally.tried, tally.hangs = tried, hangs
        tally.notes += ["hang: 3"] * hangs
    merged = Tally()
    merged.merge(a.state())
    merged.merge(b.state())
    assert merged.line() == one.line() and merged.notes == ["hang: 3"]
    whole, left, right = Poisoning(), Poisoning(), Poisoning()
    for way, payload, planted, part in (("readme", "en", False, left), ("readme", "de", True, right),
                                        ("issue", "en", False, right)):
        whole.add(way, payload, planted=planted)
        part.add(way, payload, planted=planted)
    merged_poisoning = Poisoning()
    merged_poisoning.merge(left.state())
    merged_poisoning.merge(right.state())
    assert merged_poisoning.line() == whole.line()


WHOLE = """import os, time
def _log(name):
    with open(os.environ["ORDER_LOG"], "a") as f:
        f.write(f"{os.environ['PYTEST_XDIST_WORKER']} {name}\\n")
"""
HUNG = """import os, threading, time
import pytest

@pytest.mark.timeout(2)
def test_hangs():
    with open(os.environ["ORDER_LOG"], "a") as f:
        f.write(f"{os.environ['PYTEST_XDIST_WORKER']} hung.started\\n")
    threading.Thread(target=time.sleep, args=(30,), name="helper", daemon=True).start()
    print("said before hanging")
    time.sleep(60)
"""


@pytest.mark.slow  # a real two-worker run with a 2 s hang: about 15 s (.ci/run runs it with --slow)
def test_two_workers_keep_a_folder_whole_and_report_a_hang_once(tmp_path):
    folder = tmp_path / "tests" / "hostile"
    folder.mkdir(parents=True)
    for module in ("test_a", "test_b"):
        (folder / f"{module}.py").write_text(WHOLE + "".join(
            f"def test_{n}():\n    time.sleep(0.1)\n    _log('{module}.{n}')\n" for n in range(4)))
    (tmp_path / "tests" / "test_other.py").write_text(WHOLE + "".join(
        f"def test_{n}():\n    _log('other.{n}')\n" for n in range(6)))
    (tmp_path / "tests" / "test_hung.py").write_text(HUNG)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p tests.xdist_plugin -n 2 -p no:cacheprovider\n"
                                         "timeout_method = thread\n")  # as pyproject.toml sets it
    log = tmp_path / "order.log"
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240, env={**env, "PYTHONPATH": str(REPO), "ORDER_LOG": str(log)})
    assert proc.returncode == 1 and "1 failed, 14 passed" in proc.stdout, proc.stdout[-3000:]
    lines = [line.split() for line in log.read_text().splitlines()]
    assert [name for _worker, name in lines].count("hung.started") == 1  # run once, not re-run on a new worker
    whole = [(worker, name) for worker, name in lines if not name.startswith(("other.", "hung."))]
    assert [name for _worker, name in whole] == [f"{m}.{n}" for m in ("test_a", "test_b") for n in range(4)]
    assert len({worker for worker, _name in whole}) == 1
    # Reported (once in the failures; the short summary may repeat it, depending on the terminal's width).
    assert "crashed while running 'tests/test_hung.py::test_hangs'" in proc.stdout
    report = proc.stderr
    assert "+++ Timeout: tests/test_hung.py::test_hangs ran past 2 s +++" in report
    assert "said before hanging" in report and 'test_hung.py", line 10 in test_hangs' in report
