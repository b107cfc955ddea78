"""`memdir sync`: the memory folder through a git remote the user owns (memdir/gitsync.py)."""

from __future__ import annotations

import sys

from memdir.entry.cli_support import memory_dir_of, project_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_sync(args: argparse.Namespace) -> int:
    from memdir import gitsync, syncconfig

    resolution = memory_dir_of(args)
    root = project_of(args)  # not the root that keys the folder: in a dotfiles home that is the home's repository
    try:
        if args.auto is not None:
            syncconfig.save_config(resolution.path, {syncconfig.AUTO_KEY: args.auto == "on"})
            print(f"background sync after each session: {args.auto}", file=sys.stderr)
        result = gitsync.sync(resolution.path, root, remote=args.remote, project=args.project, team=args.team)
    except syncconfig.SyncError as exc:
        print(f"memdir sync: {exc}", file=sys.stderr)
        return 1
    for line in result.describe():
        print(line)
    return 0


def add_parsers(command) -> None:
    p = command("sync", cmd_sync, "carry this project's memory to your other machines through a git remote you own")
    p.add_argument("--remote", help="the git URL to sync with (stored; later `memdir sync` alone), e.g. a private "
                                    "repository; one branch per project")
    p.add_argument("--project", help="the project's name across machines (default: its git remote URL, normalised)")
    p.add_argument("--team", action="store_true",
                   help="sync team memory (team/) with a team remote instead (its own --remote, stored apart)")
    p.add_argument("--auto", choices=["on", "off"],
                   help="also sync in the background after each session (or MEMDIR_AUTO_SYNC=1)")
