"""`memdir history`, `restore` and `log`: a memory's versions, bringing one back, and recent changes across the
memory folder from its git history (memdir/githistory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from memdir.entry.cli_support import memory_dir_of, store_of

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


def cmd_history(args: argparse.Namespace) -> int:
    from memdir import history

    store = store_of(args)
    sweep_first(store.base)
    rel = store.history_key(args.name)
    rows = store.history_rows(rel)
    if any(row.old is None for row in rows):  # git history (memdir/githistory.py)
        return _print_rows(store, rel, rows)
    found = store.history_versions(rel)
    if not found:
        print(f"no kept versions of {rel}")
        return 0
    print(f"kept versions of {rel} (1 = newest; `memdir restore {store.shown_ref(rel)} --version N`):")
    width = len(str(len(found)))
    for v in found:
        size = v.path.stat().st_size
        shared = f"  (old name shared with {', '.join(v.shared_with)}; not restored)" if v.shared_with else ""
        shared += "  (empty: left by a failed write; not restored)" if history.torn(v) else ""
        print(f"  {v.number:>{width}}  {v.stamp}  {v.action:<8} {size:>7} bytes  {history.display(store.root, v.path)}{shared}")
    return 0


def _print_rows(store, rel: str, rows) -> int:
    from memdir import history

    print(f"versions of {rel} (1 = newest; `memdir restore {store.shown_ref(rel)} --version N`):")
    width = len(str(len(rows)))
    for row in rows:
        where = f"commit {row.label}" if row.old is None else f"kept {history.display(store.root, row.old.path)}"
        who = f"  by {row.who}" if row.who else ""
        if row.old is not None and row.old.shared_with:  # the same warning the listing without git gives
            who += f"  (old name shared with {', '.join(row.old.shared_with)}; not restored)"
        elif row.old is not None and history.torn(row.old):
            who += "  (empty: left by a failed write; not restored)"
        print(f"  {row.number:>{width}}  {row.stamp}  {row.action:<14} {row.size:>7} bytes  {where}{who}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    store = store_of(args)
    sweep_first(store.base)  # what another writer left is committed before it is replaced
    rel, version, kept = store.restore(args.name, args.version)
    note = f" (previous version kept: {kept})" if kept else ""
    print(f"restored {rel} from {version}{note}")
    return 0


def add_version_parsers(command) -> None:
    p = command("history", cmd_history, "list the kept previous versions of a memory (or MEMORY.md)")
    p.add_argument("name", help="memory name or file name; deleted memories too")
    p.add_argument("--team", action="store_true")

    p = command("restore", cmd_restore, "bring back a kept version (the current one is kept first)")
    p.add_argument("name", help="memory name or file name; deleted memories too")
    p.add_argument("--version", help="version number from `memdir history` (1 = newest, the default) or file name")
    p.add_argument("--team", action="store_true")


def add_parsers(command) -> None:
    p = command("log", cmd_log, "recent changes across the memory folder: who, when, why, which files")
    p.add_argument("-n", type=int, default=20, help="how many changes (default 20)")
    p.add_argument("--diff", action="store_true", help="show each change's diff")
