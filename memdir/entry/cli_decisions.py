"""CLI for the decision tiers: `memdir graph search|show|export`, `memdir status`, and the explicit
`memdir remember "..." --success|--failed|--global` (a thin shell, like memdir/cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.entry.cli_support import memory_dir_of, print_json
from memdir.errors import MemdirError

if TYPE_CHECKING:
    import argparse


def _project_root(args: argparse.Namespace) -> Path:
    from memdir.paths import project_root

    return project_root(Path(args.cwd) if args.cwd else Path.cwd())


def remember_decision(args: argparse.Namespace) -> int:
    """`memdir remember TEXT --success|--failed|--global`: journal, graph, promotion, all at once."""
    from memdir.stages.extractor.capture import capture_explicit
    from memdir.stages.extractor.decision_pipeline import compat_enabled, record

    if not args.text.strip():
        raise MemdirError("nothing to remember: pass the decision as text")
    outcome_flag = "success" if args.success else "failed" if args.failed else None
    root = _project_root(args)
    scope = "global" if args.is_global else "team" if args.team else "user"
    captured = capture_explicit(args.text, outcome=outcome_flag, scope=scope,
                                project=root.name)
    compat = args.orchestkit_compat or compat_enabled()
    outcome = record([captured], project_root=root, memory_dir=memory_dir_of(args).path, compat_section=compat,
                     flush_graph=True, team=args.team)
    d = captured.decision
    print(f"recorded {d.kind} {d.id} (confidence {d.confidence:.2f}) in {root / '.claude/memory/decisions.jsonl'}")
    if not outcome.journaled and not outcome.errors:
        print("  already in the journal; nothing new appended")
    for p in outcome.promotions:
        print(f"  memory: {p.action} {p.rel_path}" + (f" ({p.reason})" if p.reason else "")
              + (f"; previous version kept as {p.kept}" if p.kept else "")
              + ("; added to ## Recent Project Decisions" if p.compat else ""))
    for error in outcome.errors:
        print(f"memdir: warning: {error}", file=sys.stderr)
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from memdir import graph

    root = _project_root(args)
    path = graph.graph_path(root)
    loaded = graph.load_graph(path)
    if args.graph_command == "export":
        sys.stdout.write(graph.Graph(entities=loaded.entities, relations=loaded.relations).to_jsonl()
                         if not args.json else "")
        if args.json:
            print_json(loaded.as_dict())
        return 0
    if args.graph_command == "show":
        found = graph.show(loaded, args.name)
        if found is None:
            raise MemdirError(f"no entity named {args.name!r} in {path}; try `memdir graph search {args.name}`")
    else:
        found = graph.search(loaded, args.term)
    if args.json:
        print_json(found.as_dict())
        return 0
    if not found.entities:
        print(f"nothing in {path} matches {args.term!r}", file=sys.stderr)
    for line in graph.render_lines(found):
        print(line)
    if loaded.corrupt_lines:
        print(f"memdir: skipped {loaded.corrupt_lines} corrupt line(s) in {path}; see `memdir status`", file=sys.stderr)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from memdir.tier_status import tier_status

    tiers = tier_status(_project_root(args), memory_dir_of(args).path)
    if args.json:
        print_json([t.as_dict() for t in tiers])
    else:
        for t in tiers:
            print(f"tier {t.tier:<16} {t.state:<12} {t.reason}")
    return 0 if all(t.state == "healthy" for t in tiers) else 1


def add_parsers(command) -> None:
    p = command("status", cmd_status, "health of the decision tiers: graph, journal, memory folder")
    p.add_argument("--json", action="store_true")

    p = command("graph", None, "the decision knowledge graph (MCP memory server format)")
    graph_sub = p.add_subparsers(dest="graph_command", required=True, metavar="search|show|export")
    s = graph_sub.add_parser("search", help="entities whose name, type or observations contain TERM")
    s.add_argument("term")
    s.add_argument("--json", action="store_true")
    s = graph_sub.add_parser("show", help="one entity and its relations")
    s.add_argument("name")
    s.add_argument("--json", action="store_true")
    s = graph_sub.add_parser("export", help="the whole graph as MCP memory-server JSONL (or --json)")
    s.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_graph)


def add_remember_flags(p) -> None:
    outcome = p.add_mutually_exclusive_group()
    outcome.add_argument("--success", action="store_true", help="record a decision that worked (a pattern, high confidence)")
    outcome.add_argument("--failed", action="store_true", help="record an approach that failed (an anti-pattern)")
    p.add_argument("--global", dest="is_global", action="store_true", help="record the decision for every project")
    p.add_argument("--orchestkit-compat", action="store_true",
                   help="also list it under '## Recent Project Decisions' in MEMORY.md (OrchestKit layout)")


def wants_decision(args: argparse.Namespace) -> bool:
    return bool(args.success or args.failed or args.is_global or (args.orchestkit_compat and not args.type)
                or (args.team and not args.type))
