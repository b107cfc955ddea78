"""What the memory folder's git history (memdir/githistory.py) costs, as same-run ratios with it on and off.

    .venv/bin/python -m benchmarks.git_history [--memories 55] [--repeat 15]

1. The hook path: the whole `memdir hook prompt` process, with another writer's change waiting to be
   committed, history on vs off (interleaved). The prompt hook never commits: the ratio should be ~1.0.
2. Where commits do happen: one `MemoryStore.save` (a CLI or MCP write) on vs off, and the Stop worker's
   sweep of one file another writer changed (absolute, it has no "off" counterpart).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import precompile, run_process, write_memories
from memdir.entry.install import hook_argv

ENV = "MEMDIR_GIT_HISTORY"


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _interleaved(on, off, repeat: int) -> tuple[float, float]:
    """Medians of `on` and `off`, run alternately so machine load hits both alike."""
    ons, offs = [], []
    for _ in range(repeat):
        ons.append(_timed(on))
        offs.append(_timed(off))
    return statistics.median(ons), statistics.median(offs)


def hook_path(memory: Path, project: Path, repeat: int) -> None:
    payload = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "when do deploys go out?"})
    hook = hook_argv("prompt")  # what `memdir install` registers with Claude Code
    base = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "MEMDIR_RECALL_SERVER": "0"}
    (memory / "by_hand.md").write_text("---\nname: by hand\n---\nwaiting for a commit\n")
    run_process(hook, payload, {**base, ENV: "1"})  # warm the page cache
    on, off = _interleaved(lambda: run_process(hook, payload, {**base, ENV: "1"}),
                           lambda: run_process(hook, payload, {**base, ENV: "0"}), repeat)
    print(f"hook prompt process: history on {on * 1e3:.0f} ms, off {off * 1e3:.0f} ms = {on / off:.2f}x "
          f"(the prompt hook never commits)")


def write_path(memory: Path, repeat: int) -> None:
    from memdir import githistory
    from memdir.model import Memory
    from memdir.store import MemoryStore

    store = MemoryStore(memory)
    counter = iter(range(10**9))

    def save(flag: str) -> None:
        os.environ[ENV] = flag
        n = next(counter)
        store.save(Memory(name=f"bench {n % 5}", description=f"bench note {n}", type="project", body=f"note {n}\n"))

    githistory.sweep(memory)  # the repository exists, as after the first Stop
    on, off = _interleaved(lambda: save("1"), lambda: save("0"), repeat)
    print(f"one memdir write (MemoryStore.save): history on {on * 1e3:.1f} ms, off {off * 1e3:.1f} ms = "
          f"{on / off:.2f}x")
    os.environ[ENV] = "1"
    sweeps = []
    for n in range(repeat):
        (memory / "by_hand.md").write_text(f"---\nname: by hand\n---\nedit {n}\n")
        sweeps.append(_timed(lambda: githistory.sweep(memory)))
    print(f"Stop worker's sweep of one file another writer changed ({len(list(memory.glob('*.md')))} files): "
          f"{statistics.median(sweeps) * 1e3:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=55)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    precompile()
    with tempfile.TemporaryDirectory(prefix="memdir-git-") as tmp:
        project, memory = Path(tmp) / "project", Path(tmp) / "memory"
        (project / ".git").mkdir(parents=True)
        write_memories(memory, args.memories)
        os.environ.setdefault("MEMDIR_DENSE", "0")
        hook_path(memory, project, args.repeat)
        write_path(memory, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
