"""Helpers the CLI modules share: which memory folder a command works on, and JSON output."""

from __future__ import annotations

import json
from pathlib import Path


def memory_dir_of(args):
    """The Resolution for a command: --dir, else --agent/--scope, else the normal chain."""
    from memdir.paths import Resolution, agent_memory_dir, project_root, resolve_memory_dir, validate_configured_path

    if getattr(args, "dir", None):
        return Resolution(validate_configured_path(args.dir, "--dir"), "--dir flag", None)
    if getattr(args, "agent", None):
        root = project_root(Path(args.cwd) if args.cwd else Path.cwd())
        path = agent_memory_dir(args.agent, args.scope or "project", root)
        return Resolution(path, f"agent memory for {args.agent} ({args.scope or 'project'} scope)", root)
    return resolve_memory_dir(Path(args.cwd) if args.cwd else None)


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
