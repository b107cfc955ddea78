"""Recall speed against same-run baselines, on folders built from the real 55-file folder (issue 26).

    .venv/bin/python -m benchmarks.recall_speed [--sizes 200,1000,20000] [--repeat 5]
    .venv/bin/python -m benchmarks.recall_speed --realistic [--sizes 200,1000,5000,20000] [--repeat 15] [--rows down|up,start,...]

Default:
1. scan + manifest of N real-sized memory files (benchmarks/realistic.py) vs a plain loop that opens
   each file and reads 30 lines (budget: within 3x; per-file cost flat from 1,000 to 20,000 files).
2. The prompt hook with the llm engine via the warm recall server, against a local API that answers at once.
`--realistic`: every hook budget of issue 26 (prompt hook with the server up and down, a slow server,
session-start, stop), met or missed, from one run (benchmarks/hook_budgets.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from benchmarks import realistic
from benchmarks.common import BARE_PYTHON, median_seconds, precompile, run_process
from memdir.entry.install import hook_argv
from memdir.scan import scan
from memdir.stages.recall.manifest import candidates, manifest


def plain_loop(root: Path) -> int:
    lines = 0
    for entry in os.scandir(root):
        if entry.name.endswith(".md"):
            with open(entry.path, "rb") as handle:
                lines += len(list(islice(handle, 30)))
    return lines


def scan_and_manifest(root: Path, query: str) -> str:
    headers = scan(root).headers
    return manifest(candidates(headers, query))


def stop_server(sock: str | None) -> None:
    """SIGTERM the recall server and wait until it has removed its socket: the next section's server
    (the same one per user and memory root, whatever the engine or endpoint) must not find it."""
    import signal

    pidfile = Path(f"{sock}.pid")
    try:
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + 10
    while pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,1000,20000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--realistic", action="store_true",
                        help="every hook budget of issue 26 on folders built from the real folder (benchmarks/hook_budgets.py)")
    parser.add_argument("--rows", default="all",
                        help="with --realistic: 'all', or some of down,up,slow,start,stop (comma-separated)")
    args = parser.parse_args(argv)
    if args.realistic:
        from benchmarks.hook_budgets import ROWS, run

        sizes = "200,1000,5000,20000" if args.sizes == parser.get_default("sizes") else args.sizes
        return run([int(s) for s in sizes.split(",")], 15 if args.repeat == parser.get_default("repeat") else args.repeat,
                   ROWS if args.rows == "all" else tuple(args.rows.split(",")))
    sizes = [int(s) for s in args.sizes.split(",")]
    precompile()
    query = realistic.REAL_PROMPT
    print(f"{'files':>7} {'plain loop ms':>13} {'scan+manifest ms':>16} {'ratio':>6} {'us/file':>8}  (budget 3x)")
    per_file: dict[int, float] = {}
    base_per_file: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-speed-") as tmp:
        for n in sizes:
            root = realistic.folder(n)
            plain_loop(root), scan_and_manifest(root, query)  # warm the page cache for both
            base = median_seconds(lambda root=root: plain_loop(root), args.repeat)
            ours = median_seconds(lambda root=root: scan_and_manifest(root, query), args.repeat)
            per_file[n] = ours / n * 1e6
            base_per_file[n] = base / n * 1e6
            print(f"{n:>7} {base * 1000:>13.1f} {ours * 1000:>16.1f} {ours / base:>6.2f} {per_file[n]:>8.1f}")
        if len(per_file) > 1:
            small, large = min(per_file), max(per_file)
            print(f"per-file cost {large} vs {small} files: {per_file[large] / per_file[small]:.2f}x "
                  f"(the plain loop's own: {base_per_file[large] / base_per_file[small]:.2f}x; linear = ~1x)")
        print("\nprompt, session-start and stop hook budgets: --realistic")

        root = realistic.folder(200)
        realistic.clear_state(root)
        payload = json.dumps({"session_id": "bench", "transcript_path": str(realistic.real_transcript()), "cwd": tmp,
                              "hook_event_name": "UserPromptSubmit", "prompt": query})
        hook = hook_argv("prompt")  # what `memdir install` registers with Claude Code
        bare = median_seconds(lambda: run_process(BARE_PYTHON, payload), args.repeat * 2)
        runs = iter(range(10**6))

        # The llm engine against a local API that answers at once: the hook asks the warm recall server
        # (started by the first prompt), so what remains is a socket round trip plus the selector.
        from memdir.stages.recall import server_socket as server
        from tests.fake_api import FakeAPI

        answer = {"id": "msg_local", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
                  "content": [{"type": "text", "text": '{"selected_memories": []}'}], "stop_reason": "end_turn",
                  "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        with FakeAPI(lambda body, n: answer) as api:
            llm_env = {"MEMDIR_PATH": str(root), "MEMDIR_ENGINE": "llm", "ANTHROPIC_BASE_URL": api.url,
                       "MEMDIR_RECALL_SERVER": "1", "MEMDIR_RECALL_SERVER_IDLE": "60"}
            sock = server.socket_path({**os.environ, **llm_env})
            try:
                run_process(hook, payload, llm_env)  # starts the server, answers offline
                deadline = time.monotonic() + 60
                while not os.path.exists(sock + ".pid") and time.monotonic() < deadline:  # written once it listens
                    time.sleep(0.05)
                llm = median_seconds(
                    lambda: run_process(hook, payload.replace('"bench"', f'"llm{next(runs)}"'), llm_env), args.repeat
                )
            finally:
                stop_server(sock)
        print(f"hook prompt (llm engine via the warm recall server, instant local API): {llm * 1000:.0f} ms "
              f"= {llm / bare:.1f}x bare python ({len(api.requests)} API requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
