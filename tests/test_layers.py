"""DESIGN's one-way data flow, checked on the source: transcript -> extractor -> memory folder -> recall.

`extractor/` and `recall/` never import each other, and core `memdir/` modules import neither stage;
only the entry points (CLI, hooks, demo, the public API, the MCP server) sit above both.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY_POINTS = {"cli.py", "cli_pipeline.py", "cli_decisions.py", "hooks.py", "demo.py", "api.py", "mcp_server.py",
                "entry.py"}


def _imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_stages_never_import_each_other():
    crossings = [f"extractor/{p.name}" for p in (ROOT / "extractor").glob("*.py") if "recall" in _imported_packages(p)]
    crossings += [f"recall/{p.name}" for p in (ROOT / "recall").glob("*.py") if "extractor" in _imported_packages(p)]
    assert crossings == []


def test_core_modules_import_no_stage():
    offenders = [p.name for p in (ROOT / "memdir").glob("*.py")
                 if p.name not in ENTRY_POINTS and _imported_packages(p) & {"extractor", "recall"}]
    assert offenders == []
