"""The one locator for the shared data folder (real transcripts, real memory folders, LoCoMo).

CI clones the repository with `shared/` beside it, so `../shared` relative to the repo root comes
first; `MEMDIR_SHARED` names another place (a worktree elsewhere), then `/work/shared`.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_root() -> Path | None:
    candidates = [REPO_ROOT.parent / "shared"]
    if os.environ.get("MEMDIR_SHARED"):
        candidates.append(Path(os.environ["MEMDIR_SHARED"]))
    candidates.append(Path("/work/shared"))
    return next((c for c in candidates if c.is_dir()), None)


def shared_path(*parts: str) -> Path | None:
    """`shared/<parts>` if it exists, else None (callers skip with a clear reason)."""
    root = shared_root()
    if root is None:
        return None
    path = root.joinpath(*parts)
    return path if path.exists() else None
