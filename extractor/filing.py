"""Filing the offline engine's drafts as memories without losing anyone's words.

A draft updates an existing memory only when the user explicitly corrected it (it takes back what
that memory says); a draft an existing memory already states is skipped; everything else becomes a
new file, named by its own distinctive words and never over another memory, however many words it
shares with one (issue 22: distinct facts stay distinct). Every change keeps the previous bytes and
is reported with real names.
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

from memdir import authored, provenance, write_mode
from memdir.errors import FolderBusy, MemdirError
from memdir.frontmatter_io import dump_document
from memdir.fsio import read_text
from memdir.model import Memory, MemoryType, compose_body
from memdir.naming import content_name
from memdir.record import Record, field
from memdir.scan import Header
from memdir.secrets import redact
from memdir.stages.extractor import report
from memdir.stages.extractor.offline_wording import correction_how
from memdir.store import MemoryStore
from memdir.words import STOPWORDS, stem, tokens

if TYPE_CHECKING:
    from memdir.stages.extractor.drafts import Draft, Forget

# --- turning drafts into memories --------------------------------------------------
_GENERIC_WORDS = ("use make run do work want need please always never don don't dont stop keep like prefer instead code "
                  "thing project repo file test tests user anymor ago last next since day week month year today now "
                  "again still").split()
# Compared with stems (`tokens`), so each word's stem is listed too: "make" is "mak", "never" is "never".
_GENERIC = frozenset(_GENERIC_WORDS) | frozenset(map(stem, _GENERIC_WORDS))
_LABELS = re.compile(r"\*\*(?:Why|How to apply):\*\*")
# A clause that says what no longer holds: "don't use npm", "not just a backend engineer", "instead of npm".
_NEGATED = re.compile(r"\b(?:don'?t|do not|never|not|no longer|no more|stop|avoid|instead of|rather than)\b"
                      r"(?P<clause>[^,;.!?]*)", re.I)


def _content_stems(text: str) -> set[str]:
    """What a memory is about: its words minus generic verbs, time words and the Why/How labels.
    A number stays ("billing-api-2" is not "billing-api")."""
    return {t for t in tokens(_LABELS.sub(" ", text)) if t not in _GENERIC and (len(t) > 1 or t.isdigit())}


def taken_back(phrase: str, rule: str) -> bool:
    """A "forget ..." request names this draft: most of its subject words (two at least when few)."""
    wanted = _content_stems(phrase)
    shared = wanted & _content_stems(rule)
    return bool(wanted) and len(shared) >= min(2, len(wanted)) and len(shared) / len(wanted) >= 0.5


# "... in the #deploys-prod channel now": the draft says what it replaces has changed.
_CHANGED = re.compile(r"\b(?:now|no longer|any ?more|these days|from now on|instead)\b", re.I)


def _negated_stems(text: str) -> set[str]:
    return {t for m in _NEGATED.finditer(text) for t in _content_stems(m.group("clause"))}


def _how(draft: Draft) -> str:
    if draft.how:
        return draft.how
    if draft.kind == "correction":
        return correction_how(draft.rule)
    return {
        "confirmation": "repeat this approach in similar situations",
        "preference": "apply this preference by default",
        "decision": "build on this decision; do not reopen it without new information",
        "deadline": "plan and prioritise work around this date",
        "remember": "keep this in mind in future sessions",
        "format": "answer in this format",
        "writing": "write the way the user does in anything written for them",
    }.get(draft.kind, "keep this in mind in future sessions")


def to_memory(draft: Draft, today: date) -> Memory:
    mtype = MemoryType(draft.type)
    description = draft.rule if len(draft.rule) <= 150 else draft.rule[:149].rstrip() + "…"
    if mtype.value in ("feedback", "project"):
        why = draft.why or f"the user said so on {(draft.said_on or today).isoformat()}"
        body = compose_body(draft.rule, why, _how(draft))
    else:
        body = draft.rule + (f"\n\n**Why:** {draft.why}" if draft.why else "")
    return Memory(name=content_name(draft.rule), description=description, type=mtype, body=body)


def _about_text(h) -> str:
    """What an existing memory is about: its name and description (its body is detail, not subject)."""
    return " ".join(filter(None, (h.name, h.description)))


def _about(h) -> set[str]:
    return _content_stems(_about_text(h))


def _candidates(store: MemoryStore, draft: Draft) -> list[tuple[float, Header]]:
    """Existing memories of the draft's type that share its subject words, best first.

    Sharing means at least two subject words (filler such as "never", "always", "please" does not
    count) covering most of the draft and a good part of the memory; a correction needs only one."""
    new = _content_stems(draft.rule)
    if len(new) < 2:
        return []
    found = []
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
        if score >= SAME_SUBJECT:
            found.append((score, h))
    return sorted(found, key=lambda pair: (-pair[0], pair[1].rel_path))


def _corrects(draft: Draft, h) -> bool:
    """The draft takes back what this memory is about: every subject word of what it negates ("don't
    use npm", "not just a backend engineer") is in the memory's name or description.

    Sharing words is not enough: "never deploy auth on Fridays" does not correct "never deploy billing
    on Fridays" (auth is not in it), and "the auth service is owned by team X" is a fact beside "the
    billing service is ...", never a correction of it."""
    negated = _negated_stems(draft.rule)
    return bool(negated) and negated <= _about(h)


SAME_SUBJECT = 0.5
CORRECTION_WEIGHT = 1.5  # a correction naming one subject word of three is clearly about that memory
CHECKED_FOR_SAYING = 3  # the best-matching memories read in full to see whether one already says the draft


class OfflineOutcome(Record):
    """saved: created files; updated: rewritten files; changes: extractor/report.py dicts for all of it;
    notes: why part of what the user said was not read (a language the rules do not cover)."""

    saved: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)  # write mode confirm: files proposed for `memdir review`
    drafts: list[Draft] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the rules could not read, said to the user


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
    return authored.written_by_extractor(store.state_dir, store.root, rel)


def _already_says(store: MemoryStore, rel: str, draft: Draft) -> bool:
    """The memory already states this rule: every subject word of the draft is in it. One word
    missing is another fact ("the auth service ..." beside "the billing service ..."), not a repeat."""
    new = _content_stems(draft.rule)
    try:
        memory = store.load(rel)
    except MemdirError:
        return False
    have = _content_stems(" ".join((memory.name, memory.description, memory.body)))
    return bool(new) and new <= have


def _target(store: MemoryStore, draft: Draft) -> tuple[str | None, bool]:
    """(memory to update, skip): a memory the user explicitly corrected (one of ours, or a person's),
    or one of ours whose every subject word a draft saying "... now" repeats; skip when an existing
    memory already says it. Anything else is a new memory: a distinct fact stays distinct, however
    many words it shares with another."""
    candidates = _candidates(store, draft)
    if any(_already_says(store, h.rel_path, draft) for _, h in candidates[:CHECKED_FOR_SAYING]):
        return None, True
    changed = bool(_CHANGED.search(draft.rule))
    new = _content_stems(draft.rule)
    for _, h in candidates:
        if (draft.correction and _corrects(draft, h)) or (changed and _about(h) <= new and _ours(store, h.rel_path)):
            return h.rel_path, False
    return None, False


def _who(draft: Draft | None, asked: bool) -> str:
    """Who is asking for this write (memdir/write_mode.py): the user, through an explicit "remember ..." or
    "forget ..." in their prompt, or the rules' own judgement."""
    return write_mode.ASKED if asked and (draft is None or draft.kind == "remember") else write_mode.AUTO


def _apply_forgets(store: MemoryStore, forgets: list[Forget], writers: write_mode.Writers, outcome: OfflineOutcome,
                   *, dry_run: bool, asked: bool) -> None:
    """Carry out "forget ..." requests: the one memory each names is deleted (its bytes kept) or proposed for deletion."""
    for forget in forgets:
        writer = writers.store(_who(None, asked))
        if writer is None:
            continue
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
                outcome.deleted.append(target)
                continue
            done = writer.delete(target)
            if done.proposed:
                outcome.changes.append(report.change("proposed", target))
                outcome.proposed.append(target)
            else:
                outcome.changes.append(report.change("deleted", target, done.kept))
                outcome.deleted.append(target)


def apply_drafts(
    store: MemoryStore, drafts: list[Draft], forgets: list[Forget], *, today: date, dry_run: bool = False,
    source: str = "offline extraction", asked: bool = True, session: str | None = None,
) -> OfflineOutcome:
    """File drafts as memories (updating clear near-duplicates) and carry out forget requests.

    Every change keeps the previous bytes (memdir/history.py) and is reported; a dry run reports the
    real file names it would touch, with a diff for each update. The write mode decides each change
    (memdir/write_mode.py): written, proposed for review, or dropped. `asked`: "remember" drafts and
    forgets are the user's explicit requests (dream's drafts are not)."""
    outcome = OfflineOutcome(drafts=drafts)
    writers = write_mode.Writers(store.base, source, team=store.team)
    _apply_forgets(store, forgets, writers, outcome, dry_run=dry_run, asked=asked)
    seen: set[str] = set()
    for draft in drafts:
        writer = writers.store(_who(draft, asked))
        if writer is None:  # write mode manual: only what the user asked for is saved
            continue
        memory = to_memory(draft, today)
        if memory.description in seen:
            continue
        seen.add(memory.description)
        existing, skip = _target(store, draft)
        if skip:
            continue
        if existing:
            memory = memory.model_copy(update={"name": store.load(existing).name})
            rel = existing
        else:  # a new file, never another memory's; its name told apart from any other's
            rel, found, memory = writer.plan_filename(memory)  # a proposing store knows this run's new files
            if found:  # a memory of this name already states this very rule
                continue
        if dry_run:
            diff = None
            if existing:
                diff = report.unified_diff(read_text(store.root / existing), dump_document(memory.frontmatter(), memory.body), existing)
            outcome.changes.append(report.change("updated" if existing else "created", rel, diff=diff))
            (outcome.updated if existing else outcome.saved).append(rel)
            continue
        try:
            said = [{"uuid": draft.said_in, "origin": "user", "kind": draft.said_as}]
            result = writer.save(memory, rel_path=rel, authored=True,
                                 provenance=provenance.entry("extractor:offline", session=session, messages=said))
        except FolderBusy:
            raise  # not this memory's fault: the whole run fails, its cursor stays, and the next run retries
        except MemdirError as exc:  # e.g. the secret guard: skip this one, keep the rest
            outcome.errors.append(str(exc))
            continue
        if result.proposed:
            outcome.changes.append(report.change("proposed", result.rel_path))
            outcome.proposed.append(result.rel_path)
            continue
        if not result.changed:
            continue
        outcome.changes.append(report.change("created" if result.created else "updated", result.rel_path, result.kept))
        (outcome.saved if result.created else outcome.updated).append(result.rel_path)
    return outcome
