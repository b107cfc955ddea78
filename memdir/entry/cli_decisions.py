"""CLI for the decision tiers: `memdir graph search|show|export`, `memdir status`, and the explicit
`memdir remember "..." --success|--failed|--global` (a thin shell, like memdir/cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.entry.cli_support import memory_dir_of, print_json, project_of
from memdir.errors import MemdirError

if TYPE_CHECKING:
    import argparse

    from memdir.decisions import Scope


def _compat(args: argparse.Namespace, memory_dir: Path, root: Path) -> bool:
    """OrchestKit's layout for this command: the --orchestkit-compat flag, else the user's setting."""
    from memdir.paths import orchestkit_compat

    return bool(getattr(args, "orchestkit_compat", False)) or orchestkit_compat(memory_dir, root).enabled


def _decisions_folder(args: argparse.Namespace) -> Path:
    from memdir.paths import decisions_dir

    memory_dir, root = memory_dir_of(args).path, project_of(args)
    return decisions_dir(memory_dir, root, compat=_compat(args, memory_dir, root))


def remember_decision(args: argparse.Namespace) -> int:
    """`memdir remember TEXT --success|--failed|--global`: journal, graph, promotion, all at once."""
    from memdir.decisions import journal_path
    from memdir.paths import decisions_dir
    from memdir.stages.extractor.capture import capture_explicit
    from memdir.stages.extractor.decision_pipeline import record

    if not args.text.strip():
        raise MemdirError("nothing to remember: pass the decision as text")
    from memdir import write_mode

    memory_dir = memory_dir_of(args).path
    write_mode.check_writable(memory_dir)  # read-only: nothing recorded anywhere, in one line
    outcome_flag = "success" if args.success else "failed" if args.failed else None
    root = project_of(args)
    scope: Scope = "global" if args.is_global else "team" if args.team else "user"
    captured = capture_explicit(args.text, outcome=outcome_flag, scope=scope,
                                project=root.name)
    compat = _compat(args, memory_dir, root)
    folder = decisions_dir(memory_dir, root, compat=compat)
    outcome = record([captured], folder=folder, memory_dir=memory_dir, compat_section=compat,
                     flush_graph=True, team=args.team, who=write_mode.USER)
    d = captured.decision
    if outcome.errors and not outcome.journaled and not outcome.promotions:  # nothing was saved anywhere
        raise MemdirError(f"{d.kind} not recorded: {outcome.errors[0]}")
    print(f"recorded {d.kind} {d.id} (confidence {d.confidence:.2f}) in {journal_path(folder)}")
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

    path = graph.graph_path(_decisions_folder(args))
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

    memory_dir, root = memory_dir_of(args).path, project_of(args)
    tiers = tier_status(root, memory_dir, compat=_compat(args, memory_dir, root))
    if args.json:
        print_json([t.as_dict() for t in tiers])
    else:
        for t in tiers:
            print(f"tier {t.tier:<16} {t.state:<12} {t.reason}")
    return 0 if all(t.state == "healthy" for t in tiers) else 1


def doctor_findings(args: argparse.Namespace) -> list:
    """Warnings about the decision layout: an `orchestkit_compat` that is not true/false, and a journal in
    the repository memdir does not read (OrchestKit's layout off and no choice made)."""
    from memdir import constants as C
    from memdir.decision_context import unread_repo_journal
    from memdir.doctor import Finding
    from memdir.paths import config_value, orchestkit_config_files, orchestkit_journal

    memory_dir, root = memory_dir_of(args).path, project_of(args)
    findings = []
    for config_file in orchestkit_config_files(memory_dir, root):
        value = config_value(config_file, C.ORCHESTKIT_COMPAT_KEY)
        if value is not None and not isinstance(value, bool):
            findings.append(Finding("warning", "config", str(config_file), f"{C.ORCHESTKIT_COMPAT_KEY} is {value!r}, "
                                    "which is ignored: write true or false (JSON, no quotes)"))
    unread = "" if _compat(args, memory_dir, root) else unread_repo_journal(memory_dir, root)
    if unread:
        path = str(orchestkit_journal(root))
        findings.append(Finding("warning", "unread-decision-journal", path, unread.removeprefix(path).lstrip()))
    return findings


def add_parsers(command) -> None:
    p = command("status", cmd_status, "health of the decision tiers: graph, journal, memory folder")
    p.add_argument("--json", action="store_true")
    _add_compat_flag(p, "read the journal and graph in the repository's .claude/memory/ (OrchestKit layout)")

    p = command("graph", None, "the decision knowledge graph (MCP memory server format)")
    graph_sub = p.add_subparsers(dest="graph_command", required=True, metavar="search|show|export")
    s = graph_sub.add_parser("search", help="entities whose name, type or observations contain TERM")
    s.add_argument("term", help="text to look for (case-insensitive)")
    s.add_argument("--json", action="store_true")
    s = graph_sub.add_parser("show", help="one entity and its relations")
    s.add_argument("name", help="the entity's name, as `graph search` lists it")
    s.add_argument("--json", action="store_true")
    s = graph_sub.add_parser("export", help="the whole graph as MCP memory-server JSONL (or --json)")
    s.add_argument("--json", action="store_true")
    for sub in graph_sub.choices.values():
        _add_compat_flag(sub, "read the graph in the repository's .claude/memory/ (OrchestKit layout)")
    p.set_defaults(func=cmd_graph)


def _add_compat_flag(p, help_text: str) -> None:
    p.add_argument("--orchestkit-compat", action="store_true",
                   help=f"{help_text}; also MEMDIR_ORCHESTKIT_COMPAT=1 or \"orchestkit_compat\": true in config.json")


def add_remember_flags(p) -> None:
    outcome = p.add_mutually_exclusive_group()
    outcome.add_argument("--success", action="store_true", help="record a decision that worked (a pattern, high confidence)")
    outcome.add_argument("--failed", action="store_true", help="record an approach that failed (an anti-pattern)")
    p.add_argument("--global", dest="is_global", action="store_true", help="record the decision for every project")
    p.add_argument("--orchestkit-compat", action="store_true",
                   help="OrchestKit layout: journal and graph in the repository's .claude/memory/, and the decision "
                        "also listed under '## Recent Project Decisions' in MEMORY.md")


def wants_decision(args: argparse.Namespace) -> bool:
    return bool(args.success or args.failed or args.is_global or (args.orchestkit_compat and not args.type)
                or (args.team and not args.type))
