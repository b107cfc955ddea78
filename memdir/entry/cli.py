"""`memdir` command line: a thin shell over library functions.

Heavy modules are imported inside the handlers that need them, and `memdir hook ...` is
dispatched before argparse is even built: hooks run on every prompt and turn.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from memdir import constants as C, inert, provenance
from memdir.entry.cli_support import (
    coexistence_of,
    memory_dir_of,
    print_json,
    project_of,
    project_root_of,
    store_of,
    warn_ignored_configs,
)
from memdir.errors import MemdirError, os_error_line

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hook path
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn


# --- handlers -------------------------------------------------------------------
def cmd_path(args: argparse.Namespace) -> int:
    resolution = memory_dir_of(args)
    both = coexistence_of(args, resolution.path)
    if args.json:
        print_json(
            {"path": str(resolution.path), "rule": resolution.rule, "enabled": both.memdir, "why": both.memdir_why,
             "native_auto_memory": both.native, "native_why": both.native_why}
        )
    else:
        print(resolution.path)
        print(f"  chosen by: {resolution.rule}", file=sys.stderr)
        print(f"  memdir is {'on' if both.memdir else 'OFF'}: {both.memdir_why}", file=sys.stderr)
        print(f"  Claude Code's auto memory is {'on' if both.native else 'off'}: {both.native_why}", file=sys.stderr)
        warn_ignored_configs(resolution.path)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from memdir.ages import age_label

    store = store_of(args)
    wanted = None
    if args.type:
        from memdir.model import parse_type  # pydantic: imported only when a type is asked for

        wanted = parse_type(args.type).value
    facts = store.facts()  # headers of files unchanged since the last listing come from .memdir/
    result = store.scan(facts)
    facts.save()
    headers = [h for h in result.headers if wanted is None or h.type == wanted]
    if args.json:
        print_json(
            [
                {
                    "file": h.rel_path,
                    "name": h.name,
                    "description": h.description,
                    "type": h.type,
                    "mtime": h.mtime,
                    "problem": h.problem,
                }
                for h in headers
            ]
        )
    else:
        if not headers:
            print(f"no memories in {store.root}", file=sys.stderr)
        # Columns as wide as their longest value, so long file names never push a row out of line.
        now = time.time()
        rows = [(inert.one_line(h.type or "?"), inert.one_line(h.rel_path), age_label(h.mtime, now), h) for h in headers]
        widths = [max((len(r[i]) for r in rows), default=0) for i in range(3)]
        lines = []
        for kind, rel, age, h in rows:
            flag = "  [!] " + h.problem if h.problem else ""
            lines.append(f"{kind:<{widths[0]}}  {rel:<{widths[1]}}  {age:<{widths[2]}}  {h.description or ''}{flag}".rstrip())
        if lines:
            print("\n".join(lines))  # one write: 20,000 print calls were a tenth of `list`
    for rel, reason in result.unreadable:
        print(f"memdir: skipped unreadable {inert.one_line(rel)} ({reason}); run `memdir doctor`", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = store_of(args)
    header = store.find(args.name)
    # bounded, UTF-8 or a one-line error, no symlinks; ESC or U+202E shown escaped, never acted on
    sys.stdout.write(inert.block(store.read_file(header.rel_path)))
    origins = provenance.lines(provenance.of_file(store.base, store.state_rel, store.prefix + header.rel_path))
    if origins:  # where its content came from: after the file, so the file's own bytes print unchanged first
        print("\n# provenance (.memdir/provenance.jsonl; not part of the file)")
        print("\n".join(f"# {line}" for line in origins))
    if header.problem:
        print(f"memdir: warning: {inert.one_line(header.rel_path)}: {header.problem}", file=sys.stderr)
    return 0


def cmd_remember(args: argparse.Namespace) -> int:
    from memdir.entry.cli_decisions import remember_decision, wants_decision
    from memdir.entry.manual import remember

    if wants_decision(args):
        return remember_decision(args)
    if not args.type:
        raise MemdirError("remember: pass --type (user, feedback, project or reference), or --success/--failed/--global")
    result = remember(
        store_of(args),
        args.text,
        type_=args.type,
        name=args.name,
        description=args.description,
        why=args.why,
        how=args.how,
        allow_secrets=args.allow_secret,
    )
    print(result.describe())
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    print(store_of(args).delete(args.name).describe())
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from memdir.index import load_for_context

    store = store_of(args)
    if args.rebuild:
        done = store.rebuild_index()
        kept = f" (previous version kept: {done.kept})" if done.kept else ""
        changes = f"added {len(done.added)}, removed {len(done.removed)} whose file is gone"
        if done.left_out:
            changes += (f", {done.left_out} not listed (Claude Code loads only {C.INDEX_MAX_LINES} lines / "
                        f"{C.INDEX_MAX_CHARS:,} characters; recall still finds them)")
        print(f"rebuilt {store.index_path}: {changes}; hand-written lines kept{kept}", file=sys.stderr)
    print(load_for_context(store.index()) if args.capped else store.index(), end="")
    return 0




def project_scope_note(started: Path) -> str:
    """Claude Code reads a project's settings only in the folder it starts in: from a subfolder of a repository,
    the hooks registered here run only when Claude Code starts in that very subfolder."""
    from memdir.paths import project_root

    root = project_root(started)
    if root == started.resolve():
        return ""
    return (f"  note: Claude Code reads a project's settings in the folder it starts in, so these hooks run when it\n"
            f"  starts in {started}, not in {root} or another folder of the repository\n")


def cmd_install(args: argparse.Namespace) -> int:
    from memdir.entry.install import install, uninstall

    if args.command == "install":
        result = install(args.scope, dry_run=args.dry_run, cwd=Path(args.cwd) if args.cwd else None,
                         no_index=args.no_index)
        verb = "would add" if args.dry_run else "added"
        events = ", ".join(result.added)
    else:
        result = uninstall(args.scope, dry_run=args.dry_run, cwd=Path(args.cwd) if args.cwd else None)
        verb = "would remove" if args.dry_run else "removed"
        events = ", ".join(dict.fromkeys(result.removed))
    if not result.changed:
        print(f"{result.settings_path}: nothing to do ({'already installed' if args.command == 'install' else 'not installed'})")
        return 0
    print(f"{result.settings_path}: {verb} memdir hooks for {events}")
    if args.command == "install" and args.scope == "project":
        print(project_scope_note(Path(args.cwd) if args.cwd else Path.cwd()), end="")
    if result.backup:
        print(f"  backup: {result.backup}")
    if args.command == "install":
        for line in coexistence_of(args, None).lines():
            print(line)
    if args.dry_run:
        print(result.text, end="")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from memdir.entry.demo import run_demo

    return run_demo(Path(args.dir) if args.dir else None)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`memdir mcp`: serve the memory folder to MCP clients over stdio (memdir/mcp_server.py)."""
    import os

    from memdir.entry.mcp_server import serve

    if not args.cwd and os.environ.get(C.PROJECT_DIR_ENV):
        args.cwd = os.environ[C.PROJECT_DIR_ENV]  # Claude Code names the project it started us for
    resolution = memory_dir_of(args)
    # The decision tools read the journal and graph of the project we were started for (also with --dir): in a
    # dotfiles home, the project's own folder, as the hooks and the CLI read them, not the home keying the folder.
    project = project_of(args)
    print(f"memdir mcp: serving {resolution.path}{' (team memory)' if args.team else ''} over stdio", file=sys.stderr)
    if resolution.project_root is not None and project in (Path(project.anchor), Path.home().resolve()):
        print(f"memdir mcp: warning: {project} is not a project; pass --cwd PROJECT or --dir FOLDER",
              file=sys.stderr)  # e.g. Claude Desktop starts us in /
    serve(resolution.path, team=args.team, project=project)
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    """`memdir ui`: browse, search, edit and restore memories in a local web page (memdir/entry/ui/)."""
    from memdir.entry.ui.server import serve
    from memdir.paths import config_home

    resolution = memory_dir_of(args)
    root = Path(project_root_of(args))
    return serve(resolution.path, port=args.port, open_browser=not args.no_browser, project_root=root,
                 user_home=config_home())


# --- parser ---------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:  # one line, no usage dump
            self.exit(2, f"memdir: error: {message} (see `{self.prog} --help`)\n")

    parser = _Parser(prog="memdir", description="Persistent, typed memory for AI coding agents.")
    from memdir import __version__

    parser.add_argument("--version", action="version", version=f"memdir {__version__}")
    parser.add_argument("--cwd", help="project folder used to find the memory folder (default: current)")
    parser.add_argument("--dir", help="use this memory folder instead of the resolved one (a relative one is read from --cwd)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, func, help_text: str, folder: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if folder:
            # SUPPRESS: a subcommand's unset --dir must not clobber `memdir --dir X cmd`.
            p.add_argument("--dir", default=argparse.SUPPRESS,
                           help="use this memory folder instead of the resolved one (a relative one is read from --cwd)")
        if func is not None:
            p.set_defaults(func=func)
        return p

    _add_memory_parsers(command)
    _add_folder_parsers(command)

    from memdir.entry.cli_history import add_parsers as add_history_parsers

    add_history_parsers(command)  # `memdir log` (issue 23)
    from memdir.entry.cli_pipeline import add_parsers as add_pipeline_parsers

    add_pipeline_parsers(command)
    from memdir.entry.cli_decisions import add_parsers as add_decision_parsers

    add_decision_parsers(command)  # decision tiers: status, graph (issue 14)
    from memdir.entry.cli_sync import add_parsers as add_sync_parsers

    add_sync_parsers(command)  # memdir sync (issue 23)

    from memdir.entry.cli_review import add_parser as add_review_parser

    add_review_parser(command)  # write modes: proposals (issue 24)
    _add_eval_parser(sub, command)
    return parser


def _add_memory_parsers(command) -> None:
    """The commands on memories: path, list, show, remember, forget, history, restore, index."""
    p = command("path", cmd_path, "print the memory folder and which rule chose it")
    p.add_argument("--json", action="store_true")

    p = command("list", cmd_list, "list memories, newest first")
    p.add_argument("--agent", help="use this agent type's memory (e.g. code-reviewer) instead of the project's")
    p.add_argument("--scope", choices=["user", "project", "local"], help="agent memory scope (default project)")
    p.add_argument("--type", help="only this type: user, feedback, project or reference")
    p.add_argument("--team", action="store_true", help="team memory instead of personal")
    p.add_argument("--json", action="store_true")

    p = command("show", cmd_show, "print one memory file")
    p.add_argument("name", help="memory name or file name")
    p.add_argument("--team", action="store_true")

    p = command("remember", cmd_remember, "save a memory by hand")
    p.add_argument("text", help="the rule or fact to remember")
    p.add_argument("--type", help="user, feedback, project or reference (not needed with --success/--failed/--global)")
    p.add_argument("--name", help="short title (default: the text's distinctive words; a name another memory has is never reused)")
    p.add_argument("--description", help="one line used to decide recall (default: from the text)")
    p.add_argument("--why", help="why it matters (feedback/project)")
    p.add_argument("--how", help="how to apply it (feedback/project)")
    p.add_argument("--team", action="store_true", help="save to team memory (never holds secrets)")
    p.add_argument("--allow-secret", action="store_true", help="skip the secret guard (personal memory only)")
    from memdir.entry.cli_decisions import add_remember_flags

    add_remember_flags(p)  # decision tiers (issue 14)

    p = command("forget", cmd_forget, "remove a memory (its bytes are kept: `memdir restore NAME`)")
    p.add_argument("name", help="memory name or file name (see `memdir list`)")
    p.add_argument("--team", action="store_true")

    from memdir.entry.cli_history import add_version_parsers

    add_version_parsers(command)

    p = command("index", cmd_index, "print MEMORY.md, or regenerate it from the files")
    p.add_argument("--rebuild", action="store_true", help="regenerate MEMORY.md from the memory files")
    p.add_argument("--capped", action="store_true", help="as a session would load it (200 lines / 25,000 chars)")
    p.add_argument("--team", action="store_true")


def _add_folder_parsers(command) -> None:
    """The commands on the folder and the machine: doctor, demo, verify, mcp, ui, install, uninstall."""
    from memdir.entry.cli_doctor import add_doctor_parser, add_verify_parser

    add_doctor_parser(command)

    command("demo", cmd_demo, "a first run in a throwaway folder, no API key needed")

    add_verify_parser(command)
    p = command("mcp", cmd_mcp, "serve the memory folder to MCP clients (Claude Code, Cursor, Codex...) over stdio")
    p.add_argument("--team", action="store_true", help="serve team memory instead of personal")

    p = command("ui", cmd_ui, "browse, search, edit and restore memories in a local web page (127.0.0.1 only)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL; do not open a browser")

    for name, help_text in (("install", "register memdir's hooks in Claude Code's settings"),
                            ("uninstall", "remove exactly the hooks install added")):
        p = command(name, cmd_install, help_text, folder=False)
        p.add_argument("--scope", choices=["user", "project"], default="user",
                       help="~/.claude/settings.json (user, default) or .claude/settings.json in this folder, "
                            "which Claude Code reads when it starts here")
        p.add_argument("--dry-run", action="store_true", help="print the resulting settings; change nothing")
        if name == "install":
            p.add_argument("--no-index", action="store_true",
                           help="leave MEMORY.md out of session start (when Claude Code's auto-memory loads it)")


def _add_eval_parser(sub, command) -> None:
    """`memdir eval` from a source checkout; from the wheel, which leaves the harness out, one line saying so."""
    import argparse

    try:
        from memdir.evals.cli import add_parser
    except ModuleNotFoundError as exc:
        if exc.name not in ("memdir.evals", "memdir.evals.cli"):
            raise
        p = command("eval", _eval_not_installed, "measure extraction and recall quality (needs a source checkout)",
                    folder=False)
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        return
    add_parser(sub, command)


def _eval_not_installed(args: argparse.Namespace) -> int:
    print("memdir eval: the eval harness is a developer tool and is not in the wheel; run it from a clone of the "
          "repository (pip install -e '.[test]' there, then `memdir eval run`)", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:  # the hot path: no argparse, no handlers it does not need
        from memdir.entry.hooks import main as hook_main

        return hook_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except MemdirError as exc:
        print(f"memdir: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, read-only, permissions: the machine's state, told in one line
        print(f"memdir: error: {os_error_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
