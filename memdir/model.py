"""The memory model: one typed memory, validated at the boundary where it is written or read."""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memdir import constants as C, inert
from memdir.errors import MemdirError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime


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
    # Which frontmatter form the file is written in (SPEC §2): "current" is Claude Code 2.1.x's
    # (kebab-case slug `name`, type under `metadata:`), "legacy" the older top-level `type:`. A file
    # read from disk keeps its form; None means "not chosen yet": the store picks the form the
    # installed Claude Code writes (see preferred_form).
    form: Literal["current", "legacy"] | None = None

    @field_validator("name", "description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return inert.one_line(re.sub(r"\s+", " ", value))

    @model_validator(mode="after")
    def _slug_name_in_current_form(self) -> Memory:
        # In the current form the name is also the `[[link]]` target, so it is a kebab-case slug.
        if self.form == "current":
            slug = kebab_slug(self.name)
            if slug != self.name:
                self.name = slug
        return self

    def in_form(self, form: str) -> Memory:
        """This memory to be written in `form` (a no-op when its form is already set)."""
        if self.form is not None:
            return self
        return Memory.model_validate({**self.model_dump(), "form": form})

    def frontmatter(self, restamp: bool = False) -> dict[str, object]:
        """The frontmatter keys in writing order: name, description, then the type in this memory's form.

        In the current form `metadata.modified` keeps the stamp the memory already has (so an unchanged
        memory renders to unchanged bytes); `restamp` (or no stamp yet) sets it to now.
        """
        extra = dict(self.extra)
        if self.form == "current":
            # As Claude Code 2.1.328's Write tool leaves a memory file (seen in tests/realclient):
            # metadata {node_type: memory, type, originSessionId (when it knows one), modified}.
            metadata = extra.pop("metadata", None)
            metadata = dict(metadata) if isinstance(metadata, dict) else {}
            previous = metadata.get("modified")
            metadata = {k: v for k, v in metadata.items() if k not in ("node_type", "type", "modified")}
            stamp = previous if previous and not restamp else _utc_stamp()
            return {"name": self.name, "description": self.description,
                    "metadata": {"node_type": "memory", "type": self.type.value, **metadata, "modified": stamp},
                    **extra}
        return {"name": self.name, "description": self.description, "type": self.type.value, **extra}

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


# The time a memory written now is stamped with (`metadata.modified`); None: the clock's. An eval replaying a past
# session sets it to the session's own time (memdir.evals.realdata, runner), whose date its extraction request says.
_STAMPED_AT: ContextVar[datetime | None] = ContextVar("memdir_stamped_at", default=None)


@contextmanager
def stamped_at(moment: datetime) -> Iterator[None]:
    """Memories written within (in this thread) are stamped `moment` (timezone-aware), not the clock's time."""
    token = _STAMPED_AT.set(moment)
    try:
        yield
    finally:
        _STAMPED_AT.reset(token)


def _utc_stamp() -> str:
    """Now (or `stamped_at`'s moment) as Claude Code stamps `metadata.modified`: ISO 8601 UTC with milliseconds and a Z."""
    from datetime import UTC, datetime

    moment = _STAMPED_AT.get() or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def kebab_slug(name: str) -> str:
    """`Terse replies` -> `terse-replies`: the name form Claude Code 2.1.x writes and links with.
    Letters of every script stay (`デプロイ手順`); see memdir/naming.py."""
    from memdir.naming import slug

    return slug(name.replace("'", "").replace("\u2019", ""), "-")  # "don't" -> "dont", not "don-t"


def form_for_version(version: str | None) -> str:
    """The frontmatter form a Claude Code version writes; unknown or unparsable: the newest form."""
    if not version:
        return "current"
    match = re.match(r"\s*(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return "current"
    return "current" if tuple(int(g) for g in match.groups()) >= C.CURRENT_FORM_SINCE else "legacy"


def memory_from_fields(fields: dict[str, object], body: str, source: str) -> Memory:
    """Build a Memory from parsed frontmatter (either form), or raise one line naming the file and field."""
    from pydantic import ValidationError

    from memdir.frontmatter_io import is_nested_form, memory_type

    known = {"name": fields.get("name"), "description": fields.get("description"), "type": memory_type(fields)}
    extra = {k: v for k, v in fields.items() if k not in known}
    form: Literal["current", "legacy"] = "current" if is_nested_form(fields) else "legacy"
    metadata = extra.get("metadata")
    if form == "current" and isinstance(metadata, dict):  # is_nested_form: always a dict here
        rest = {k: v for k, v in metadata.items() if k != "type"}
        extra = {k: v for k, v in extra.items() if k != "metadata"}
        if rest:
            extra = {"metadata": rest, **extra}
    try:
        # The name is kept exactly as found (no re-slugging of a file someone wrote by hand).
        # model_validate: the values are whatever the file held, and pydantic is what checks them.
        memory = Memory.model_validate({**{k: v for k, v in known.items() if v is not None}, "body": body,
                                        "extra": extra})
        memory.form = form
        return memory
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "frontmatter"
        raise MemdirError(f"{source}: frontmatter field '{field}': {err['msg']}") from None
