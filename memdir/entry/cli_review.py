"""`memdir review`: the proposals confirm mode left (memdir/review.py does the work)."""

from __future__ import annotations

import sys

from memdir import inert
from memdir.entry.cli_support import memory_dir_of, warn_ignored_configs
from memdir.errors import MemdirError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def _list(memory_dir: Path, diffs: bool = True) -> int:
    from memdir import proposals, review, write_mode

    mode, source = write_mode.current_with_source(memory_dir)
    print(f"write mode {mode} ({source})")
    warn_ignored_configs(memory_dir)
    waiting = proposals.pending(memory_dir)
    if not waiting:
        print(f"no proposals waiting in {memory_dir}")
        return 0
    print(f"{len(waiting)} proposal(s) waiting; `memdir review --accept ID`, `--reject ID` or `--accept-all`:")
    for proposal in waiting:
        print(inert.one_line(review.summary_line(memory_dir, proposal)))
        if diffs:
            for line in review.diff(memory_dir, proposal).splitlines():
                print("    " + inert.one_line(line))
    return 0


def _edited(memory_dir: Path, ref: str) -> str | None:
    """The proposal's text after $VISUAL / $EDITOR (vi) has had it; None when left unchanged."""
    import os
    import shlex
    import subprocess
    import tempfile

    from memdir import proposals

    proposal = proposals.find(memory_dir, ref)
    if proposal.action == "delete":
        raise MemdirError(f"{proposal.id} proposes deleting {proposal.shown_target}: there is no text to edit; "
                          "--accept or --reject it")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="memdir-review-") as tmp:
        path = os.path.join(tmp, proposal.target.replace("/", "_"))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(proposal.text or "")
        try:
            done = subprocess.run([*shlex.split(editor), path], check=False)
        except (OSError, ValueError) as exc:
            raise MemdirError(f"could not start the editor {editor!r} ($VISUAL / $EDITOR): {exc}") from None
        if done.returncode != 0:
            raise MemdirError(f"the editor {editor!r} exited with status {done.returncode}; nothing was accepted")
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    return None if text == proposal.text else text


def cmd_review(args: argparse.Namespace) -> int:
    from memdir import review

    memory_dir = memory_dir_of(args).path
    if args.accept_all:
        done, left = review.accept_all(memory_dir, force=args.force)
        for line in done:
            print(inert.one_line(line))
        for line in left:
            print(f"memdir: not accepted: {inert.one_line(line)}", file=sys.stderr)
        if not done and not left:
            print(f"no proposals waiting in {memory_dir}")
        return 1 if left else 0
    if args.accept:
        print(inert.one_line(review.accept(memory_dir, args.accept, force=args.force)))
        return 0
    if args.edit:
        text = _edited(memory_dir, args.edit)
        print(inert.one_line(review.accept(memory_dir, args.edit, force=args.force, text=text)))
        return 0
    if args.reject:
        print(inert.one_line(review.reject(memory_dir, args.reject)))
        return 0
    return _list(memory_dir)


def add_parser(command) -> None:
    p = command("review", cmd_review, "list proposed memory changes (write mode confirm) with diffs; accept or "
                "reject them")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="list the proposals with diffs (the default)")
    group.add_argument("--accept", metavar="NAME", help="carry out one proposal (by id or target file)")
    group.add_argument("--accept-all", action="store_true", help="carry out every proposal, oldest first")
    group.add_argument("--reject", metavar="NAME", help="drop one proposal (it is moved aside, not deleted)")
    group.add_argument("--edit", metavar="NAME", help="open $EDITOR on a proposal's text, then accept it")
    p.add_argument("--force", action="store_true", help="accept a stale proposal (its file changed since)")
