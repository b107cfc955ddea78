"""`memdir doctor` and `memdir verify`: the folder's health, and what memories name that the code no longer has."""

from __future__ import annotations

from pathlib import Path

from memdir import constants as C, inert
from memdir.entry.cli_support import coexistence_of, memory_dir_of, print_json, project_root_of, store_of

TYPE_CHECKING = False  # typing costs ~3 ms to import
if TYPE_CHECKING:
    import argparse


def _older_hook_findings(args: argparse.Namespace) -> list:
    from memdir.doctor import Finding
    from memdir.entry.install import (
        exposed_hooks,
        locale_hooks,
        older_hooks,
        reinstall_command,
        site_hooks,
        twice_registered,
    )

    cwd = Path(args.cwd) if args.cwd else None
    advice: dict[str, str] = {}

    def run(path: str) -> str:  # the install that keeps the file's scope and its --no-index
        if path not in advice:
            advice[path] = reinstall_command(path, cwd)
        return advice[path]

    return [Finding("warning", "hooks", path, f"memdir's hook `{command}` goes through pip's `memdir` script, as an "
                    f"older memdir registered it; run `{run(path)}` to register the faster command (the script's "
                    "own imports cost every event two thirds of a Python start)")
            for path, command in older_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` runs Python's `site` on every event, as memdir "
                f"registered it before 2026-11-27; run `{run(path)}` to register the command without it (about 3 ms "
                "less per event)")
        for path, command in site_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` reads PYTHONPATH, where an empty entry or `.` "
                "runs the session's project's own modules (an `enum.py`, a `memdir/`) in memdir's place; run "
                f"`{run(path)}` to register the command with -E")
        for path, command in exposed_hooks(cwd)] + [
        Finding("warning", "hooks", path, f"memdir's hook `{command}` reads Claude Code's UTF-8 in your locale's encoding, "
                "which -E keeps PYTHONUTF8 from changing (a Chinese prompt, a folder named `projé` misread under "
                f"Latin-1); run `{run(path)}` to register it with -X utf8")
        for path, command in locale_hooks(cwd)] + [
        Finding("warning", "hooks", " and ".join(paths), f"memdir's `{event}` hook is registered in both settings files "
                f"with different commands: Claude Code runs both at once, so that work is done twice{_TWICE.get(event, '')};"
                " run `memdir uninstall` in the scope you do not want (or `memdir install` in both, to make them one)")
        for event, paths in twice_registered(cwd)]


# What a memdir hook run twice at once costs, per event: the prompt and SessionStart hooks claim what they say under
# the session's lock (memdir.entry.prompt_claim, memdir.entry.start_claim), so only the work is doubled there.
_TWICE = {"prompt": " (two recalls per prompt, though only one of them says each memory and decision)",
          "session-start": " (though only one of them gives the session its start)",
          "stop": " (two background workers after each turn)"}


def _old_folder_findings(args: argparse.Namespace) -> list:
    """The folders memdir chose for this project before it keyed them as Claude Code does, holding memories it no
    longer reads (memdir.old_folders). Not with --dir: a folder named on the command line chose itself."""
    import os

    from memdir.doctor import Finding
    from memdir.old_folders import old_folders

    if getattr(args, "dir", None) is not None:
        return []
    return [Finding("warning", "old-folder", old.path, old.advice())
            for old in old_folders(args.cwd or os.getcwd())]


def cmd_doctor(args: argparse.Namespace) -> int:
    from memdir.doctor import check, config_findings, healthy
    from memdir.entry.cli_decisions import doctor_findings

    store = store_of(args)
    findings = (check(store, fix=args.fix) + config_findings(store.root) + doctor_findings(args)
                + _older_hook_findings(args) + _old_folder_findings(args))
    ok = healthy(findings)
    from memdir import llm, runlog

    folder = memory_dir_of(args).path
    down = llm.unreachable()
    both = coexistence_of(args, store.root)
    if args.json:
        print_json({"folder": str(store.root), "healthy": ok, "findings": [f.as_dict() for f in findings],
                    "endpoint_unreachable": down, "costs": runlog.cost_by_day(folder),
                    "native_auto_memory": both.native, "memdir_enabled": both.memdir, "who_does_what": both.lines(),
                    "stale_memories": _stale_count(args, store)})
    else:
        print(f"{store.root}: {'healthy' if ok else 'UNHEALTHY'}")
        why_how = [f for f in findings if f.code == "why-how"]
        grouped = len(why_how) > WHY_HOW_LISTED
        for f in findings:
            if grouped and f.code == "why-how":
                if f is why_how[0]:
                    print(_why_how_line(why_how))
                continue
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
            print(f"  [warning] {stale} memories name files, functions or flags not in the code "
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
            print(f"latest hook activity ({folder / C.STATE_DIRNAME / C.HOOK_LOG_NAME}):")
            for line in recent:
                print(f"  {line}")
    return 0 if ok else 1


def cmd_verify(args: argparse.Namespace) -> int:
    """Check what every memory names against the project; list the stale ones with the evidence."""
    import time

    from memdir.verify import NO_PROJECT_CODE, STALE, head_commit, holds_no_code, record_verified, verify_folder

    store = store_of(args)
    root = project_root_of(args)
    if holds_no_code(store.root, root):
        note = NO_PROJECT_CODE.format(root=root)
        if args.json:
            print_json({"project": root, "checked": 0, "stale": 0, "memories": {}, "note": note})
        else:
            print(f"{store.root}: {note}; run it in your checkout or pass --project <checkout>")
        return 0
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


# A folder written by hand or by Claude Code's own model often has no Why/How lines at all (17 of the real 55-file
# folder's memories): one line for them, not one each, past this many.
WHY_HOW_LISTED = 3


def _why_how_line(why_how: list) -> str:
    """The memories lacking Why/How lines, in one warning that says what to do about them."""
    shown = ", ".join(inert.one_line(f.path) for f in why_how[:WHY_HOW_LISTED])
    more = f" and {len(why_how) - WHY_HOW_LISTED} more" if len(why_how) > WHY_HOW_LISTED else ""
    return (f"  [warning] {len(why_how)} feedback or project memories lack **Why:** / **How to apply:** lines ({shown}{more}; "
            "`memdir doctor --json` lists them): add the reason and when it applies to each body, so the model can "
            "judge edge cases; recall reads them all the same")


DOCTOR_VERIFIES = 200  # doctor checks the newest memories against the code, for at most 0.5 s; `memdir verify` all


def _stale_count(args: argparse.Namespace, store) -> int:
    """Memories naming things gone from the project, when doctor runs inside a git checkout: the
    newest DOCTOR_VERIFIES of them, so a 20,000-memory folder does not make doctor take a minute."""
    import os

    from memdir.verify import STALE, verify_folder

    root = project_root_of(args)
    if not os.path.exists(os.path.join(root, ".git")):
        return 0
    found = verify_folder(store.root, root, budget_s=0.5, newest=DOCTOR_VERIFIES)  # a name not reached: not stale
    return sum(1 for ev in found.values() if ev.status == STALE)


def _hook_log_tail(folder: Path, lines: int = 5) -> list[str]:
    """The last lines of `.memdir/hook.log`, read across its rotation (hook.log.1 before it when hook.log was just
    moved aside): bounded, never through a symlink."""
    from memdir import safefs

    return safefs.tail_lines(folder, f"{C.STATE_DIRNAME}/{C.HOOK_LOG_NAME}", C.HOOK_LOG_TAIL_BYTES)[-lines:]


def add_doctor_parser(command) -> None:
    p = command("doctor", cmd_doctor, "check the folder's health; exit 1 when unhealthy")
    p.add_argument("--fix", action="store_true", help="fix what is safe: index drift, orphan lines, temp files")
    p.add_argument("--team", action="store_true")
    p.add_argument("--json", action="store_true")


def add_verify_parser(command) -> None:
    p = command("verify", cmd_verify, "check the files, symbols, commands and flags memories name against the "
                "code; list stale memories (exit 1 when any)")
    p.add_argument("--project", help="project folder to check against (default: the git root of --cwd or .)")
    p.add_argument("--record", action="store_true",
                   help="note the commit and date each fully checked memory was verified against (metadata.verified)")
    p.add_argument("--team", action="store_true")
    p.add_argument("--json", action="store_true")
