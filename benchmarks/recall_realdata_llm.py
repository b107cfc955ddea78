"""The llm recall engine on the real folder, with a model in the loop: the relay, or a cassette of its answers.

    .venv/bin/python -m benchmarks.recall_realdata --engine llm --relay-dir DIR [--record CASSETTE]
    .venv/bin/python -m benchmarks.recall_realdata --engine llm --replay CASSETTE

memdir's llm engine runs unchanged (`recall.api.recall`, engine llm, its SDK client pointed at the loopback
Messages API of evals/model_loop.py through ANTHROPIC_BASE_URL): every request is checked by the strict
validator, then answered by whoever acts as the model through the relay folder, or from a cassette. Only the
recall time budget is raised (a person or an agent answers in minutes), so the row measures picks, not latency.
The prompts are asked in an order shuffled with a fixed seed, across the sets run, and the requests carry
neither the set names nor the labels: whoever answers cannot tell a held-out prompt from a development one.
A prompt the engine did not answer itself (a failed or unusable reply, so the offline selector's picks) fails
the run with one line rather than scoring the offline engine under the llm's name.
"""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.realdata_labels import Labels, Outcome, Run
from memdir.config import Settings
from memdir.errors import MemdirError

SEED = 21  # the order of the prompts: fixed, so that a cassette recorded once replays
SESSION = "recall_realdata"  # the cassette's one session: it names no set
REPLAY_TIMEOUT = 60.0  # seconds the selector may take on a replay (a recorded answer: well under one)
FILE_TIME = "<file-time>"
LATENCY_NOTE = "latency not measured: the recall time budget is raised for a model in the loop"


class LoopFailed(MemdirError):
    """The run stopped: a request the real API would reject, a replay miss, an unusable answer; one line."""


def mode_name(relay_dir: str | None) -> str:
    return "llm (relay; no latency)" if relay_dir else "llm (replay; no latency)"


def asking_order(count: int, seed: int = SEED) -> list[int]:
    """The prompts' indices in the order they are asked: shuffled, the same on every run."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def file_times(folder: Path) -> dict[str, str]:
    """Each memory's time as the manifest shows it -> `<file-time>`: the real folder's files carry the time it was
    provisioned on this machine, so a cassette keyed on them would miss on the next machine. The manifest's order
    (newest first) still counts."""
    from memdir.manifest import shown_time
    from memdir.scan import scan

    return dict.fromkeys(sorted({shown_time(h) for h in scan(folder).headers}), FILE_TIME)


def today_line() -> dict[str, str]:
    """The request's "Today is <date>." -> a placeholder: a cassette recorded today replays on any later day."""
    from datetime import date

    return {f"Today is {date.today().isoformat()}.": "Today is <today>."}


def run_llm(folder: Path, labels: Labels, *, relay_dir: str | None, record: str | None, replay: str | None,
            misses: Path) -> Run:
    """The llm engine's picks for every prompt of `labels` on `folder`; raises LoopFailed with one line."""
    from memdir.evals.model_loop import model_loop
    from memdir.stages.recall.api import recall

    if not relay_dir and not replay:
        raise LoopFailed("--engine llm needs a model in the loop: --relay-dir DIR (someone answers) or "
                         "--replay CASSETTE (recorded answers)")
    picks: dict[int, tuple[list[str], int]] = {}
    with model_loop("relay" if relay_dir else "auto", relay_dir=relay_dir, record=record, replay=replay,
                    misses=misses) as loop:
        assert loop is not None  # relay or replay: always a loop
        loop.begin(SESSION, folder, {**file_times(folder), **today_line()})
        budget = loop.client_timeout or REPLAY_TIMEOUT
        settings = Settings.from_env().with_overrides(engine="llm", recall_timeout=budget)
        client = loop.client()
        for index in asking_order(len(labels.cases)):
            result = recall(folder, labels.cases[index].prompt, settings=settings, engine="llm", record=False,
                            client=client)
            if loop.failure:
                raise LoopFailed(loop.failure)
            if result.engine != "llm":
                why = "; ".join(result.debug) or f"engine {result.engine}"
                raise LoopFailed(f"the llm engine gave no answer of its own ({why})")
            picks[index] = ([h.rel_path for h in result.selected], len(result.context))
        loop.finish()
    outcome = Run(mode_name(relay_dir))
    for index, case in enumerate(labels.cases):
        picked, chars = picks[index]
        outcome.outcomes.append(Outcome(case, picked, chars))
    return outcome
