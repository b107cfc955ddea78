"""Write docs/cli.md from the CLI's own argparse parser, so the reference cannot drift from the code.

    python docs/generate.py           # rewrite docs/cli.md
    python docs/generate.py --check   # exit 1 when docs/cli.md is not what the parser says

The page is built from the parser's actions rather than `format_help()`, whose layout changes with the
terminal width and the Python version. Run it from a source checkout: `memdir eval` is documented from
the eval harness, which the wheel leaves out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
CLI_PAGE = DOCS / "cli.md"

HEADER = """\
# CLI reference

Generated from `memdir.entry.cli.build_parser()` by `python docs/generate.py`; do not edit by hand
(`tests/test_docs.py` fails when this page and the parser disagree). Every command also answers `--help`.

`memdir hook prompt|stop|session-start` is not listed below: it is what `memdir install` registers with
Claude Code, reads the hook's JSON payload on stdin and bypasses argparse to keep hooks fast
(see [claude-code.md](claude-code.md)). `session-start` takes `--no-index` (set by `memdir install --no-index`).
"""


# Flags many commands share without a help string of their own.
SHARED_HELP = {
    "--json": "print JSON instead of text",
    "--team": "team memory (`<memory>/team/`) instead of personal",
    "--dry-run": "show what would change; change nothing",
}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _help(action: argparse.Action) -> str:
    """The help text as `--help` prints it (argparse expands `%(default)s` and `%%`)."""
    if not action.help:
        return SHARED_HELP.get(action.option_strings[-1] if action.option_strings else "", "")
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    return action.help % params


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _synopsis(action: argparse.Action) -> str:
    """One argument as it is typed: `--since SINCE`, `[paths ...]`, `--json`."""
    name = action.option_strings[-1] if action.option_strings else _metavar(action)
    if action.option_strings and _takes_value(action):
        name = f"{name} {_metavar(action)}"
    if action.nargs in ("*", "?", argparse.REMAINDER) and not action.option_strings:
        name = f"[{name} ...]" if action.nargs != "?" else f"[{name}]"
    elif action.nargs == "+":
        name = f"{name} [{name} ...]"
    return name


def _default(action: argparse.Action) -> str:
    default = action.default
    if default in (None, False, argparse.SUPPRESS) or not _takes_value(action):
        return ""
    return f"`{default}`"


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _table(actions: list[argparse.Action]) -> list[str]:
    if not actions:
        return []
    actions = sorted(actions, key=lambda a: bool(a.option_strings))  # positionals first, else as declared
    rows = ["| argument | default | what it does |", "|---|---|---|"]
    for action in actions:
        names = ", ".join(action.option_strings) if action.option_strings else _metavar(action)
        typed = _synopsis(action) if action.option_strings and _takes_value(action) else names
        if action.option_strings and _takes_value(action) and len(action.option_strings) > 1:
            typed = f"{', '.join(action.option_strings[:-1])}, {_synopsis(action)}"
        rows.append(f"| `{_cell(typed)}` | {_default(action)} | {_cell(_help(action))} |")
    return rows + [""]


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order the parser lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return [(name, helps.get(name, sub.description or ""), sub) for name, sub in action.choices.items()]
    return []


def _command(path: str, help_text: str, parser: argparse.ArgumentParser, depth: int) -> list[str]:
    actions = _arguments(parser)
    subs = _subcommands(parser)
    words = [path, *(["[options]"] if any(a.option_strings for a in actions) else [])]
    words += [_synopsis(a) for a in actions if not a.option_strings]
    if subs:
        words.append("|".join(name for name, _, _ in subs) + " ...")
    lines = [f"{'#' * depth} `{path}`", "", _cell(help_text) if help_text else "", ""]
    lines += [f"    {' '.join(words)}", ""]
    lines += _table(actions)
    for name, sub_help, sub in subs:
        lines += _command(f"{path} {name}", sub_help, sub, depth + 1)
    return lines


def render_cli() -> str:
    from memdir.entry.cli import build_parser

    parser = build_parser()
    lines = [HEADER, "", "## Global options", "", "Given before the command: `memdir --dir FOLDER list`.", ""]
    lines += _table(_arguments(parser))
    lines += ["## Commands", ""]
    lines += [f"- [`memdir {name}`](#memdir-{name}): {_cell(help_text)}" for name, help_text, _ in _subcommands(parser)]
    lines.append("")
    for name, help_text, sub in _subcommands(parser):
        lines += _command(f"memdir {name}", help_text, sub, 3)
    text = "\n".join(line.rstrip() for line in lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n"


def main(argv: list[str]) -> int:
    wanted = render_cli()
    if "--check" in argv:
        current = CLI_PAGE.read_text(encoding="utf-8") if CLI_PAGE.exists() else ""
        if current != wanted:
            print(f"{CLI_PAGE} is out of date; run `python docs/generate.py`", file=sys.stderr)
            return 1
        return 0
    CLI_PAGE.write_text(wanted, encoding="utf-8")
    print(f"wrote {CLI_PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
