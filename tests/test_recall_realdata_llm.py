"""The llm recall engine on a labelled folder with a model in the loop (benchmarks/recall_realdata_llm.py).

CI replays `tests/cassettes/recall_realdata`: the 8 prompts of the real folder's development set 1, answered by
hand through the relay by a helper acting as the model (relaym, 2026-11-27, under today's request).
Replaying checks that memdir's llm engine still sends exactly what was answered, and that the answers still score
the same. When the request changes on purpose (recall_system.j2, recall_user.j2, the manifest, the output schema),
re-record with the command in docs/evals-and-benchmarks.md ("The llm recall engine on the real folder").
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from benchmarks import recall_realdata
from benchmarks.recall_realdata_llm import asking_order
from memdir.prompts import TEMPLATES_DIR
from tests.relay_files import wait_for, write_answer

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "recall_realdata"
RECORDED_ROW = ["llm", "(replay;", "no", "latency)", "set1", "8", "14", "0.64", "0.53", "2/3", "2/3", "1.75", "2,307"]


def _bench(capsys, *args: str) -> tuple[int, str, str]:
    code = recall_realdata.main(["--engine", "llm", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_recorded_set1_answers_replay_to_the_same_scores(realdata, capsys, tmp_path):
    code, out, err = _bench(capsys, "--sets", "set1", "--replay", str(CASSETTE), "--misses", str(tmp_path), "--quiet")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.startswith("llm (replay")]
    assert rows[0] == RECORDED_ROW, out
    assert "latency not measured" in out
    assert not any(tmp_path.iterdir())  # no miss


def test_a_changed_recall_prompt_fails_the_replay_with_a_diff_of_what_the_model_is_sent(realdata, capsys, tmp_path,
                                                                                       monkeypatch):
    variant = tmp_path / "variant"
    variant.mkdir()
    original = (Path(TEMPLATES_DIR) / "recall_system.j2").read_text(encoding="utf-8")
    (variant / "recall_system.j2").write_text("A CHANGED LINE OF THE SYSTEM PROMPT.\n" + original, encoding="utf-8")
    monkeypatch.setenv("MEMDIR_PROMPT_VARIANT", str(variant))
    misses = tmp_path / "misses"
    code, _, err = _bench(capsys, "--sets", "set1", "--replay", str(CASSETTE), "--misses", str(misses))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "no recorded answer" in lines[0] and str(misses / "0001.diff") in lines[0], err
    diff = (misses / "0001.diff").read_text(encoding="utf-8").splitlines()
    assert [line for line in diff if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))] \
        == ["+A CHANGED LINE OF THE SYSTEM PROMPT."]


MEMORIES = {
    "project_release_day.md": ("Releases go out on Tuesdays", "project", "Releases go out on Tuesdays."),
    "feedback_pnpm.md": ("Use pnpm, never npm, in this repo", "feedback", "Use pnpm; the lockfile is pnpm's."),
    "user_editor.md": ("The user edits in Helix", "user", "The user's editor is Helix."),
}
PROMPTS = {  # prompt -> (set, gold)
    "when is the next release going out?": ("alpha", ["project_release_day.md"]),
    "install the dependencies": ("alpha", ["feedback_pnpm.md"]),
    "what is the capital of Portugal?": ("omega", []),
}
PROMPTS_IN_LABEL_ORDER = list(PROMPTS)


def _labelled_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "memory"
    folder.mkdir()
    for name, (description, kind, body) in MEMORIES.items():
        (folder / name).write_text(f"---\nname: {name[:-3]}\ndescription: {description}\ntype: {kind}\n---\n{body}\n",
                                   encoding="utf-8")
    sets: dict[str, list] = {"alpha": [], "omega": []}
    for prompt, (set_name, gold) in PROMPTS.items():
        entry = {"prompt": prompt, "gold": {g: "GOLD-REASON-MARKER" for g in gold}}
        sets[set_name].append({**entry, "off_topic": True} if not gold else entry)
    labels = tmp_path / "labels.yaml"
    labels.write_text(json.dumps({"folder": "x", "sets": [{"name": "alpha", "prompts": sets["alpha"]},
                                                          {"name": "omega", "held_out": True,
                                                           "prompts": sets["omega"]}]}), encoding="utf-8")
    return folder, labels


def _text(files: list[str] | dict) -> dict:
    return {"content": [{"type": "text", "text": json.dumps(files if isinstance(files, dict)
                                                            else {"selected_memories": files})}]}


class Model(threading.Thread):
    """Answers each request with the prompt's gold files; request 1 first with an answer the schema rejects."""

    def __init__(self, relay: Path) -> None:
        super().__init__(daemon=True)
        self.relay, self.shown, self.problem = relay, [], ""

    def run(self) -> None:
        for n in range(1, len(PROMPTS) + 1):
            shown = self.relay / f"{n:04d}.request.md"
            wait_for(shown)
            text = shown.read_text(encoding="utf-8")
            self.shown.append(text)
            prompt = text.split("<user_message>\n", 1)[1].split("\n</user_message>", 1)[0]
            answer = self.relay / f"{n:04d}.response.json"
            if n == 1:
                write_answer(answer, _text({"selected": PROMPTS[prompt][1]}))
                wait_for(self.relay / "0001.response.problem.txt")
                self.problem = (self.relay / "0001.response.problem.txt").read_text(encoding="utf-8")
            write_answer(answer, _text(PROMPTS[prompt][1]))


def test_a_relay_run_shows_the_model_its_task_and_nothing_of_the_labels(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMDIR_RELAY_TIMEOUT", "120")
    folder, labels = _labelled_folder(tmp_path)
    relay = tmp_path / "relay"
    model = Model(relay)
    model.start()
    code, out, err = _bench(capsys, "--labels", str(labels), "--folder", str(folder), "--relay-dir", str(relay),
                            "--record", str(tmp_path / "cassette"), "--quiet")
    assert code == 0, err
    row = next(line.split() for line in out.splitlines() if line.startswith("llm (relay; no latency)  all"))
    assert row[5:11] == ["3", "2", "1.00", "1.00", "1/1", "1/1"], out
    # Asked in the fixed shuffled order, not set by set; nothing of the labels in what the model reads.
    assert [PROMPTS_IN_LABEL_ORDER[i] for i in asking_order(3)] == [
        text.split("<user_message>\n", 1)[1].split("\n</user_message>", 1)[0] for text in model.shown]
    for text in model.shown:
        for secret in ("alpha", "omega", "GOLD-REASON-MARKER", "held", "gold"):
            assert secret not in text
        for part in ("This request asks for a\nstructured output", '{\\"selected_memories\\": [\\"...\\"]}',
                     "output schema (output_config.format", '"additionalProperties": false',
                     "- [project] project_release_day.md (", "You choose which saved memories"):
            assert part in text
    # The answer the schema rejects is said in one line, naming the field.
    assert model.problem.count("\n") == 1 and "missing `selected_memories`" in model.problem, model.problem
    assert json.loads((relay / "0001.request.json").read_text(encoding="utf-8"))["output_config"]["format"]["type"] \
        == "json_schema"


def test_the_asking_order_is_shuffled_and_fixed():
    assert asking_order(58) == asking_order(58) != list(range(58))
    assert sorted(asking_order(58)) == list(range(58))


@pytest.mark.parametrize("args, expected", [
    ([], "--engine llm needs a model in the loop: --relay-dir DIR"),
])
def test_llm_without_a_model_in_the_loop_says_so_in_one_line(realdata, capsys, args, expected):
    code, _, err = _bench(capsys, "--sets", "set1", *args)
    assert code == 1 and err.strip().splitlines() == [f"recall_realdata: {expected} (someone answers) or --replay "
                                                      "CASSETTE (recorded answers)"]


FULL_CASSETTE = Path(__file__).resolve().parents[1] / "benchmarks" / "cassettes" / "recall_realdata_llm"
# The blind answers (each answerer saw only the requests) to all 133 prompts under today's request (the quotes of
# recall/llm_mentions.py and recall_system.j2): the figures in the closing note of 2026-11-27 (session 16) and
# docs/evals-and-benchmarks.md. A replay that scores otherwise is a change in what is sent or scored.
FULL_ROWS = {"set3": ["12", "17", "0.82", "0.88", "4/4", "4/4"], "set4": ["10", "11", "1.00", "0.92", "4/4", "4/4"],
             "set6": ["25", "30", "0.80", "0.63", "6/7", "5/5"], "set7": ["25", "36", "0.72", "0.68", "7/7", "5/5"],
             "set8": ["25", "40", "0.55", "0.58", "6/7", "5/5"], "dev": ["36", "50", "0.70", "0.65", "11/12", "10/11"]}


@pytest.mark.slow
def test_the_blind_answers_to_every_set_replay_to_the_recorded_figures(realdata, capsys, tmp_path):
    code, out, err = _bench(capsys, "--replay", str(FULL_CASSETTE), "--misses", str(tmp_path), "--quiet")
    assert code == 0, err
    rows = {line.split()[4]: line.split()[-8:-2] for line in out.splitlines() if line.startswith("llm (replay")}
    assert all(rows[held_out] == FULL_ROWS[held_out] for held_out in ("set3", "set4", "set6", "set7", "set8")), out
    assert rows["dev"] == FULL_ROWS["dev"], out
    assert not any(tmp_path.iterdir())  # no miss
