"""Extraction-side speed against same-run baselines (budgets from DESIGN.md).

    .venv/bin/python -m benchmarks.extract_speed [--big-mb 200] [--repeat 10]

1. `memdir hook stop` wall time, with a real transcript in its payload, vs a bare `python -c pass` in
   the same run (budget 2x; median, min and max). The hook only starts the detached worker; its
   return is what the user could ever wait for.
2. Reading the last 20 messages of a 200 MB transcript vs a 2 MB one (budget: about 1x).
3. What the Stop hook's worker reads on each turn: every message after the session's cursor (here the
   cursor sits 20 messages from the end), 200 MB vs 2 MB (budget: about 1x).
4. What a memory write costs with the dense model installed (its vector is stored before the write
   returns) vs the same write with MEMDIR_DENSE=0, in the same run: `MemoryStore.save` in a warm
   process, and a whole `memdir remember` process (numpy import and model load included).
   `--writes-only` runs just this part.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks.common import median_seconds, precompile, run_process
from memdir.transcript import read_transcript


def write_transcript(path: Path, megabytes: int) -> None:
    line_user = {"type": "user", "sessionId": "bench", "timestamp": "2026-03-02T09:00:00Z", "cwd": "/repo",
                 "message": {"role": "user", "content": "please look at the payments retry logic " * 20}}
    line_assistant = {"type": "assistant", "sessionId": "bench", "timestamp": "2026-03-02T09:00:05Z",
                      "message": {"id": "", "role": "assistant",
                                  "content": [{"type": "text", "text": "Looking at the retry loop now. " * 30}]}}
    target = megabytes * 1024 * 1024
    written, n = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < target:
            user = {**line_user, "uuid": f"u{n}"}
            assistant = {**line_assistant, "uuid": f"a{n}", "message": {**line_assistant["message"], "id": f"msg_{n}"}}
            chunk = json.dumps(user) + "\n" + json.dumps(assistant) + "\n"
            handle.write(chunk)
            written += len(chunk)
            n += 1


def write_speed(repeat: int) -> None:
    """Item 4: the extra time a write costs when it also stores the memory's vector."""
    import itertools
    import os

    from memdir import constants as C, embeddings
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    if not embeddings.installed():
        print("memory write with the dense model: skipped, pip install 'memdir[dense]'")
        return
    counter = itertools.count()

    def save(store: MemoryStore, dense: bool) -> None:
        os.environ[C.DENSE_DISABLE_ENV] = "1" if dense else "0"
        n = next(counter)  # new words each time: every write embeds a passage it has not seen
        remember(store, f"Deploy {n} of payments waits for the ledger freeze {n * 7}", type_="project",
                 name=f"Deploy rule {n}")

    previous = os.environ.get(C.DENSE_DISABLE_ENV)
    try:
        with tempfile.TemporaryDirectory(prefix="memdir-wspeed-") as tmp:
            import shutil

            from benchmarks import realistic

            for name in ("memory", "cli"):  # writes land in a real-sized folder of 200, as a user's would
                shutil.copytree(realistic.folder(200), Path(tmp) / name, ignore=shutil.ignore_patterns(".*"))
            store = MemoryStore(Path(tmp) / "memory")
            for dense in (False, True):  # warm: the model is loaded before anything is timed
                save(store, dense)
            without = median_seconds(lambda: save(store, False), repeat * 3)
            with_model = median_seconds(lambda: save(store, True), repeat * 3)
            print(f"memory write (MemoryStore.save, warm process): {with_model * 1000:.1f} ms with the dense model "
                  f"vs {without * 1000:.1f} ms without = {with_model / without:.2f}x "
                  f"(+{(with_model - without) * 1000:.1f} ms for the vector)")

            script = Path(sys.executable).with_name("memdir")
            cli = [str(script)] if script.exists() else [sys.executable, "-m", "memdir.entry.main"]

            def remember_process(dense: bool) -> None:
                n = next(counter)
                run_process([*cli, "--dir", str(Path(tmp) / "cli"), "remember", f"Release {n} ships after review {n}",
                             "--type", "project", "--name", f"Release rule {n}"], "",
                            {C.DENSE_DISABLE_ENV: "1" if dense else "0"})

            remember_process(False), remember_process(True)
            without = median_seconds(lambda: remember_process(False), repeat)
            with_model = median_seconds(lambda: remember_process(True), repeat)
            print(f"memdir remember (whole process): {with_model * 1000:.0f} ms with the dense model vs "
                  f"{without * 1000:.0f} ms without = {with_model / without:.2f}x")
    finally:
        if previous is None:
            os.environ.pop(C.DENSE_DISABLE_ENV, None)
        else:
            os.environ[C.DENSE_DISABLE_ENV] = previous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--writes-only", action="store_true", help="only the write cost with/without the model")
    args = parser.parse_args(argv)
    precompile()
    write_speed(args.repeat)
    if args.writes_only:
        return 0
    with tempfile.TemporaryDirectory(prefix="memdir-xspeed-") as tmp:
        root = Path(tmp)
        small, big = root / "small.jsonl", root / "big.jsonl"
        write_transcript(small, 2)
        write_transcript(big, args.big_mb)
        # A real session's transcript (shared/realdata), as Claude Code sends it; bare = `python -c pass`,
        # interleaved with the hook so both see the same load (benchmarks/hook_budgets.py).
        from benchmarks import hook_budgets, realistic

        payload = json.dumps({"session_id": "bench", "transcript_path": str(realistic.real_transcript()), "cwd": tmp,
                              "hook_event_name": "Stop", "stop_hook_active": False})
        # Memory switched off for the worker it starts: only the hook's own return is measured, by design.
        env = {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1", "MEMDIR_DISABLE": "1", "MEMDIR_PATH": str(root / "memory")}
        timing = hook_budgets.measure(hook_budgets.hook_argv("stop"), lambda n: payload, env, args.repeat)
        print(f"hook stop (real transcript): {timing.text()} (budget 2x)")

        read_transcript(small, last_n=20), read_transcript(big, last_n=20)
        t_small = median_seconds(lambda: read_transcript(small, last_n=20), args.repeat)
        t_big = median_seconds(lambda: read_transcript(big, last_n=20), args.repeat)
        print(f"last 20 messages: 2 MB {t_small * 1000:.2f} ms, {args.big_mb} MB {t_big * 1000:.2f} ms "
              f"= {t_big / t_small:.2f}x (budget ~1x)")

        def cursor_20_from_end(path: Path) -> str:
            return read_transcript(path, last_n=21).messages[0].uuid

        small_cursor, big_cursor = cursor_20_from_end(small), cursor_20_from_end(big)
        t_small = median_seconds(lambda: read_transcript(small, after_uuid=small_cursor), args.repeat)
        t_big = median_seconds(lambda: read_transcript(big, after_uuid=big_cursor), args.repeat)
        print(f"new messages since the cursor (20): 2 MB {t_small * 1000:.2f} ms, {args.big_mb} MB "
              f"{t_big * 1000:.2f} ms = {t_big / t_small:.2f}x (budget ~1x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
