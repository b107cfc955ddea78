"""What the offline rules draft from user prompts alone: the one helper the offline rule tests share."""

from __future__ import annotations

from memdir.stages.extractor.drafts import Draft
from memdir.stages.extractor.offline import detect
from memdir.transcript import Message


def drafts(*texts: str, cwd: str | None = None) -> list[Draft]:
    """The drafts `detect` makes from these user prompts, said in this order on 2026-03-02 (in `cwd`)."""
    messages = [Message("user", [{"type": "text", "text": t}], uuid=f"m{i}", timestamp="2026-03-02T09:00:00Z", cwd=cwd)
                for i, t in enumerate(texts)]
    return detect(messages)[0]
