"""A FIFO (or device) planted at the decision graph or its queue, in `.memdir/decisions/`, by anyone who can write the
memory folder: `memdir status` and the Stop worker's flush opened both with open(), which waits for a writer that
never comes. Each says what is there in one line instead, and nothing waits."""

from __future__ import annotations

import os
import threading

import pytest

from memdir import constants as C


def _in_time(call) -> list:
    out: list = []

    def run() -> None:
        try:
            out.append(call())
        except OSError as exc:
            out.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "waited on the FIFO"
    return out


@pytest.mark.parametrize("name", [C.GRAPH_FILE, C.GRAPH_QUEUE])
def test_status_names_a_fifo_at_the_graph_or_its_queue_and_waits_on_nothing(tmp_path, name):
    from memdir.tier_status import tier_status

    memory = tmp_path / "memory"
    folder = memory / C.STATE_DIRNAME / C.DECISIONS_DIRNAME
    folder.mkdir(parents=True)
    os.mkfifo(folder / name)
    (tiers,) = _in_time(lambda: tier_status(tmp_path, memory, compat=False))
    graph = tiers[0]
    assert graph.state == "degraded" and "is a FIFO" in graph.reason and "\n" not in graph.reason, graph


@pytest.mark.parametrize("name", [C.GRAPH_FILE, C.GRAPH_QUEUE])
def test_the_flush_refuses_a_fifo_at_the_graph_or_its_queue_and_waits_on_nothing(tmp_path, name):
    from memdir import graph

    folder = tmp_path / "decisions"
    folder.mkdir()
    os.mkfifo(folder / name)
    (done,) = _in_time(lambda: graph.flush(folder, [{"type": "entity", "name": "x", "entityType": "t",
                                                      "observations": []}]))
    shown = str(done) if isinstance(done, OSError) else done.error
    assert shown and "is a FIFO" in shown, done
