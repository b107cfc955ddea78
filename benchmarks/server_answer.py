"""The warm recall server's answer timed in-process, set up as serve() sets it up (issue 26).

The prompt hook's wall (benchmarks/recall_speed.py --realistic --rows up) adds the hook's own start and the
machine's load; this times what the server does for one prompt: `server_answer.handle` with every keep_*
of serve() and the dense model, on a realistic folder, each real prompt once after a warm-up. Printed, as
medians: the answer's wall, the request thread's CPU (time.thread_time), the time before the query's vector
is asked for, the wait for it, and the time after it (the critical path), and the process's RSS.
`--passes 2` asks every prompt once untimed first, so the names recalled memories hold are settled
(memdir.verdicts checks them in the background: what a first answer says about them depends on timing).
`--out FILE` writes every answer (selected memories and context) as JSON, to compare two checkouts.

    python -m benchmarks.server_answer --size 200 --passes 2 --out /tmp/answers.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from benchmarks import hook_budgets as hb, realistic, warm_server
from benchmarks.common import process_env


def _serve_like() -> object:
    """What serve() keeps between prompts, kept here; the dense model loaded. Returns the embedder."""
    from memdir.stages.recall import manifest, server, server_answer, server_dense

    manifest.keep_word_index()
    manifest.keep_tokens()
    keep_corpus = getattr(manifest, "keep_corpus", None)  # absent before the server corpus: times that checkout
    if keep_corpus is not None:
        from memdir.stages.recall.server_rank import ServerCorpus

        keep_corpus(ServerCorpus)
    manifest.keep_token_pack(server_answer.answering_now)
    server_answer.keep_folder_views()
    server_answer.keep_verdicts()
    embedder = server_dense.load_embedder(server_answer.scan_folder)
    server._preload()
    return embedder


def _settle(limit: float = 180.0) -> None:
    """Wait until this process's background work (packing, embedding, checking names) is done."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        before = time.process_time()
        time.sleep(0.5)
        if time.process_time() - before < 0.05:
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--out")
    args = parser.parse_args()
    root = realistic.folder(args.size)
    realistic.clear_state(root)
    if args.size <= warm_server.REAL_VECTORS_UP_TO:
        warm_server.fill_real_vectors(root)
    else:
        warm_server.fill_stand_in_vectors(root)
    os.environ.update(process_env(warm_server.server_env(root)))
    from memdir.stages.recall import server_answer, server_dense
    from memdir.stages.recall.manifest import save_kept_tokens
    from memdir.stages.recall.socket_place import request_env

    embedder = _serve_like()
    payload = hb.prompt_payload("up", os.getcwd())
    marks: dict[str, float] = {}
    vector = server_dense.QueryAhead.vector

    def timed_vector(self):  # when the answer asked for the query's vector, and when it had it
        marks["asked"] = time.perf_counter()
        try:
            return vector(self)
        finally:
            marks["got"] = time.perf_counter()

    server_dense.QueryAhead.vector = timed_vector  # type: ignore[method-assign]

    def answer(n: int) -> dict:
        request = {"resolve": True, "record": False, "hook_payload": payload(n), "env": request_env()}
        reply = server_answer.handle(request, None, embedder)  # type: ignore[arg-type]
        save_kept_tokens()  # as the server does after replying
        return reply

    prompts = len(realistic.real_prompts())
    answer(-1)
    for _ in range(args.passes - 1):
        for n in range(prompts):
            answer(n)
    _settle()
    rows: dict[str, list[float]] = {"wall": [], "cpu": [], "before": [], "wait": [], "after": []}
    answers = []
    for n in range(prompts):
        time.sleep(0.25)  # a turn of the model between two prompts
        marks.clear()
        cpu, started = time.thread_time(), time.perf_counter()
        reply = answer(n)
        ended = time.perf_counter()
        rows["wall"].append((ended - started) * 1000)
        rows["cpu"].append((time.thread_time() - cpu) * 1000)
        if marks:
            rows["before"].append((marks["asked"] - started) * 1000)
            rows["wait"].append((marks["got"] - marks["asked"]) * 1000)
            rows["after"].append((ended - marks["got"]) * 1000)
        answers.append({"prompt": json.loads(payload(n))["prompt"], "selected": reply["selected"],
                        "context": reply["context"]})
    medians = "  ".join(f"{k} {statistics.median(v):.1f}" for k, v in rows.items() if v)
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as status:
        rss = next((line.split()[1] for line in status if line.startswith("VmRSS:")), "?")
    print(f"{args.size} memories, {prompts} prompts, medians in ms: {medians}; RSS {int(rss) // 1024} MB; "
          f"load {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(answers, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
