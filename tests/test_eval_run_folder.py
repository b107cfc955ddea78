"""Two eval runs started in the same second with the same engine each get their own run folder (hostile23 found
them sharing one: the later run's misses, results and summary overwrote the earlier's). The clock is frozen on one
second for every run here."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memdir.prompts import TEMPLATES_DIR
from tests.test_cassette_replay import CASSETTE

_CASE = """
- id: payments
  memories: [{file: user_a.md, name: A, description: "Alice leads payments", type: user}]
  query: "who leads payments?"
  expect: [user_a.md]
"""


@pytest.fixture
def one_second(monkeypatch):
    """Every `time.strftime` without a time of its own formats the same second."""
    real, frozen = time.strftime, time.localtime(1_780_000_000)
    monkeypatch.setattr(time, "strftime", lambda fmt, when=None: real(fmt, frozen if when is None else when))


def test_two_case_runs_in_one_second_each_write_their_own_folder(cli, tmp_path, one_second):
    cases = tmp_path / "cases"
    (cases / "recall").mkdir(parents=True)
    (cases / "recall" / "cases.yaml").write_text(_CASE, encoding="utf-8")
    runs = tmp_path / "runs"
    for _ in range(2):
        code, _, err = cli("eval", "run", "--suite", "recall", "--engine", "offline", "--cases", str(cases),
                           "--out", str(runs))
        assert code == 0, err
    folders = sorted(p.name for p in runs.iterdir())
    assert len(folders) == 2 and folders[0].endswith("-offline") and folders[1] == folders[0] + "-2", folders
    assert all((runs / name / "summary.md").is_file() and (runs / name / "results.jsonl").is_file() for name in folders)


@pytest.mark.slow  # two replays, ~2 s: the folder race below shows the same in the default suite
def test_two_replays_that_miss_in_one_second_keep_their_own_misses(realdata, cli, tmp_path, one_second, monkeypatch):
    """The misses folder is inside the run folder: each run's diff shows its own changed prompt."""
    monkeypatch.delenv("MEMDIR_MEMORY_FORM", raising=False)  # as the cassette was recorded
    original = (Path(TEMPLATES_DIR) / "extract_system.j2").read_text(encoding="utf-8")
    runs = tmp_path / "runs"
    for line in ("FIRST CHANGED LINE.", "SECOND CHANGED LINE."):
        variant = tmp_path / line.split()[0].lower()
        variant.mkdir()
        (variant / "extract_system.j2").write_text(f"{line}\n{original}", encoding="utf-8")
        code, _, err = cli("eval", "run", "--suite", "realdata", "--replay", str(CASSETTE), "--out", str(runs),
                           "--variant", str(variant), "--session", "sessions2/en-flywheel-askuser", "--skip-no-loss")
        assert code == 1, err
    diffs = sorted((runs.glob("*/replay-misses/0001.diff")), key=lambda p: len(p.parent.parent.name))
    assert len(diffs) == 2, sorted(str(p) for p in runs.rglob("*"))
    assert "+FIRST CHANGED LINE." in diffs[0].read_text(encoding="utf-8").splitlines()
    assert "+SECOND CHANGED LINE." in diffs[1].read_text(encoding="utf-8").splitlines()


def test_runs_making_their_folders_at_the_same_moment_never_share_one(tmp_path, one_second):
    """Exclusive creation: of runs racing for one name, one gets it and each other the next free suffix; what
    is already at a name (another run's folder, a file, a link) is left as it was."""
    from memdir.evals.run_folder import new_run_folder

    taken = new_run_folder(tmp_path, "offline")
    (taken / "summary.md").write_text("an earlier run's", encoding="utf-8")
    (tmp_path / f"{taken.name}-2").write_text("a file", encoding="utf-8")
    (tmp_path / f"{taken.name}-3").symlink_to(tmp_path / "elsewhere")
    start, made = threading.Barrier(6), []

    def run() -> None:
        start.wait()
        made.append(new_run_folder(tmp_path, "offline"))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(p.name for p in made) == sorted(f"{taken.name}-{n}" for n in range(4, 10))
    assert all(p.is_dir() and not p.is_symlink() and not any(p.iterdir()) for p in made)
    assert (taken / "summary.md").read_text(encoding="utf-8") == "an earlier run's"
    assert (tmp_path / f"{taken.name}-2").read_text(encoding="utf-8") == "a file"
    assert not (tmp_path / "elsewhere").exists()


def test_a_run_that_fails_before_writing_leaves_no_folder_behind(cli, tmp_path):
    """A run refused before its first miss or summary (here: items.json names a transcript that is not there) takes
    its empty folder away again; a run that wrote something keeps its folder."""
    data, runs = tmp_path / "data", tmp_path / "runs"
    data.mkdir()
    (data / "items.json").write_text('[{"file": "gone.jsonl", "type": "user", "text": "x", "keywords": ["x"]}]',
                                     encoding="utf-8")
    code, _, err = cli("eval", "run", "--suite", "realdata", "--engine", "offline", "--data", str(data),
                       "--out", str(runs))
    assert code == 1 and "gone.jsonl is not a transcript" in err
    assert runs.is_dir() and list(runs.iterdir()) == []
    (data / "items.json").write_text("[]", encoding="utf-8")
    code, _, err = cli("eval", "run", "--suite", "realdata", "--engine", "offline", "--data", str(data),
                       "--out", str(runs))
    assert code == 0, err
    assert [p.name for p in runs.glob("*/summary.md")] == ["summary.md"]


def test_a_folder_someone_wrote_into_is_never_taken_away(tmp_path):
    from memdir.evals.run_folder import own_run_folder

    with pytest.raises(RuntimeError), own_run_folder(tmp_path, "offline") as out:
        (out / "replay-misses").mkdir()
        raise RuntimeError("the run failed after its first miss")
    assert (out / "replay-misses").is_dir()
