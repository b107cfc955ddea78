"""What the decision tiers add to the prompt hook, against same-run baselines.

    .venv/bin/python -m benchmarks.decision_hook [--decisions 5000] [--repeat 200]

1. In process: `for_prompt_hook` (queue the prompt, find the journal), beside the bare cost of appending
   one JSON line to a file; then the same plus reading the last 10 decisions of a large journal and
   keeping those relevant to the prompt, as every prompt does (issue 21).
   Budget: the first under 1% of the whole hook's time, the second under 5%.
2. The whole `memdir hook prompt` process, with that journal in the memory folder, vs bare python
   (budget 5x, as benchmarks/recall_speed.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from benchmarks.common import BARE_PYTHON, median_seconds, precompile, process_env, run_process, write_memories
from benchmarks.recall_speed import stop_server
from memdir.decision_context import for_prompt_hook, with_recent_decisions
from memdir.decisions import Decision, append
from memdir.entry.install import hook_argv
from memdir.paths import decisions_dir
from memdir.stages.recall.decision_filter import relevant_decisions
from memdir.stages.recall.server_socket import socket_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    precompile()
    with tempfile.TemporaryDirectory(prefix="memdir-decisions-") as tmp:
        project, memory = Path(tmp) / "project", Path(tmp) / "memory"
        (project / ".git").mkdir(parents=True)
        write_memories(memory, 200)
        journal_folder = decisions_dir(memory, project, compat=False)
        append(journal_folder, [Decision(kind="decision", what=f"Decision {i} about the orders service",
                                         why="the old one timed out", entities=["PostgreSQL", "Redis"], confidence=0.8)
                                for i in range(args.decisions)])
        prompt = "let's use redis for the job queue because it is already deployed"
        bare_file = Path(tmp) / "bare.jsonl"

        def bare_append() -> None:
            fd = os.open(bare_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, (json.dumps({"prompt": prompt}) + "\n").encode())
            os.close(fd)

        sessions = iter(range(10**9))
        bare = median_seconds(bare_append, args.repeat)
        later = median_seconds(lambda: for_prompt_hook(str(memory), str(project), prompt, "same"), args.repeat)
        first = median_seconds(lambda: with_recent_decisions(
            for_prompt_hook(str(memory), str(project), prompt, f"s{next(sessions)}")[0], "",
            keep=lambda records: relevant_decisions(prompt, records)), args.repeat)
        print(f"bare append {bare * 1e3:.3f} ms; queue only {later * 1e3:.3f} ms = {later / bare:.1f}x; "
              f"with the relevant ones of {args.decisions} decisions {first * 1e3:.2f} ms")

        payload = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                              "prompt": prompt})
        hook = hook_argv("prompt")  # what `memdir install` registers with Claude Code
        env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline"}
        try:
            for argv_ in (BARE_PYTHON, hook):
                run_process(argv_, payload, env)
            bare_py = median_seconds(lambda: run_process(BARE_PYTHON, payload), 10)
            ours = median_seconds(lambda: run_process(hook, payload.replace('"bench"', f'"b{next(sessions)}"'), env),
                                  10)
        finally:  # the first hook starts the warm server (every install has one): not left up for its idle 30 min
            stop_server(socket_path(process_env(env)))
        print(f"hook prompt, first prompt of a session, {args.decisions}-decision journal: {ours * 1e3:.0f} ms vs bare "
              f"python {bare_py * 1e3:.0f} ms = {ours / bare_py:.2f}x (budget 5x)")
        print(f"share of the hook's time: queue only {later / ours * 100:.2f}% (budget 1%), "
              f"with relevant decisions {first / ours * 100:.2f}% (budget 5%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
