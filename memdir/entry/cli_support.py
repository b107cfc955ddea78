"""Helpers the CLI modules share: which memory folder, store and project a command works on, and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def memory_dir_of(args):
    """The Resolution for a command: --dir, else --agent/--scope, else the normal chain."""
    from memdir.paths import Resolution, agent_memory_dir, resolve_memory_dir, validate_configured_path

    if getattr(args, "dir", None) is not None:  # `--dir ""` is an error, not the default folder
        return _a_folder(Resolution(validate_configured_path(_from_cwd(args.dir, args), "--dir"), "--dir flag", None))
    if getattr(args, "agent", None):
        root = project_of(args)
        path = agent_memory_dir(args.agent, args.scope or "project", root)
        if args.scope in (None, "project", "local"):
            # Inside a repository (which may be hostile): no symlink from the repo root down.
            from memdir import safefs

            safefs.check_inside(root, path.relative_to(root).as_posix())
        return _a_folder(Resolution(path, f"agent memory for {args.agent} ({args.scope or 'project'} scope)", root))
    return _a_folder(resolve_memory_dir(Path(args.cwd) if args.cwd else None))


def _from_cwd(raw: str, args) -> str:
    """A relative --dir is read from the folder the command runs in (--cwd, else the current one), as any
    command-line path is; only settings and environment variables must name an absolute folder."""
    import os

    if raw.startswith("~") or os.path.isabs(raw) or "\x00" in raw or not raw.strip():
        return raw
    return os.path.join(os.path.abspath(getattr(args, "cwd", None) or os.getcwd()), raw)


def _a_folder(resolution):
    """The memory folder may be absent (it is created on the first save) but never a file."""
    from memdir.errors import MemdirError

    if resolution.path.exists() and not resolution.path.is_dir():
        raise MemdirError(f"{resolution.path}: not a folder ({resolution.rule}); point it at a folder")
    return resolution


def print_json(data: object) -> None:
    from memdir import inert

    # Control, bidirectional and invisible characters (and a lone surrogate, from a file name that is not UTF-8) as
    # JSON's own \u escapes: shown, never acted on by the terminal, and loaded back exactly.
    print(inert.json_text(json.dumps(data, indent=2, ensure_ascii=False, default=str)))


def store_of(args: argparse.Namespace):
    """The store a command works on: --team's, else the personal folder's."""
    from memdir.store import MemoryStore

    root = memory_dir_of(args).path
    return MemoryStore.team_store(root) if getattr(args, "team", False) else MemoryStore(root)


def coexistence_of(args: argparse.Namespace, memory_dir: Path | None = None):
    """Claude Code's native auto memory and memdir's own switch for this project (memdir.native)."""
    from memdir.native import coexistence

    cwd = Path(args.cwd) if getattr(args, "cwd", None) else None
    return coexistence(cwd, memory_dir)


def warn_ignored_configs(memory_dir: Path | None) -> None:
    """One stderr line per memdir config.json that is ignored whole (not a JSON object): what it sets, such as
    `"enabled": false` or a write mode, does not apply, and a command reporting either must say so."""
    import sys

    from memdir import inert
    from memdir.doctor import config_findings

    for finding in config_findings(memory_dir):
        print(f"memdir: warning: {inert.one_line(finding.path)}: {inert.one_line(finding.message)}", file=sys.stderr)


def project_of(args: argparse.Namespace) -> Path:
    """The project a command works for: the git root of --cwd or the current folder, or that folder itself where
    it has no repository of its own (memdir.locate.project_root: a home folder's dotfiles repository is not its
    project, though Claude Code keys the memory folder by it)."""
    from memdir.paths import project_root

    return project_root(Path(args.cwd) if getattr(args, "cwd", None) else Path.cwd())


def project_root_of(args: argparse.Namespace) -> str:
    """The project a command checks against: --project, else the git root of --cwd or the current folder."""
    import os

    from memdir.project_files import project_root

    return project_root(getattr(args, "project", None) or args.cwd or os.getcwd())
