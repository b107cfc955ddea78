"""`memdir` command line: a thin shell over library functions.

Heavy modules are imported inside the handlers that need them, and `memdir hook ...` is
dispatched before argparse is even built: hooks run on every prompt and turn.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from memdir import constants as C, inert, provenance
from memdir.entry.cli_support import memory_dir_of, print_json
from memdir.errors import MemdirError, os_error_line

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hook path
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn


def _store(args: argparse.Namespace):
    from memdir.store import MemoryStore

    root = memory_dir_of(args).path
    return MemoryStore.team_store(root) if getattr(args, "team", False) else MemoryStore(root)


# --- handlers -------------------------------------------------------------------
def _coexistence(args: argparse.Namespace, memory_dir: Path | None = None):
    """Claude Code's native auto memory and memdir's own switch for this project (memdir.native)."""
    from memdir.native import coexistence

    cwd = Path(args.cwd) if getattr(args, "cwd", None) else None
    return coexistence(cwd, memory_dir)


def cmd_path(args: argparse.Namespace) -> int:
    resolution = memory_dir_of(args)
    both = _coexistence(args, resolution.path)
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
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from memdir.ages import age_label

    store = _store(args)
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
    store = _store(args)
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
        _store(args),
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
    print(_store(args).delete(args.name).describe())
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from memdir import history
    from memdir.entry.cli_history import sweep_first

    store = _store(args)
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
    from memdir.entry.cli_history import sweep_first

    store = _store(args)
    sweep_first(store.base)  # what another writer left is committed before it is replaced
    rel, version, kept = store.restore(args.name, args.version)
    note = f" (previous version kept: {kept})" if kept else ""
    print(f"restored {rel} from {version}{note}")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from memdir.index import load_for_context

    store = _store(args)
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


def _older_hook_findings(args: argparse.Namespace) -> list:
    from memdir.doctor import Finding
    from memdir.entry.install import exposed_hooks, locale_hooks, older_hooks, settings_path, site_hooks

    user = str(settings_path("user"))
    cwd = Path(args.cwd) if args.cwd else None
    return [Finding("warning", "hooks", path, f"memdir's hook `{command}` goes through pip's `memdir` script, as an "
                    f"older memdir registered it; run `memdir install{'' if path == user else ' --scope project'}` "
                    "to register the faster command (the script's own imports cost every event two thirds of a "
                    "Python start)")
            for path, command in older_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` runs Python's `site` on every event, as memdir "
                f"registered it before 2026-11-27; run `memdir install{'' if path == user else ' --scope project'}` "
                "to register the command without it (about 3 ms less per event)")
        for path, command in site_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` reads PYTHONPATH, where an empty entry or `.` "
                "runs the session's project's own modules (an `enum.py`, a `memdir/`) in memdir's place; run "
                f"`memdir install{'' if path == user else ' --scope project'}` to register the command with -E")
        for path, command in exposed_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` reads Claude Code's UTF-8 in your locale's encoding, "
                "which -E keeps PYTHONUTF8 from changing (a Chinese prompt, a folder named `projé` misread under "
                f"Latin-1); run `memdir install{'' if path == user else ' --scope project'}` to register it with -X utf8")
        for path, command in locale_hooks(cwd)]


def cmd_doctor(args: argparse.Namespace) -> int:
    from memdir.doctor import check, healthy
    from memdir.entry.cli_decisions import doctor_findings

    store = _store(args)
    findings = check(store, fix=args.fix) + doctor_findings(args) + _older_hook_findings(args)
    ok = healthy(findings)
    from memdir import llm, runlog

    folder = memory_dir_of(args).path
    down = llm.unreachable()
    both = _coexistence(args, store.root)
    if args.json:
        print_json({"folder": str(store.root), "healthy": ok, "findings": [f.as_dict() for f in findings],
                    "endpoint_unreachable": down, "costs": runlog.cost_by_day(folder),
                    "native_auto_memory": both.native, "memdir_enabled": both.memdir, "who_does_what": both.lines(),
                    "stale_memories": _stale_count(args, store)})
    else:
        print(f"{store.root}: {'healthy' if ok else 'UNHEALTHY'}")
        for f in findings:
            tag = "fixed" if f.fixed else f.severity
            hint = " (fixable with --fix)" if f.fixable and not f.fixed else ""
            print(f"  [{tag}] {inert.one_line(f.path)}: {inert.one_line(f.message)}{hint}")
        for line in both.lines():
            print(line)
        from memdir.usage import recent_usage, tokens_used

        try:
            days = recent_usage(folder)
        except OSError:
            days = []  # an unsafe .memdir/ is reported above; nothing to read from it
        if days:
            print("extraction tokens per day (input+output+cache):")
            for day, usage in days:
                print(f"  {day}: {tokens_used(usage):,} tokens over {usage.get('runs', 0)} run(s)")
        stale = _stale_count(args, store)
        if stale:
            print(f"  [warning] {stale} memories name files, functions or flags no longer in the code "
                  f"(doctor checks the newest {DOCTOR_VERIFIES:,}; `memdir verify` checks all and lists them)")
        for line in runlog.cost_lines(folder):
            print(line)
        if down is not None:
            import time

            until = time.strftime("%H:%M:%S", time.localtime(down["until"]))
            print(f"endpoint {down['endpoint']} is unreachable ({down['error']}); prompts use the offline "
                  f"engine until {until}, then try again")
        recent = _hook_log_tail(folder)
        if recent:
            print(f"latest hook activity ({folder / '.memdir' / 'hook.log'}):")
            for line in recent:
                print(f"  {line}")
    return 0 if ok else 1


def _project_root_of(args: argparse.Namespace) -> str:
    import os

    from memdir.verify import project_root

    return project_root(getattr(args, "project", None) or args.cwd or os.getcwd())


def cmd_verify(args: argparse.Namespace) -> int:
    """Check what every memory names against the project; list the stale ones with the evidence."""
    import time

    from memdir.verify import STALE, head_commit, record_verified, verify_folder

    store = _store(args)
    root = _project_root_of(args)
    results = verify_folder(store.root, root)
    stale = {rel: ev for rel, ev in results.items() if ev.status == STALE}
    if args.record:
        commit, today = head_commit(root), time.strftime("%Y-%m-%d")
        for rel, evidence in results.items():
            if evidence.claims and not evidence.unchecked:
                record_verified(store, rel, commit, today)
    if args.json:
        print_json({"project": root, "checked": len(results), "stale": len(stale),
                    "memories": {rel: ev.as_dict() for rel, ev in results.items() if ev.claims}})
        return 1 if stale else 0
    print(f"{store.root}: {len(results)} memories checked against {root}; {len(stale)} stale")
    for rel, evidence in stale.items():
        print(f"  {rel}")
        for line in evidence.gone:
            print(f"    {line}")
    unchecked = sum(1 for ev in results.values() if ev.unchecked)
    if unchecked:
        print(f"  {unchecked} memories have names not checked (time budget); rerun in a smaller checkout")
    return 1 if stale else 0


DOCTOR_VERIFIES = 200  # doctor checks the newest memories against the code, for at most 0.5 s; `memdir verify` all


def _stale_count(args: argparse.Namespace, store) -> int:
    """Memories naming things gone from the project, when doctor runs inside a git checkout: the
    newest DOCTOR_VERIFIES of them, so a 20,000-memory folder does not make doctor take a minute."""
    import os

    from memdir.verify import STALE, verify_folder

    root = _project_root_of(args)
    if not os.path.exists(os.path.join(root, ".git")):
        return 0
    found = verify_folder(store.root, root, budget_s=0.5, newest=DOCTOR_VERIFIES)  # a name not reached: not stale
    return sum(1 for ev in found.values() if ev.status == STALE)


def _hook_log_tail(folder: Path, lines: int = 5) -> list[str]:
    """The last lines of `.memdir/hook.log`: read from its end, bounded, never through a symlink."""
    import os

    from memdir import safefs

    try:
        fd = safefs.open_file(folder, f"{C.STATE_DIRNAME}/hook.log")
    except OSError:
        return []
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - C.HOOK_LOG_TAIL_BYTES))
        data = handle.read(C.HOOK_LOG_TAIL_BYTES)
    return data.decode("utf-8", errors="replace").splitlines()[-lines:]


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
    if result.backup:
        print(f"  backup: {result.backup}")
    if args.command == "install":
        for line in _coexistence(args, None).lines():
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
    from memdir.paths import project_root

    if not args.cwd and os.environ.get("CLAUDE_PROJECT_DIR"):
        args.cwd = os.environ["CLAUDE_PROJECT_DIR"]  # Claude Code names the project it started us for
    resolution = memory_dir_of(args)
    root = resolution.path
    print(f"memdir mcp: serving {root}{' (team memory)' if args.team else ''} over stdio", file=sys.stderr)
    if resolution.project_root in (Path(Path.cwd().anchor), Path.home()):  # e.g. Claude Desktop starts us in /
        print(f"memdir mcp: warning: {resolution.project_root} is not a project; pass --cwd PROJECT or --dir FOLDER",
              file=sys.stderr)
    # The decision tools read the journal and graph of the project we were started for (also with --dir).
    serve(root, team=args.team, project=resolution.project_root or project_root(Path(args.cwd or Path.cwd())))
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    """`memdir ui`: browse, search, edit and restore memories in a local web page (memdir/entry/ui/)."""
    from memdir.entry.ui.server import serve
    from memdir.paths import config_home

    resolution = memory_dir_of(args)
    root = Path(_project_root_of(args))
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
    parser.add_argument("--dir", help="use this memory folder instead of the resolved one")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, func, help_text: str, folder: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if folder:
            # SUPPRESS: a subcommand's unset --dir must not clobber `memdir --dir X cmd`.
            p.add_argument("--dir", default=argparse.SUPPRESS, help="use this memory folder instead of the resolved one")
        if func is not None:
            p.set_defaults(func=func)
        return p

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
    p.add_argument("name")
    p.add_argument("--team", action="store_true")

    p = command("history", cmd_history, "list the kept previous versions of a memory (or MEMORY.md)")
    p.add_argument("name", help="memory name or file name; deleted memories too")
    p.add_argument("--team", action="store_true")

    p = command("restore", cmd_restore, "bring back a kept version (the current one is kept first)")
    p.add_argument("name", help="memory name or file name; deleted memories too")
    p.add_argument("--version", help="version number from `memdir history` (1 = newest, the default) or file name")
    p.add_argument("--team", action="store_true")

    p = command("index", cmd_index, "print MEMORY.md, or regenerate it from the files")
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--capped", action="store_true", help="as a session would load it (200 lines / 25,000 chars)")
    p.add_argument("--team", action="store_true")

    p = command("doctor", cmd_doctor, "check the folder's health; exit 1 when unhealthy")
    p.add_argument("--fix", action="store_true", help="fix what is safe: index drift, orphan lines, temp files")
    p.add_argument("--team", action="store_true")
    p.add_argument("--json", action="store_true")

    command("demo", cmd_demo, "a first run in a throwaway folder, no API key needed")

    p = command("verify", cmd_verify, "check the files, symbols, commands and flags memories name against the "
                "code; list stale memories (exit 1 when any)")
    p.add_argument("--project", help="project folder to check against (default: the git root of --cwd or .)")
    p.add_argument("--record", action="store_true",
                   help="note the commit and date each fully checked memory was verified against (metadata.verified)")
    p.add_argument("--team", action="store_true")
    p.add_argument("--json", action="store_true")
    p = command("mcp", cmd_mcp, "serve the memory folder to MCP clients (Claude Code, Cursor, Codex...) over stdio")
    p.add_argument("--team", action="store_true", help="serve team memory instead of personal")

    p = command("ui", cmd_ui, "browse, search, edit and restore memories in a local web page (127.0.0.1 only)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL; do not open a browser")

    for name, help_text in (("install", "register memdir's hooks in Claude Code's settings"),
                            ("uninstall", "remove exactly the hooks install added")):
        p = command(name, cmd_install, help_text, folder=False)
        p.add_argument("--scope", choices=["user", "project"], default="user",
                       help="~/.claude/settings.json (user, default) or the repo's .claude/settings.json")
        p.add_argument("--dry-run", action="store_true", help="print the resulting settings; change nothing")
        if name == "install":
            p.add_argument("--no-index", action="store_true",
                           help="leave MEMORY.md out of session start (when Claude Code's auto-memory loads it)")

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
