"""Tier 3: decisions with confidence >= 0.7 become typed memory files, through the store (SPEC §8).

decision / pattern / problem / note -> project; preference -> feedback (how to work) or user (who the
user is); anti-pattern -> feedback, with the failure as its **Why:**. Before writing, the decision is
compared by meaning with the existing memories of those types: a decision restated in other words
updates the memory memdir promoted before (the store keeps the old version), and one a person wrote
by hand is left as it is. With OrchestKit compatibility on, the `## Recent Project Decisions` section
of MEMORY.md gets the entry too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from memdir import compat, constants as C
from memdir.decisions import Decision
from memdir.fsio import atomic_write_text, locked
from memdir.model import Memory, MemoryType, compose_body
from memdir.naming import default_name
from memdir.provenance import entry
from memdir.stages.extractor.capture_lexicon import PATTERNS, TECHNOLOGIES
from memdir.store import MemoryStore

STOPWORDS = frozenset(
    "a an the and or but for to of in on at by with from into onto is are was were be been being it its this that "
    "these those we i you our my your they them us me let lets let's use using used go going went decide decided "
    "chose choose choosing pick picked prefer prefers always never should must will would can could just also all "
    "any new not no do does did don't dont over instead rather than so as because since need needs want wants "
    "please now then here there some every each more most very really".split()
)
_TERMS = {**TECHNOLOGIES, **PATTERNS}
PROMOTED_KEY = "decision_id"  # frontmatter key marking a memory memdir promoted from a decision


@dataclass
class Promotion:
    action: str  # created | updated | proposed (write mode confirm) | skipped
    rel_path: str = ""
    reason: str = ""
    compat: bool = False
    kept: str | None = None  # the previous version the store kept (an update)


def memory_type_for(decision: Decision) -> MemoryType:
    if decision.kind == "anti-pattern":
        return MemoryType.feedback
    if decision.kind == "preference":
        about_user = re.match(r"^I (?:use|install|work|am|have|run|live|mostly|usually|prefer to work)\b", decision.what)
        directive = re.search(r"\b(?:you|don'?t|do not|always|never|please)\b", decision.what, re.I)
        return MemoryType.user if about_user and not directive else MemoryType.feedback
    return MemoryType.project


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def meaning_tokens(text: str) -> set[str]:
    """Content words, with every known technology/pattern spelling mapped to one canonical token."""
    lowered = text.lower()
    tokens: set[str] = set()
    for term in sorted(_TERMS, key=len, reverse=True):
        pattern = rf"(?<![\w-]){re.escape(term)}(?![\w-])"
        if re.search(pattern, lowered):
            tokens.add("@" + _TERMS[term].lower())
            lowered = re.sub(pattern, " ", lowered)
    tokens.update(_stem(w) for w in re.findall(r"[a-z0-9][a-z0-9+#.-]*[a-z0-9+#]|[a-z0-9]", lowered)
                  if w not in STOPWORDS and len(w) > 1)
    return tokens


def similarity(a: str, b: str) -> float:
    """Dice overlap of meaning tokens, plus a bonus when both name the same technology or pattern."""
    ta, tb = meaning_tokens(a), meaning_tokens(b)
    if not ta or not tb:
        return 0.0
    score = 2 * len(ta & tb) / (len(ta) + len(tb))
    if {t for t in ta if t.startswith("@")} & {t for t in tb if t.startswith("@")}:
        score += 0.15
    return min(1.0, score)


def _decision_text(decision: Decision) -> str:
    return f"{decision.what} {decision.why or ''}"


def find_same(store: MemoryStore, decision: Decision, mtype: MemoryType) -> tuple[str, bool] | None:
    """(rel_path, promoted_by_memdir) of the existing memory that says the same thing, if any."""
    wanted = {mtype.value} | ({"feedback", "user"} if decision.kind == "preference" else set())
    best: tuple[float, str, bool] | None = None
    for header in store.scan().headers:
        if header.type not in wanted or header.problem:
            continue
        try:
            memory = store.load(header.rel_path)
        except Exception:  # noqa: BLE001 - an unreadable file is doctor's business, not a reason to stop
            continue
        if memory.extra.get(PROMOTED_KEY) == decision.id:
            return header.rel_path, True
        rule = memory.body.split(C.WHY_PREFIX)[0]
        score = similarity(_decision_text(decision), f"{memory.name}. {memory.description}. {rule}")
        if score >= C.DEDUP_MIN_SIMILARITY and (best is None or score > best[0]):
            best = (score, header.rel_path, PROMOTED_KEY in memory.extra)
    return (best[1], best[2]) if best else None


def memory_for(decision: Decision, mtype: MemoryType, today: date) -> Memory:
    stamp = today.isoformat()
    if decision.kind == "anti-pattern":
        rule = f"Avoid: {decision.what}"
        why = decision.why or f"it failed before ({decision.what}; recorded {stamp})"
        how = "Do not repeat this approach; if it seems necessary, raise the earlier failure with the user first."
    elif decision.kind == "preference":
        rule = decision.what
        why = decision.why or f"the user said so in their own words on {stamp}"
        how = "Apply it by default in this project unless the user says otherwise."
    else:
        rule = decision.what
        why = decision.why or f"decided on {stamp}; no reason was given"
        how = f"Follow this in {decision.category} work unless the user revisits the decision."
    if decision.entities:
        rule += "\n\nConcerns: " + ", ".join(f"`{e}`" for e in decision.entities)
    body = compose_body(rule, why, how) if mtype.value in C.NEEDS_WHY_HOW else rule
    description = " ".join(decision.what.split())
    if len(description) > C.INDEX_LINE_TARGET:
        description = description[: C.INDEX_LINE_TARGET - 1].rstrip() + "…"
    extra = {PROMOTED_KEY: decision.id, "confidence": round(decision.confidence, 2)}
    return Memory(name=default_name(decision.what), description=description, type=mtype, body=body, extra=extra)


def promote(store: MemoryStore, decision: Decision, *, compat_section: bool = False,
            today: date | None = None) -> Promotion:
    if decision.confidence < C.PROMOTE_MIN_CONFIDENCE:
        return Promotion("skipped", reason=f"confidence {decision.confidence:.2f} < {C.PROMOTE_MIN_CONFIDENCE}")
    today = today or date.today()
    mtype = memory_type_for(decision)
    memory = memory_for(decision, mtype, today)
    same = find_same(store, decision, mtype)
    if same and not same[1]:
        result = Promotion("skipped", same[0], reason=f"already said by {same[0]} (written by hand; left as is)")
    elif same:
        existing = store.load(same[0])
        updated = memory.model_copy(update={"name": existing.name, "type": existing.type})
        if existing.body == updated.body and existing.description == updated.description:
            result = Promotion("skipped", same[0], reason=f"{same[0]} already says this")
        else:
            saved = store.save(updated, rel_path=same[0], provenance=entry(f"decisions:{decision.source}"))
            result = Promotion("proposed" if saved.proposed else "updated", saved.rel_path, kept=saved.kept)
    else:
        saved = store.save(memory, provenance=entry(f"decisions:{decision.source}"))
        result = Promotion("proposed" if saved.proposed else "created" if saved.created else "updated", saved.rel_path)
    # MEMORY.md's OrchestKit section is memdir's own index text: written with a memory, never proposed alone.
    if compat_section and decision.kind != "problem" and result.action in ("created", "updated"):
        result.compat = add_compat_entry(store, decision)
    return result


def add_compat_entry(store: MemoryStore, decision: Decision) -> bool:
    kind = decision.kind if decision.kind in compat.LABELS else "note"
    with locked(store.lock_path):
        text, changed = compat.add_entry(store.index(), kind, decision.what, decision.why, decision.entities)
        if changed:
            atomic_write_text(store.index_path, text)
    return changed
