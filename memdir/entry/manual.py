"""Saving a memory by hand (`memdir remember`): fills in what a person leaves out."""

from __future__ import annotations

from datetime import date

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.model import Memory, compose_body, parse_type
from memdir.naming import default_description, default_name
from memdir.provenance import entry
from memdir.store import MemoryStore, SaveResult


def remember(
    store: MemoryStore,
    text: str,
    *,
    type_: str,
    name: str | None = None,
    description: str | None = None,
    why: str | None = None,
    how: str | None = None,
    allow_secrets: bool = False,
    today: date | None = None,
    by: str = "remember",
) -> SaveResult:
    """Save what a person (`memdir remember`) or an agent (`by`: "mcp", "api") asked to keep; its
    provenance names the writer (memdir/provenance.py)."""
    if not text.strip():
        raise MemdirError("nothing to remember: pass the rule or fact as text")
    mtype = parse_type(type_)
    if mtype.value in C.NEEDS_WHY_HOW:
        # Feedback and project memories always carry both lines; say plainly what the person left out.
        stamp = (today or date.today()).isoformat()
        why = why or f"the user asked to remember this on {stamp}"
        how = how or "apply it whenever the situation above comes up"
    body = compose_body(text, why, how)
    from pydantic import ValidationError

    try:
        memory = Memory(
            name=name or default_name(text),
            description=description or default_description(text),
            type=mtype,
            body=body,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "memory"
        hint = "; shorten it" if "at most" in err["msg"] else ""
        raise MemdirError(f"--{field}: {err['msg'].lower()}{hint}") from None
    return store.save(memory, allow_secrets=allow_secrets, provenance=entry(by))
