"""The memory model: one typed memory, validated at the boundary where it is written or read."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memdir import constants as C
from memdir.errors import MemdirError


class MemoryType(StrEnum):
    user = "user"  # who the user is: role, goals, expertise
    feedback = "feedback"  # how they want the work done: corrections and confirmations
    project = "project"  # what is going on and why: work, decisions, deadlines
    reference = "reference"  # where things live outside the repo


def parse_type(value: str, source: str = "--type") -> MemoryType:
    try:
        return MemoryType(value.strip().lower())
    except ValueError:
        raise MemdirError(f"{source}: unknown memory type {value!r}; use one of {', '.join(C.MEMORY_TYPES)}") from None


class Memory(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True, extra="forbid")

    name: str = Field(min_length=1, max_length=C.NAME_MAX_CHARS)
    description: str = Field(min_length=1, max_length=C.DESCRIPTION_MAX_CHARS)
    type: MemoryType
    body: str = ""
    extra: dict[str, object] = Field(default_factory=dict)  # other frontmatter keys, kept as found

    @field_validator("name", "description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return re.sub(r"\s+", " ", value)

    def frontmatter(self) -> dict[str, object]:
        return {"name": self.name, "description": self.description, "type": self.type.value, **self.extra}

    @property
    def needs_why_how(self) -> bool:
        return self.type.value in C.NEEDS_WHY_HOW

    def missing_why_how(self) -> list[str]:
        if not self.needs_why_how:
            return []
        return [p for p in (C.WHY_PREFIX, C.HOW_PREFIX) if p not in self.body]


def compose_body(rule: str, why: str | None = None, how: str | None = None) -> str:
    """The rule or fact, then the **Why:** / **How to apply:** lines feedback and project memories carry."""
    parts = [rule.strip()]
    if why is not None or how is not None:
        parts.append("")
        if why is not None:
            parts.append(f"{C.WHY_PREFIX} {why.strip()}")
        if how is not None:
            parts.append(f"{C.HOW_PREFIX} {how.strip()}")
    return "\n".join(parts)


def memory_from_fields(fields: dict[str, object], body: str, source: str) -> Memory:
    """Build a Memory from parsed frontmatter, or raise one line naming the file and the bad field."""
    from pydantic import ValidationError

    known = {k: fields.get(k) for k in ("name", "description", "type")}
    extra = {k: v for k, v in fields.items() if k not in known}
    try:
        return Memory(**{k: v for k, v in known.items() if v is not None}, body=body, extra=extra)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "frontmatter"
        raise MemdirError(f"{source}: frontmatter field '{field}': {err['msg']}") from None
