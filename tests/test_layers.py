"""DESIGN's one-way data flow, checked on the source by folder: transcript -> extractor -> memory folder -> recall.

Every module's layer is the folder it lives in, never its file name:

    memdir/prompts/      the templates; imports nothing of memdir
    memdir/*.py          core: the memory folder as a store, paths, settings, transcripts, the model client
    memdir/stages/X/     a stage (extractor, recall): core and prompts, never the other stage
    memdir/evals/        the eval harness (a developer tool, not in the wheel): core, prompts and the stages
    memdir/entry/        CLI, hooks, worker, MCP server, memory tool, demo, public API: anything

`memdir/__init__.py` is the package's public face: it re-exports `memdir.entry.api` lazily and nothing else.
Imports inside functions count, and so do `python -m module` strings (how the hooks start the worker).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memdir"

ALLOWED = {
    "prompts": {"prompts"},
    "core": {"core", "prompts"},
    "extractor": {"core", "prompts", "extractor"},
    "recall": {"core", "prompts", "recall"},
    "evals": {"core", "prompts", "extractor", "recall", "evals"},
    "entry": {"core", "prompts", "extractor", "recall", "evals", "entry"},
}
_MODULE_STRING = re.compile(r"""["']-m["']\s*,\s*["']([\w.]+)["']|-m\s+(memdir[\w.]*)""")


def _package_files() -> list[Path]:
    """Every .py file of the package as Python imports it, through the stage symlinks."""
    found = []
    for folder, dirs, files in os.walk(PACKAGE, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [Path(folder) / f for f in files if f.endswith(".py")]
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "memdir":
        return None
    if len(parts) >= 3 and parts[1] == "stages":
        return parts[2]
    if len(parts) >= 2 and parts[1] in ("prompts", "evals", "entry"):
        return parts[1]
    return "core"


def _imports(path: Path, module: str) -> set[str]:
    source = path.read_text(encoding="utf-8")
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    for match in _MODULE_STRING.finditer(source):
        names.add(match.group(1) or match.group(2))
    return {name for name in names if name.split(".")[0] == "memdir"}


def _crossings() -> list[str]:
    crossings = []
    for path in _package_files():
        module = _module_name(path)
        here = layer_of(module)
        for name in _imports(path, module):
            there = layer_of(name)
            if module == "memdir":  # the public face: the lazy re-export of the public API only
                if name not in ("memdir.entry", "memdir.entry.api") and there != "core":
                    crossings.append(f"{module} -> {name}")
            elif there is not None and here is not None and there not in ALLOWED[here]:
                crossings.append(f"{module} ({here}) -> {name} ({there})")
    return sorted(crossings)


def test_every_import_runs_with_the_flow():
    assert _crossings() == []


def test_the_layer_check_sees_function_level_imports_and_module_strings(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from memdir.stages.recall import api\n"
                     "ARGV = ['python', '-m', 'memdir.entry.worker']\n")
    assert _imports(probe, "memdir.probe") >= {"memdir.stages.recall", "memdir.entry.worker"}
    assert layer_of("memdir.stages.recall.api") == "recall" and layer_of("memdir.entry.worker") == "entry"
    assert layer_of("memdir.store") == "core" and layer_of("json") is None


def test_the_stages_are_reached_only_through_the_package():
    """No module anywhere in the repository imports a stage by its top-level folder name: in a wheel that name
    does not exist, and beside the package it would load a second copy of every module."""
    offenders = []
    for folder in ("memdir", "extractor", "recall", "prompts", "evals", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                              if n.split(".")[0] in ("extractor", "recall", "prompts", "evals")]
    assert offenders == []


def test_every_stage_folder_is_installed_under_the_package():
    for stage, link in {"extractor": "stages/extractor", "recall": "stages/recall",
                        "prompts": "prompts", "evals": "evals"}.items():
        assert (PACKAGE / link).resolve() == (ROOT / stage).resolve(), f"memdir/{link} must lead to {stage}/"
