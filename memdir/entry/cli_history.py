"""`memdir log`: recent changes across the memory folder, from its git history (memdir/githistory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from memdir.entry.cli_support import memory_dir_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def sweep_first(root: Path, *, say_failure: bool = False) -> None:
    """Before reading the history: commit what others changed since the last commit, so it is listed.
    A file left out (a secret on disk) is always said. A failed commit is said by `memdir log` only:
    `history` and `restore` go on without it (it is in the hook log), and their own error, if any, stays
    the one line the user reads (a broken disk fails both)."""
    from memdir import githistory

    result = githistory.sweep(root, why="changes made outside memdir, found by a memdir command")
    if result is not None and ((result.error and say_failure) or (result.left_out and not result.error)):
        print(f"memdir: {result.describe()}", file=sys.stderr)  # a secret on disk: said, never committed


def cmd_log(args: argparse.Namespace) -> int:
    from memdir import githistory

    root = memory_dir_of(args).path
    if not githistory.enabled():
        print(f"memdir: the git history is off ({githistory.ENV}=0); `memdir history NAME` lists kept versions",
              file=sys.stderr)
        return 1
    sweep_first(root, say_failure=True)
    lines = githistory.log_lines(root, limit=max(1, args.n), diff=args.diff)
    if not lines:
        print(f"no history yet in {root}")
        return 0
    print("\n".join(lines).rstrip("\n"))
    return 0


def add_parsers(command) -> None:
    p = command("log", cmd_log, "recent changes across the memory folder: who, when, why, which files")
    p.add_argument("-n", type=int, default=20, help="how many changes (default 20)")
    p.add_argument("--diff", action="store_true", help="show each change's diff")
