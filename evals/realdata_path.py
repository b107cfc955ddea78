"""The one place that finds the shared real data (real Claude Code transcripts and memory folders).

CI clones the repo with `shared/` beside it, so `../shared/realdata` relative to the repo root comes
first; then `$MEMDIR_REALDATA`; then the team machine's `/work/shared/realdata`. Never copied into the
package: it is other people's data, read where it lies.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = "MEMDIR_REALDATA"
TEAM_MACHINE = Path("/work/shared/realdata")


def candidates() -> list[Path]:
    found = [REPO.parent / "shared" / "realdata"]
    if os.environ.get(ENV):
        found.append(Path(os.environ[ENV]).expanduser())
    found.append(TEAM_MACHINE)
    return found


def locate_realdata() -> Path | None:
    """The realdata folder (holding README.md and claude-code-log/), or None when truly absent."""
    for path in candidates():
        if (path / "README.md").is_file() and (path / "claude-code-log").is_dir():
            return path
    return None


def missing_reason() -> str:
    tried = ", ".join(str(p) for p in candidates())
    return f"real data not found (looked in {tried}); set ${ENV} to the shared realdata folder"


def main_sessions(root: Path) -> list[Path]:
    """Every main-session transcript (subagent files left out), in a stable order."""
    log = root / "claude-code-log"
    return sorted(p for p in log.glob("*/*.jsonl") if not p.name.startswith("agent-"))


def sessions2(root: Path) -> list[Path]:
    """The second, hand-annotated set (`sessions2/`, graded from its items.json), in a stable order."""
    return sorted((root / "sessions2").glob("*.jsonl"))
