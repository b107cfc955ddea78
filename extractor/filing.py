"""Filing the offline engine's drafts as memories without losing anyone's words.

A draft updates an existing memory only when it is clearly about the same thing, and only a memory
memdir's extractor wrote itself (unchanged since) or one the user explicitly corrected; everything
else becomes a new file. Every change keeps the previous bytes and is reported with real names.
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

from memdir import history
from memdir.errors import FolderBusy, MemdirError
from memdir.frontmatter_io import dump_document
from memdir.fsio import read_text
from memdir.model import Memory, MemoryType, compose_body
from memdir.record import Record, field
from memdir.secrets import redact
from memdir.stages.extractor import report
from memdir.store import MemoryStore
from memdir.words import STOPWORDS, tokens

if TYPE_CHECKING:
    from memdir.stages.extractor.offline import Draft, Forget

NAME_WORDS = 7


# --- turning drafts into memories --------------------------------------------------
_GENERIC = frozenset(
    "use make run do work want need please always never don don't dont stop keep like prefer instead code thing "
    "project repo file test tests user anymor ago last next since day week month year today now".split()
)
_LABELS = re.compile(r"\*\*(?:Why|How to apply):\*\*")


def _content_stems(text: str) -> set[str]:
    """What a memory is about: its words minus generic verbs, time words and the Why/How labels."""
    return {t for t in tokens(_LABELS.sub(" ", text)) if t not in _GENERIC and len(t) > 1}


def _title(rule: str) -> str:
    words = re.sub(r"\s+", " ", rule).split()
    title = " ".join(words[:NAME_WORDS]).rstrip(",;:")
    title = title + ("…" if len(words) > NAME_WORDS else "")
    return (title[:1].upper() + title[1:])[:100]


def _how(draft: Draft) -> str:
    if draft.how:
        return draft.how
    return {
        "correction": "follow this in future work instead of the corrected behaviour",
        "confirmation": "repeat this approach in similar situations",
        "preference": "apply this preference by default",
        "decision": "build on this decision; do not reopen it without new information",
        "deadline": "plan and prioritise work around this date",
        "remember": "keep this in mind in future sessions",
    }.get(draft.kind, "keep this in mind in future sessions")


def to_memory(draft: Draft, today: date) -> Memory:
    mtype = MemoryType(draft.type)
    description = draft.rule if len(draft.rule) <= 150 else draft.rule[:149].rstrip() + "…"
    if mtype.value in ("feedback", "project"):
        why = draft.why or f"the user said so on {(draft.said_on or today).isoformat()}"
        body = compose_body(draft.rule, why, _how(draft))
    else:
        body = draft.rule + (f"\n\n**Why:** {draft.why}" if draft.why else "")
    return Memory(name=_title(draft.rule), description=description, type=mtype, body=body)


def _about(h) -> set[str]:
    """What an existing memory is about: its name and description (its body is detail, not subject)."""
    return _content_stems(" ".join(filter(None, (h.name, h.description))))


def _similar(store: MemoryStore, draft: Draft) -> str | None:
    """An existing memory of the same type that this draft is clearly about, to update instead of duplicating.

    Clearly about the same thing means sharing at least two subject words (filler such as "never",
    "always", "please" does not count) covering most of the draft and a good part of the memory."""
    new = _content_stems(draft.rule)
    if len(new) < 2:
        return None
    best, best_score = None, 0.0
    for h in store.scan().headers:
        if h.type != draft.type:
            continue
        old = _about(h)
        shared = new & old
        if len(shared) >= 2:
            score = min(len(shared) / len(new), len(shared) / len(old))
        elif shared and draft.correction:
            # "don't use npm, we moved to pnpm" corrects the memory about npm
            score = min(1.0, CORRECTION_WEIGHT * len(shared) / len(new))
        else:
            continue
        if score > best_score:
            best, best_score = h.rel_path, score
    return best if best_score >= SAME_SUBJECT else None


SAME_SUBJECT = 0.5
CORRECTION_WEIGHT = 1.5  # a correction naming one subject word of three is clearly about that memory


class OfflineOutcome(Record):
    """saved: created files; updated: rewritten files; changes: extractor/report.py dicts for all of it."""

    saved: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    drafts: list[Draft] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)


def _forget_targets(store: MemoryStore, phrase: str) -> list[str]:
    """The memory a "forget ..." request names: most of its subject words, two at least when few.
    Several memories fitting it equally well are all returned: the caller refuses to pick one."""
    wanted = _content_stems(phrase) - STOPWORDS
    if not wanted:
        return []
    best: list[str] = []
    best_score = 0.0
    for h in store.scan().headers:
        shared = wanted & _about(h)
        if len(shared) < min(2, len(wanted)):
            continue
        score = len(shared) / len(wanted)
        if score > best_score:
            best, best_score = [h.rel_path], score
        elif score == best_score:
            best.append(h.rel_path)
    return sorted(best) if best_score >= 0.5 else []


def _ours(store: MemoryStore, rel: str) -> bool:
    """Did memdir's extractor write this file, unchanged since? A person's memory is theirs."""
    return history.written_by_extractor(store.state_dir, store.root, rel)


def _fresh_name(store: MemoryStore, memory: Memory) -> str:
    """A file name for a new memory that never lands on an existing file."""
    rel, exists = store.plan_filename(memory)
    if not exists:
        return rel
    stem = rel.removesuffix(".md")
    n = 2
    while (store.root / f"{stem}_{n}.md").exists():
        n += 1
    return f"{stem}_{n}.md"


ALREADY_SAID = 0.8


def _already_says(store: MemoryStore, rel: str, draft: Draft) -> bool:
    """The memory already states this rule (most of its words are in it): nothing to add or change."""
    new = _content_stems(draft.rule)
    try:
        memory = store.load(rel)
    except MemdirError:
        return False
    have = _content_stems(" ".join((memory.name, memory.description, memory.body)))
    return bool(new) and len(new & have) / len(new) >= ALREADY_SAID


def _target(store: MemoryStore, draft: Draft) -> tuple[str | None, bool]:
    """(memory to update, skip): one of ours about the same thing, or a person's memory that the user
    explicitly corrected; skip when an existing memory already says it."""
    existing = _similar(store, draft)
    if existing is None:
        return None, False
    if _already_says(store, existing, draft):
        return None, True
    if _ours(store, existing) or draft.correction:
        return existing, False
    return None, False


def apply_drafts(
    store: MemoryStore, drafts: list[Draft], forgets: list[Forget], *, today: date, dry_run: bool = False
) -> OfflineOutcome:
    """File drafts as memories (updating clear near-duplicates) and carry out forget requests.

    Every change keeps the previous bytes (memdir/history.py) and is reported; a dry run reports the
    real file names it would touch, with a diff for each update."""
    outcome = OfflineOutcome(drafts=drafts)
    for forget in forgets:
        targets = _forget_targets(store, forget.phrase)
        if len(targets) > 1:  # forgetting an arbitrary one of them could remove the wrong memory
            said = redact(forget.phrase)[:80]  # errors reach logs: never a secret the user said
            outcome.errors.append(f"'forget {said}' fits several memories ({', '.join(targets)}); "
                                  "nothing forgotten: `memdir forget PATH` removes the one meant")
            continue
        if targets:
            target = targets[0]
            if dry_run:
                outcome.changes.append(report.change("deleted", target))
            else:
                done = store.delete(target)
                outcome.changes.append(report.change("deleted", target, done.kept))
            outcome.deleted.append(target)
    seen: set[str] = set()
    for draft in drafts:
        memory = to_memory(draft, today)
        if memory.description in seen:
            continue
        seen.add(memory.description)
        existing, skip = _target(store, draft)
        if skip:
            continue
        if existing:
            memory = memory.model_copy(update={"name": store.load(existing).name})
        rel = existing or _fresh_name(store, memory)
        if dry_run:
            diff = None
            if existing:
                diff = report.unified_diff(read_text(store.root / existing), dump_document(memory.frontmatter(), memory.body), existing)
            outcome.changes.append(report.change("updated" if existing else "created", rel, diff=diff))
            (outcome.updated if existing else outcome.saved).append(rel)
            continue
        try:
            result = store.save(memory, rel_path=rel, authored=True)
        except FolderBusy:
            raise  # not this memory's fault: the whole run fails, its cursor stays, and the next run retries
        except MemdirError as exc:  # e.g. the secret guard: skip this one, keep the rest
            outcome.errors.append(str(exc))
            continue
        if not result.changed:
            continue
        outcome.changes.append(report.change("created" if result.created else "updated", result.rel_path, result.kept))
        (outcome.saved if result.created else outcome.updated).append(result.rel_path)
    return outcome
