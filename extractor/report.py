"""What an extraction did or would do, in the words every command uses.

A change is a dict `{"action": "created" | "updated" | "deleted", "file": rel, "kept": rel | None,
"diff": str | None}`: plain data, so the CLI, the hook log, batch and evals all print the same thing.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from memdir import constants as C, history, safefs

_WOULD = {"created": "would create", "updated": "would update", "deleted": "would delete"}
_PROPOSED = "proposed {file} for review (write mode confirm; not written): `memdir review`"


def change(action: str, file: str, kept: str | None = None, diff: str | None = None) -> dict:
    return {"action": action, "file": file, "kept": kept, "diff": diff}


def describe(item: dict, dry_run: bool) -> str:
    action, file, kept = item["action"], item["file"], item.get("kept")
    if dry_run:
        return f"{_WOULD.get(action, action)} {file}" + (" (the current version would be kept)" if action != "created" else "")
    if action == "updated":
        return f"updated {file} (previous version kept: {kept})"
    if action == "proposed":
        return _PROPOSED.format(file=file)
    if action == "deleted":
        return f"deleted {file} (kept: {kept})"
    return f"{action} {file}"


def lines(changes: list[dict], dry_run: bool) -> list[str]:
    """One line per change; a dry-run update is followed by its diff."""
    out = []
    for item in changes:
        out.append(describe(item, dry_run))
        if dry_run and item.get("diff"):
            out.extend("    " + line for line in item["diff"].rstrip("\n").splitlines())
    return out


def unified_diff(old: str, new: str, rel: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"))


def from_toolbox(before: frozenset[str] | set[str], written: list[str], deleted: list[str], state_dir: Path, root: Path,
                 dry_run: bool, drafts: dict[str, str] | None = None) -> list[dict]:
    """Changes made by the LLM engine's tools, told apart by what existed before the run. In a dry run
    `drafts` (the text each write would have stored) gives every update its diff."""
    out = []
    for rel in dict.fromkeys(written):
        if rel in before:
            found = history.versions(state_dir, rel)
            kept = None if dry_run or not found else history.display(root, found[0].path)
            diff = None
            if dry_run and drafts and rel in drafts:
                try:
                    diff = unified_diff(safefs.read_text(root, rel), drafts[rel], rel)
                except OSError:
                    diff = None
            out.append(change("updated", rel, kept, diff))
        else:
            out.append(change("created", rel))
    for rel in dict.fromkeys(deleted):
        found = history.versions(state_dir, rel)
        out.append(change("deleted", rel, None if dry_run or not found else history.display(root, found[0].path)))
    return out


def summary(changes: list[dict], dry_run: bool) -> str:
    """One line for hook.log: "created a.md; updated b.md (previous version kept: ...)"."""
    return "; ".join(describe(item, dry_run) for item in changes)


def index_change(memory_dir: Path, before: bytes | None, dry_run: bool) -> list[dict]:
    """MEMORY.md as a change when a run altered it: the kept copy is the version holding `before`."""
    if dry_run or not before:
        return []
    try:
        if safefs.read_bytes(memory_dir, C.INDEX_NAME, C.INDEX_READ_MAX_BYTES) == before:
            return []
    except OSError:
        pass
    state_dir = memory_dir / C.STATE_DIRNAME
    kept = next((v.path for v in history.versions(state_dir, C.INDEX_NAME) if v.read() == before), None)
    return [change("updated", C.INDEX_NAME, history.display(memory_dir, kept))]


def read_index(memory_dir: Path) -> bytes | None:
    try:
        return safefs.read_bytes(memory_dir, C.INDEX_NAME, C.INDEX_READ_MAX_BYTES)
    except OSError:
        return None
