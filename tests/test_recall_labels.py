"""The real-folder recall benchmark's scoring (benchmarks/realdata_labels.py), on a tiny synthetic
folder: the precision/recall/silence arithmetic, label-file errors, and one end-to-end run."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import recall_realdata
from benchmarks.realdata_labels import DEFAULT_LABELS, LabelError, Run, load_labels, prompt_lines, unknown_gold

LABELS = """\
folder: tiny
sets:
  - name: dev
    prompts:
      - prompt: "deploy the payments service"
        gold:
          project_deploy.md: how deploys work
          feedback_freeze.md: release freeze rule
      - prompt: "what is the capital of Portugal?"
        off_topic: true
        gold: {}
  - name: heldout
    held_out: true
    prompts:
      - prompt: "which grafana dashboard shows latency?"
        gold:
          reference_grafana.md: the dashboard link
      - prompt: "rotate the api keys"
        gold: {}
"""

MEMORIES = {
    "project_deploy.md": ("Deploys", "payments service deploys run from the release branch via make deploy"),
    "feedback_freeze.md": ("Release freeze", "no deploys of payments on Fridays during the release freeze"),
    "reference_grafana.md": ("Grafana", "the latency dashboard for payments lives in grafana under ops/latency"),
    "user_role.md": ("Role", "the user is a backend engineer who likes short answers"),
}


def write_folder(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, (title, description) in MEMORIES.items():
        kind = name.split("_")[0]
        (root / name).write_text(f"---\nname: {title}\ndescription: {description}\ntype: {kind}\n---\n\n{description}.\n",
                                 encoding="utf-8")
    (root / "MEMORY.md").write_text("".join(f"- [{t}]({n}) — {d}\n" for n, (t, d) in MEMORIES.items()), encoding="utf-8")
    return root


@pytest.fixture
def labels_file(tmp_path) -> Path:
    path = tmp_path / "labels.yaml"
    path.write_text(LABELS, encoding="utf-8")
    return path


def scripted(labels, picks: dict[str, tuple[list[str], int]]) -> Run:
    return recall_realdata.run("scripted", lambda prompt: picks[prompt], labels)


def test_precision_recall_and_silence_are_pooled_over_a_sets_prompts(labels_file):
    labels = load_labels(labels_file)
    result = scripted(labels, {
        "deploy the payments service": (["project_deploy.md", "user_role.md", "reference_grafana.md"], 900),
        "what is the capital of Portugal?": ([], 0),
        "which grafana dashboard shows latency?": (["reference_grafana.md", "project_deploy.md"], 500),
        "rotate the api keys": (["user_role.md"], 100),
    })
    dev = result.tally({"dev"})
    assert (dev.picks, dev.relevant_picks, dev.gold, dev.gold_picked) == (3, 1, 2, 1)
    assert dev.precision == pytest.approx(1 / 3) and dev.recall == pytest.approx(1 / 2)
    assert (dev.off_topic_silent, dev.off_topic, dev.empty_gold_silent, dev.empty_gold) == (1, 1, 1, 1)
    assert dev.mean_picks == pytest.approx(1.5) and dev.mean_chars == pytest.approx(450)

    held = result.tally({"heldout"})
    assert held.precision == pytest.approx(1 / 3) and held.recall == pytest.approx(1.0)
    assert (held.empty_gold_silent, held.empty_gold, held.off_topic) == (0, 1, 0)

    everything = result.tally()
    assert everything.precision == pytest.approx(2 / 6) and everything.recall == pytest.approx(2 / 3)
    assert everything.mean_chars == pytest.approx(1500 / 4)


def test_nothing_picked_has_no_precision_and_a_repeated_pick_counts_once(labels_file):
    labels = load_labels(labels_file)
    silent = scripted(labels, {case.prompt: ([], 0) for case in labels.cases}).tally()
    assert silent.precision is None and silent.recall == 0.0 and silent.empty_gold_silent == 2
    doubled = scripted(labels, {case.prompt: (["project_deploy.md", "project_deploy.md"], 10)
                                for case in labels.cases}).tally({"dev"})
    assert (doubled.picks, doubled.relevant_picks, doubled.gold_picked) == (2, 1, 1)


def test_prompt_lines_mark_gold_picks_and_list_misses(labels_file):
    labels = load_labels(labels_file)
    result = scripted(labels, {case.prompt: (["user_role.md", "project_deploy.md"], 42) for case in labels.cases})
    lines = prompt_lines(result.outcomes[0])
    assert lines[1:] == ["    - user_role.md", "    + project_deploy.md", "    missed feedback_freeze.md"]


@pytest.mark.parametrize("text, field", [
    ("sets:\n  - name: a\n    prompts:\n      - prompt: x\n        gold: [a.md]\n", "prompts[0].gold"),
    ("sets:\n  - name: a\n    prompts:\n      - prompt: x\n        off_topic: true\n        gold:\n          a.md: why\n",
     "off_topic"),
    ("sets:\n  - name: a\n    prompts:\n      - gold: {}\n", "prompt"),
    ("sets: [oops\n", "invalid YAML at line"),
])
def test_a_bad_label_file_is_one_line_naming_the_field(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabelError) as caught:
        load_labels(path)
    message = str(caught.value)
    assert str(path) in message and field in message and "\n" not in message


def test_gold_files_missing_from_the_folder_are_reported(tmp_path, labels_file):
    folder = write_folder(tmp_path / "tiny")
    (folder / "feedback_freeze.md").unlink()
    assert unknown_gold(load_labels(labels_file), folder) == ["feedback_freeze.md"]
    code = recall_realdata.main(["--labels", str(labels_file), "--folder", str(folder)])
    assert code == 2


def test_a_run_over_a_tiny_folder_prints_every_mode_and_group(tmp_path, labels_file, monkeypatch, capsys):
    monkeypatch.setenv("MEMDIR_DENSE", "0")
    folder = write_folder(tmp_path / "tiny")
    assert recall_realdata.main(["--labels", str(labels_file), "--folder", str(folder)]) == 0
    out = capsys.readouterr().out
    for mode in ("top-5 lexical (old)", "offline lexical"):
        assert f"== {mode}" in out
        for group in ("dev ", "heldout (held out)", "all "):
            assert any(line.startswith(mode) and group in line for line in out.splitlines()), (mode, group)
    # The baseline has no bar: the payments prompt gets every memory sharing a word with it.
    baseline = out.split("== offline lexical")[0]
    assert "+ project_deploy.md" in baseline and "+ feedback_freeze.md" in baseline
    # The folder was copied, never written: no recall state appears in the source.
    assert not (folder / ".memdir").exists()


def test_the_shipped_labels_load_and_keep_a_held_out_set():
    labels = load_labels(DEFAULT_LABELS)
    assert labels.held_out() and labels.held_out() != set(labels.set_names())
    assert all(not case.gold for case in labels.cases if case.off_topic)
