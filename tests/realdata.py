"""The one place tests find the shared real data (`../shared/realdata` beside the repo, as CI lays it out).

Checked in order: `<repo>/../shared/realdata`, then $MEMDIR_REALDATA, then /work/shared/realdata (a
developer's worktree sits elsewhere). Tests that need it skip with the reason when none exists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def realdata_dir() -> Path | None:
    candidates = [REPO.parent / "shared" / "realdata"]
    if os.environ.get("MEMDIR_REALDATA"):
        candidates.append(Path(os.environ["MEMDIR_REALDATA"]))
    candidates.append(Path("/work/shared/realdata"))
    return next((c for c in candidates if (c / "README.md").is_file()), None)


def require_realdata() -> Path:
    found = realdata_dir()
    if found is None:
        pytest.skip("shared real data not found at ../shared/realdata (nor $MEMDIR_REALDATA): clone shared/ beside the repo")
    return found


def user_text_containing(needle: str) -> str:
    """The text of the first user-authored block in the real transcripts that contains `needle`
    (a typed prompt, or the reason typed when rejecting a tool call)."""
    root = require_realdata() / "claude-code-log"
    for path in sorted(root.rglob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if needle not in line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary"):
                    continue
                content = (obj.get("message") or {}).get("content")
                blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
                for block in blocks:
                    texts = [block.get("text", "")] if block.get("type") == "text" else []
                    if block.get("type") == "tool_result":
                        inner = block.get("content")
                        texts = [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []]
                    for text in texts:
                        if needle in text:
                            return text
    pytest.fail(f"no user text containing {needle!r} in {root}")
