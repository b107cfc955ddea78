"""The README and docs/ stay true to the code: every MEMDIR_* setting the package reads is in docs/settings.md,
the README fits on a screen and its test command is the one CI runs, every relative link resolves, and
docs/cli.md is what docs/generate.py writes from the parser. Each check is a function the tests also feed
a broken input, so a check that cannot fail would show."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
SETTINGS_PAGE = DOCS / "settings.md"
README_MAX_LINES = 150

SETTING = re.compile(r"\bMEMDIR_[A-Z0-9_]*[A-Z0-9]\b")
DOCUMENTED = re.compile(r"^### `(MEMDIR_[A-Z0-9_]+)`$", re.MULTILINE)
FENCE = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$", re.MULTILINE)


# --- settings ----------------------------------------------------------------------------------------
def python_files(folder: Path) -> list[Path]:
    """Every .py file below `folder`, through the package's stage symlinks."""
    found = []
    for here, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [Path(here) / name for name in files if name.endswith(".py")]
    return found


def settings_read_in(files: list[Path]) -> set[str]:
    """MEMDIR_* names in string literals (constants, f-string parts, docstrings), never identifiers:
    `DENSE_DISABLE_ENV = "MEMDIR_DENSE"` reads MEMDIR_DENSE, and a constant named MEMDIR_CONFIG_NAME reads nothing."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names |= set(SETTING.findall(node.value))
    return names


def documented_settings(page_text: str) -> set[str]:
    return set(DOCUMENTED.findall(page_text))


def test_every_setting_the_package_reads_is_documented():
    read = settings_read_in(python_files(ROOT / "memdir"))
    missing = sorted(read - documented_settings(SETTINGS_PAGE.read_text(encoding="utf-8")))
    assert len(read) > 20, f"the scan found only {sorted(read)}: it no longer reaches the package"
    assert missing == [], f"docs/settings.md lacks an entry (a heading ### `NAME`) for: {', '.join(missing)}"


def test_every_documented_setting_is_read_somewhere():
    read = settings_read_in(python_files(ROOT / "memdir") + python_files(ROOT / "tests"))
    stale = sorted(documented_settings(SETTINGS_PAGE.read_text(encoding="utf-8")) - read)
    assert stale == [], f"docs/settings.md documents settings nothing reads: {', '.join(stale)}"


def test_the_settings_scan_sees_constants_and_function_bodies_but_not_identifiers(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('MEMDIR_CONFIG_NAME = "config.json"\nPROBE_ENV = "MEMDIR_PROBE_ONE"\n'
                     'def f(env):\n    return env.get(f"MEMDIR_PROBE_TWO{1}") or env.get("MEMDIR_DENSE")\n')
    read = settings_read_in([probe])
    assert read == {"MEMDIR_PROBE_ONE", "MEMDIR_PROBE_TWO", "MEMDIR_DENSE"}
    documented = documented_settings(SETTINGS_PAGE.read_text(encoding="utf-8"))
    assert read - documented == {"MEMDIR_PROBE_ONE", "MEMDIR_PROBE_TWO"}


# --- README ------------------------------------------------------------------------------------------
def readme_problems(text: str) -> list[str]:
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > README_MAX_LINES:
        return [f"README.md has {lines} lines, over {README_MAX_LINES}: move the detail into docs/ and link it"]
    return []


def test_the_readme_fits_on_a_screen():
    assert readme_problems(README.read_text(encoding="utf-8")) == []
    assert readme_problems("line\n" * README_MAX_LINES) == []
    assert readme_problems("line\n" * (README_MAX_LINES + 1)) != []


def test_the_readme_test_command_is_the_one_ci_runs():
    """README's command 2 and .ci/run must stay identical: what a new contributor types is what CI proves."""
    readme = README.read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.endswith(".venv/bin/python -m pytest")]
    assert len(commands) == 1, "README.md must show exactly one test command"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in ci, f"the README's test command is not a line of .ci/run: {commands[0]}"


# --- links -------------------------------------------------------------------------------------------
def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Relative links (outside code) whose file, or whose #anchor in a markdown file, does not exist."""
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text(encoding="utf-8")))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{page.relative_to(root)}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{page.relative_to(root)}: {target} (no heading #{anchor} in {linked.name})")
    return broken


def doc_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_every_relative_link_resolves():
    broken = [b for page in doc_pages() for b in broken_links(page)]
    assert broken == [], "broken links:\n" + "\n".join(broken)


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# Here\n\n```bash\n# not a heading\n```\n")
    page.write_text("[ok](there.md#here) [gone](missing.md) [no anchor](there.md#not-a-heading) "
                    "[web](https://example.com/x.md) `[code](missing.md)`\n")
    assert broken_links(page, root=tmp_path) == [
        "page.md: missing.md (no such file)",
        "page.md: there.md#not-a-heading (no heading #not-a-heading in there.md)",
    ]


def test_every_docs_page_is_linked_from_the_readme():
    text = FENCE.sub("", README.read_text(encoding="utf-8"))
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in LINK.findall(text)}
    orphans = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert orphans == [], f"docs pages no README link reaches: {orphans}"


# --- CLI reference -----------------------------------------------------------------------------------
def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_what_the_parser_says():
    generate = _generator()
    assert generate.CLI_PAGE.read_text(encoding="utf-8") == generate.render_cli(), (
        "docs/cli.md is out of date: run `python docs/generate.py`")


def test_the_cli_reference_lists_every_command_and_flag():
    page = _generator().render_cli()
    for heading in ("### `memdir remember`", "#### `memdir graph search`", "#### `memdir eval run`"):
        assert heading in page
    assert "| `--max-cost MAX_COST` |" in page and "(50% price)" in page  # argparse's %% expanded as --help does


def test_every_argument_in_the_cli_reference_says_what_it_does():
    """A new user reading `memdir extract --help` or docs/cli.md met `transcript`, `query`, `name`,
    `--rebuild`, `--concurrency` with nothing beside them."""
    blank = [line for line in _generator().render_cli().splitlines()
             if line.startswith("| `") and line.rstrip().endswith("|  |")]
    assert blank == [], blank
