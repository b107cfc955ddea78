"""A consolidation plan, what it does to each file, and the one seam that carries it out.

A plan says *what* (these memories repeat each other: keep this one; this one contradicts that newer
one); `edits()` turns it into *how*: for every file touched, its bytes now and its new memory (or
None: it goes). Edits are built on the memories in hand, one after another, so two steps on one file
compose (a kept memory that also supersedes another) and the dry run shows exactly what `apply_plan`
will write.

`apply_plan(edits, writer)` is the seam: the default writer is the store (history kept, secret guard,
MEMORY.md in step, a file changed since it was read is refused); in confirm mode the integrator passes
a writer that files each edit as a proposal instead (memdir.write_mode), with the same two methods.
"""

from __future__ import annotations

import difflib
import re
from datetime import date
from typing import Protocol

from memdir import body_sections, constants as C, githistory
from memdir.frontmatter_io import dump_document
from memdir.model import Memory, kebab_slug
from memdir.record import Record, field
from memdir.stages.extractor.consolidate_text import why_and_how
from memdir.store import MemoryStore

SUPERSEDED_KEY = "superseded_by"


class Merge(Record):
    """Memories that say the same thing: `keep` stays (its name), `drop` are folded into it and go."""

    keep: str
    drop: list[str]
    reason: str
    text: str | None = None  # the merged claim, when the model wrote one; else the kept memory's own


class Supersede(Record):
    """`older` says the opposite of `newer`: it is marked superseded and linked from `newer`."""

    newer: str
    older: str
    reason: str


class Listed(Record):
    """Memories shown to the user to decide about; nothing is changed."""

    files: list[str]
    note: str


class Plan(Record):
    engine: str
    merges: list[Merge] = field(default_factory=list)
    supersedes: list[Supersede] = field(default_factory=list)
    listed: list[Listed] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file: why it was left out"


class Edit(Record):
    rel: str
    before: str  # the file's text when the plan was made ("" for none)
    memory: Memory | None  # None: the file goes (its bytes kept in history)
    why: str

    @property
    def after(self) -> str:
        return "" if self.memory is None else dump_document(self.memory.frontmatter(), self.memory.body)

    def diff(self) -> str:
        new = f"b/{self.rel}" if self.memory is not None else "/dev/null"
        return "".join(difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True),
                                            f"a/{self.rel}", new))


class Writer(Protocol):
    """What carries out an edit. Each returns one line saying what it did, in the words every command uses."""

    def save(self, memory: Memory, rel_path: str, expected_text: str, why: str) -> str: ...

    def delete(self, rel_path: str, expected_text: str, why: str) -> str: ...


class StoreWriter:
    """Straight into the folder through the store: previous bytes kept, secrets refused, MEMORY.md in step."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def save(self, memory: Memory, rel_path: str, expected_text: str, why: str) -> str:
        from memdir.provenance import entry

        return self.store.save(memory, rel_path=rel_path, expected_text=expected_text,
                               provenance=entry("consolidate")).describe()

    def delete(self, rel_path: str, expected_text: str, why: str) -> str:
        from memdir.errors import MemdirError

        if self.store.text_or_empty(rel_path) != expected_text:
            raise MemdirError(f"{rel_path} changed since it was read; run `memdir consolidate` again")
        githistory.say(self.store.base, {self.store.prefix + rel_path: "superseded"})  # merged into another
        return self.store.delete(rel_path).describe()


def apply_plan(edits: list[Edit], writer: Writer) -> list[str]:
    """Carry out `edits` in order (kept memories are written before the ones merged into them go). A step
    that fails stops the rest, with one line saying which step and what was done before it."""
    from memdir.errors import MemdirError

    done: list[str] = []
    for e in edits:
        try:
            done.append(writer.save(e.memory, e.rel, e.before, e.why) if e.memory is not None
                        else writer.delete(e.rel, e.before, e.why))
        except (OSError, MemdirError) as exc:
            reason = f"{exc.strerror or type(exc).__name__}" if isinstance(exc, OSError) else str(exc)
            before = "; ".join(done) if done else "nothing"
            raise MemdirError(f"consolidate stopped at {e.rel} ({reason}); done before it: {before}") from None
    return done


def link(memory: Memory) -> str:
    return f"[[{kebab_slug(memory.name)}]]"


def edits(plan: Plan, memories: dict[str, Memory], texts: dict[str, str], today: date) -> list[Edit]:
    """Every file the plan changes, in the order to write them: saves first, then the files that go."""
    current = dict(memories)
    why: dict[str, list[str]] = {}
    gone: list[str] = []
    for merge in plan.merges:
        kept = current[merge.keep]
        folded = [current[rel] for rel in merge.drop]
        current[merge.keep] = _merged(kept, folded, merge.text, merge.drop, today)
        why.setdefault(merge.keep, []).append(f"merged {', '.join(merge.drop)} into it: {merge.reason}")
        for rel, old in zip(merge.drop, folded, strict=True):
            gone.append(rel)
            why[rel] = [f"merged into {merge.keep}"]
            _relink(current, memories, old, current[merge.keep], why)
    for step in plan.supersedes:
        older, newer = current[step.older], current[step.newer]
        current[step.older] = _superseded(older, newer, step.reason, today)
        current[step.newer] = _supersedes(newer, older, step.reason)
        why.setdefault(step.older, []).append(f"superseded by {step.newer}: {step.reason}")
        why.setdefault(step.newer, []).append(f"now links the memory it supersedes, {step.older}")
    out = [Edit(rel, texts[rel], current[rel], "; ".join(why[rel]))
           for rel in why if rel not in gone and current[rel] != memories[rel]]
    return out + [Edit(rel, texts[rel], None, "; ".join(why[rel])) for rel in gone]


def _merged(kept: Memory, folded: list[Memory], text: str | None, dropped: list[str], today: date) -> Memory:
    """The kept memory with the union of every Why and How to apply, and a line saying what was folded in."""
    bodies = [kept.body, *(m.body for m in folded)]
    body = text.strip() if text and text.strip() else body_sections.without_sections(kept.body)
    sections = why_and_how(bodies)
    names = ", ".join(f"`{rel}`" for rel in dropped)
    body = f"{body}\n\n(Merged with {names} on {today.isoformat()}; `memdir history` keeps the originals.)"
    for prefix in (C.WHY_PREFIX, C.HOW_PREFIX):
        value = sections[prefix]
        if value:
            body = body_sections.set_section(body, prefix, value)
    return kept.model_copy(update={"body": body, "extra": _fields_folded(kept.extra, [m.extra for m in folded])})


# Frontmatter a merge never carries over from a memory that goes: its own identity and stamps, and its link to what
# superseded it (the kept memory's are the ones that hold).
_OWN_KEYS = frozenset({"node_type", "type", "modified", "originSessionId", SUPERSEDED_KEY})


def _fields_folded(kept: dict[str, object], folded: list[dict[str, object]]) -> dict[str, object]:
    """The kept memory's other frontmatter fields, with those of the memories folded into it that it lacks (a
    user's `tags:`, `owner:`...), lists joined: a merge kept them only in history (hostile19). On a clash of
    values the kept memory's stands; the other is in the merged file's history."""
    out = dict(kept)
    for extra in folded:
        for key, value in extra.items():
            if key in _OWN_KEYS:
                continue
            mine = out.get(key)
            if key == "metadata" and isinstance(value, dict):
                out[key] = _fields_folded(mine if isinstance(mine, dict) else {}, [value])
            elif key not in out:
                out[key] = value
            elif isinstance(mine, list) and isinstance(value, list):
                out[key] = mine + [item for item in value if item not in mine]
    return out


def _relink(current: dict[str, Memory], memories: dict[str, Memory], old: Memory, kept: Memory,
            why: dict[str, list[str]]) -> None:
    """Links to a memory that goes point at the one it was merged into."""
    pattern = re.compile(re.escape(f"[[{kebab_slug(old.name)}]]") + "|" + re.escape(f"[[{old.name}]]"))
    for rel, memory in current.items():
        if memory is kept or rel not in memories or not pattern.search(memory.body):
            continue
        current[rel] = memory.model_copy(update={"body": pattern.sub(link(kept), memory.body)})
        why.setdefault(rel, []).append(f"its link to {old.name!r} now points at {kept.name!r}")


def _superseded(older: Memory, newer: Memory, reason: str, today: date) -> Memory:
    extra = dict(older.extra)
    if older.form == "current":
        metadata = extra.get("metadata")
        extra["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), SUPERSEDED_KEY: kebab_slug(newer.name)}
    else:
        extra[SUPERSEDED_KEY] = kebab_slug(newer.name)
    description = f"{C.SUPERSEDED_PREFIX}{newer.name}: {older.description}"[: C.DESCRIPTION_MAX_CHARS]
    body = f"Superseded by {link(newer)} on {today.isoformat()}: {reason.strip()}\n\n{older.body}".rstrip()
    return older.model_copy(update={"extra": extra, "description": description, "body": body})


def _supersedes(newer: Memory, older: Memory, reason: str) -> Memory:
    line = f"Supersedes {link(older)}: {reason.strip()}"
    if link(older) in newer.body:
        return newer
    return newer.model_copy(update={"body": f"{newer.body.rstrip()}\n\n{line}"})


def is_superseded(memory: Memory) -> bool:
    metadata = memory.extra.get("metadata")
    return SUPERSEDED_KEY in memory.extra or (isinstance(metadata, dict) and SUPERSEDED_KEY in metadata)
