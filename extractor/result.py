"""What one extraction run did (extractor/run.py makes it): the files it saved, changed or proposed, what it cost, and
why it saved nothing; and how a window's chunk results add up to the window's."""

from __future__ import annotations

from memdir.record import Record, field
from memdir.stages.extractor import report


class ExtractResult(Record):
    """status: saved | proposed | nothing | skipped | failed | stashed.

    `saved`: files written (created or updated); `changes`: what happened to each file (extractor/report.py);
    `prompts_seen`: user prompts (the user's own words) read; `chunks`: runs over the window.
    """

    status: str
    engine: str | None = None
    saved: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)  # write mode confirm: files proposed for `memdir review`
    usage: dict = field(default_factory=dict)
    turns: int = 0
    reason: str = ""
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    cursor: str | None = None
    changes: list[dict] = field(default_factory=list)
    prompts_seen: int = 0
    chunks: int = 0
    model: str | None = None
    cost_usd: float = 0.0
    refusals: int = 0

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}

    def report_lines(self) -> list[str]:
        """"created X", "updated X (previous version kept: ...)", "would update X" + diff, ..."""
        return report.lines(self.changes, self.dry_run)

    def add_chunk(self, part: ExtractResult) -> None:
        """Fold one chunk's result into the window's."""
        self.saved += part.saved
        self.deleted += part.deleted
        self.proposed += part.proposed
        self.errors += part.errors
        self.changes += part.changes
        self.turns += part.turns
        self.cost_usd = round(self.cost_usd + part.cost_usd, 6)
        self.refusals += part.refusals
        self.model = part.model or self.model
        for key, value in part.usage.items():
            if isinstance(value, (int, float)):
                self.usage[key] = self.usage.get(key, 0) + value
        self.engine = part.engine or self.engine
        if part.reason and part.reason not in self.reason:
            self.reason = f"{self.reason}; {part.reason}" if self.reason else part.reason
        if part.status == "failed":
            self.status = "failed"
        elif part.status == "saved" and self.status != "failed":
            self.status = "saved"
        elif part.status == "proposed" and self.status not in ("failed", "saved"):
            self.status = "proposed"
        elif self.status == "skipped" and part.status == "nothing":
            self.status = "nothing"
