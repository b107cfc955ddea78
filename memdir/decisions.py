"""Decision records and the Tier 2 journal, `decisions.jsonl` in the decisions folder (SPEC §8).

Which folder that is (the memory folder's `.memdir/decisions/`, or the repository's `.claude/memory/`
in OrchestKit's layout) is decided once, by memdir.paths.decisions_dir; everything here takes the folder.

The journal is append-only: history is never rewritten. Every append happens under the folder's
lock (memdir.fsio.locked) as one `write` of one line, fsynced. A writer killed mid-line leaves a
torn tail; the next writer starts on a fresh line, so the torn bytes become one corrupt line that
readers skip and count instead of a record glued to garbage.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memdir import constants as C, safefs
from memdir.fsio import locked

Kind = Literal["decision", "preference", "pattern", "anti-pattern", "problem", "note"]
Scope = Literal["local", "user", "team", "global"]
Source = Literal["explicit", "prompt", "agent", "tool-output"]
RelationType = Literal["USES", "CHOSE_OVER", "REQUIRES", "ENABLES", "PREFERS"]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def decision_id(kind: str, what: str) -> str:
    """Stable per statement: the same decision captured twice gets the same id."""
    key = " ".join(re.findall(r"[a-z0-9]+", what.casefold()))
    return "dec_" + hashlib.sha1(f"{kind}:{key}".encode()).hexdigest()[:12]


class Decision(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True, extra="forbid")

    id: str = ""
    kind: Kind
    what: str = Field(min_length=1, max_length=C.DECISION_TEXT_MAX_CHARS)
    why: str | None = Field(default=None, max_length=C.DECISION_TEXT_MAX_CHARS)
    entities: list[str] = Field(default_factory=list)
    category: str = "general"
    confidence: float = Field(ge=0.0, le=1.0)
    timestamp: str = Field(default_factory=_now)
    project: str = ""
    scope: Scope = "user"
    source: Source = "prompt"

    @field_validator("what", "why")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return " ".join(value.split()) if value else value

    def model_post_init(self, _context: object) -> None:
        if not self.id:
            object.__setattr__(self, "id", decision_id(self.kind, self.what))

    def to_record(self) -> dict:
        """SPEC §8's line shape (scope and source ride in metadata)."""
        return {
            "id": self.id,
            "type": self.kind,
            "content": {"what": self.what, **({"why": self.why} if self.why else {})},
            "entities": self.entities,
            "metadata": {
                "timestamp": self.timestamp,
                "confidence": round(self.confidence, 2),
                "category": self.category,
                "project": self.project,
                "scope": self.scope,
                "source": self.source,
            },
        }

    @classmethod
    def from_record(cls, record: dict) -> Decision:
        content = record.get("content") or {}
        meta = record.get("metadata") or {}
        # model_validate: a journal line holds whatever was written, and pydantic is what checks it.
        return cls.model_validate({
            "id": record.get("id") or "",
            "kind": record.get("type"),
            "what": content.get("what"),
            "why": content.get("why"),
            "entities": record.get("entities") or [],
            "category": meta.get("category") or "general",
            "confidence": meta.get("confidence"),
            "timestamp": meta.get("timestamp") or _now(),
            "project": meta.get("project") or "",
            "scope": meta.get("scope") or "user",
            "source": meta.get("source") or "prompt",
        })


class Relation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    from_: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    relationType: RelationType

    def as_graph(self) -> dict:
        return {"from": self.from_, "to": self.to, "relationType": self.relationType}


class JournalRead(BaseModel):
    decisions: list[Decision]
    corrupt_lines: int
    path: Path


def journal_path(folder: Path) -> Path:
    return Path(folder) / C.DECISIONS_JOURNAL


def lock_for(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


def append_lines(path: Path, records: list[dict]) -> None:
    """Append JSON lines under the file's lock, each batch one write, fsynced; a torn tail is fenced off. The
    journal's name could be a link to anywhere: never followed (O_NOFOLLOW; without it, native Windows, the name is
    lstat-checked and the file opened must be the one checked: memdir.safefs_pathwrite)."""
    if not records:
        return
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(lock_for(path)):
        if getattr(os, "O_NOFOLLOW", 0):
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        else:
            from memdir import safefs_pathwrite

            fd = safefs_pathwrite.open_file(path.parent, path.name, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        fd = safefs.only_name(fd, str(path))  # hard-linked elsewhere: refused like a symlink, never appended through
        try:
            size = os.fstat(fd).st_size
            if size and _byte_at(fd, size - 1) != b"\n":
                payload = b"\n" + payload  # a writer died mid-line: never glue onto its torn bytes
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)


def _byte_at(fd: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # native Windows: no pread; O_APPEND writes at the end whatever the offset
    return os.read(fd, 1)


def append(folder: Path, decisions: list[Decision]) -> Path:
    path = journal_path(folder)
    append_lines(path, [d.to_record() for d in decisions])
    return path


def read_journal(folder: Path, *, path: Path | None = None) -> JournalRead:
    """Every well-formed record, oldest first; the rest are counted, never raised."""
    path = path or journal_path(folder)
    decisions: list[Decision] = []
    corrupt = 0
    try:
        handle = open(path, "rb")  # noqa: SIM115 - `with handle:` below closes it; only opening may mean "missing"
    except FileNotFoundError:
        return JournalRead(decisions=[], corrupt_lines=0, path=path)
    with handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                decisions.append(Decision.from_record(json.loads(raw)))
            except (ValueError, TypeError, AttributeError, ValidationError):
                corrupt += 1
    return JournalRead(decisions=decisions, corrupt_lines=corrupt, path=path)
