"""Offline decision capture: decisions, preferences, problems and their reasons in the user's own words.

Signals follow SPEC §8 (decision: "let's use X", "chose Y over Z", "going with"; preference: "I prefer",
"always use"; problem: "the issue is", "blocked by"; rationale: "because", "since") and the phrasings
people use in practice ("use pnpm" typed as the reason for rejecting a tool call, "don't assume ...").
Confidence follows SPEC §8: an explicit statement scores ~0.7-0.8, a stated reason adds 0.1, hedges
("maybe", "might") and questions take it away; patterns inferred from tool output stay at 0.4-0.6.

Only the user's words are given to these rules: the caller (the transcript reader, the prompt hook)
decides what those are. Text that is clearly not prose (code fences, quoted lines, logs) is dropped here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memdir.decisions import Decision, Kind, Relation, RelationType, Scope, Source
from memdir.stages.extractor.capture_lexicon import CATEGORIES, NOT_ENTITIES, PATTERNS, TECHNOLOGIES

# (kind, base confidence, pattern): the first that matches a sentence decides its kind.
_SIGNAL_ROWS: tuple[tuple[Kind, float, str], ...] = (
    ("anti-pattern", 0.75, r"\b(?:never again|was a (?:big )?mistake|caused (?:an? )?(?:outage|incident|regression|"
                           r"data loss|timeouts?)|(?:didn'?t|did not|doesn'?t|does not|won'?t) (?:work|scale)\b.*"
                           r"\b(?:because|since|so)\b|burned us|bit us|backfired)"),
    ("decision", 0.8, r"\b(?:we|i|the team)(?:'ve| have)? (?:decided|agreed) (?:to|that|on)\b"),
    ("decision", 0.8, r"\b(?:chose|choose|picked|selected|opted for|went with)\b.+\b(?:over|instead of|rather than)\b"),
    ("decision", 0.75, r"\blet'?s (?:just )?(?:use|go with|switch to|stick with|move to|adopt|keep using|standardi[sz]e on)\b"),
    ("decision", 0.75, r"\b(?:we'?re|we are|i'?m|i am)? ?going (?:with|to go with|to use|to switch to)\b"),
    ("decision", 0.75, r"\buse\s+\S+(?:\s+\S+)?\s+(?:instead of|rather than|over|not)\s+\S+"),
    ("decision", 0.7, r"\b(?:we|i)(?:'ll| will| should| must)? (?:switch(?:ed)?|migrat(?:e|ed)|mov(?:e|ed)) (?:from \S+ )?to\b"),
    ("decision", 0.7, r"\bwe(?:'ll| will)? (?:use|standardi[sz]e on)\b"),
    ("preference", 0.8, r"\b(?:always|never)\s+(?:use|run|write|add|put|keep|commit|push|call|import|mock|test|"
                        r"validate|check|ask|format|lint|prefer)\b"),
    ("preference", 0.75, r"\bi (?:really |strongly |much )?prefer\b|\bi'?d (?:rather|prefer)\b|\bmy preference is\b"),
    ("preference", 0.75, r"\b(?:please )?(?:don'?t|do not) (?:ever )?(?:use|add|write|run|make|assume|mock|commit|"
                         r"push|create|touch|change|install|rely on)\b"),
    ("preference", 0.7, r"\bi (?:don'?t|do not) want (?:to|you to|it to|any)\b|\bi want (?:you to |it to )?(?:always|"
                        r"keep|use)\b"),
    # "I'd love that test to be ..." states a wish about how; "I'd like to add ..." is a request, not a rule.
    ("preference", 0.7, r"\bi'?d (?:actually |really )?(?:love|like) (?:that|it|this|the)\b"),
    ("preference", 0.7, r"\b(?:from now on|going forward|in future|in the future)\b"),
    # A short imperative ("use pnpm", typed as a rejection reason); a long one is a one-off task instruction.
    ("preference", 0.7, r"^(?:please )?(?:use|prefer|stick to|stick with)\s+`?[\w.@/-]+`?(?:[\s,]+\S+){0,4}\s*[.!]?$"),
    ("decision", 0.7, r"\b(?:we|i) (?:could|should|might|can) (?:go with|use|try|switch to|adopt)\b"),
    ("problem", 0.6, r"\bthe (?:real |main |root )?(?:issue|problem|bug|cause) (?:is|was)\b|\bblocked (?:by|on)\b|"
                     r"\b(?:keeps?|kept) (?:failing|crashing|timing out|breaking)\b"),
)
SIGNALS = tuple((kind, conf, re.compile(rx, re.I)) for kind, conf, rx in _SIGNAL_ROWS)
RATIONALE = re.compile(r"\s*(?:,\s*)?\b(?:because|since|so that|due to|given that|as otherwise)\b\s*", re.I)
LEADING_BECAUSE = re.compile(r"^(?:because|since)\s+(?P<why>[^,]+),\s*(?P<what>.+)$", re.I)
REASON_SENTENCE = re.compile(r"^(?:because|since|that'?s because|the reason (?:is|being)|reason:)\s*", re.I)
HEDGES = re.compile(r"\b(?:maybe|might|perhaps|not sure|what if|wondering|probably|could we|would it|i guess|"
                    r"considering|consider|thinking about|for now)\b", re.I)
QUESTION_START = re.compile(r"^(?:should|could|would|can|do|does|did|is|are|was|were|what|why|how|which|where|when|"
                            r"who|shall|will)\b", re.I)
FILLER = re.compile(r"^(?:(?:ok(?:ay)?|so|yeah|yes|well|alright|hey claude|hi claude|claude|hmm|right|actually|"
                    r"also|and|but|please|now|great|cool|thanks|perfect|good|nice)\b[,!.]?\s*)+", re.I)
NOT_PROSE = re.compile(r"^\s*(?:>|\$ |#|at |File \"|Traceback|[A-Za-z]+Error\b|\d+\s*\|)|https?://\S+$")
CONNECTOR = re.compile(r"\s*,?\s+(?:over|instead of|rather than|not|and not|in place of)\s+", re.I)
VERB_RELATIONS: tuple[tuple[RelationType, re.Pattern], ...] = (
    ("REQUIRES", re.compile(r"(?P<a>[\w.@/+-]+)\s+(?:requires|needs|depends on)\s+(?P<b>[\w.@/+-]+)", re.I)),
    ("ENABLES", re.compile(r"(?P<a>[\w.@/+-]+)\s+(?:enables|lets us|allows|unlocks)\s+(?P<b>[\w.@/+-]+)", re.I)),
    ("USES", re.compile(r"(?P<a>[\w.@/+-]+)\s+uses\s+(?P<b>[\w.@/+-]+)", re.I)),
    ("PREFERS", re.compile(r"(?P<a>[\w.@/+-]+)\s+prefers\s+(?P<b>[\w.@/+-]+)", re.I)),
)
_TERMS = {**TECHNOLOGIES, **PATTERNS}
_TERM_RE = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(t) for t in sorted(_TERMS, key=len, reverse=True))
                      + r")(?![\w-])", re.I)
_BACKTICK = re.compile(r"`([^`\n]{1,60})`")
_PROPER = re.compile(r"(?<=[a-z,;:] )([A-Z][a-z]+[A-Z][\w]*|[A-Z]{2,}[a-z]*|[A-Z][a-z]{2,})\b")
MIN_CHARS, MAX_CHARS = 8, 400
PASTE_CHARS = 1200


@dataclass
class Captured:
    decision: Decision
    relations: list[Relation] = field(default_factory=list)
    entity_types: dict[str, str] = field(default_factory=dict)


def _prose(text: str) -> str:
    """The user's prose: code fences, harness tags, quoted/log lines and IDE selections dropped. (A
    rejection reason arrives already taken out of its tool_result by the transcript reader: text that
    merely quotes Claude Code's rejection wording is not one, and nothing is cut at that wording.)"""
    text = re.sub(r"```.*?(?:```|$)", " ", text, flags=re.S)
    text = re.sub(r"<(ide_selection|ide_opened_file|system-reminder|command-[\w-]+|local-command-stdout|bash-\w+)>.*?"
                  r"(?:</\1>|$)", " ", text, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not NOT_PROSE.match(line))


def sentences(text: str) -> list[str]:
    prose = _prose(text).strip()
    if len(prose) > PASTE_CHARS:  # a long message is mostly pasted material: the user's own words lead it
        prose = re.split(r"\n\s*\n", prose, maxsplit=1)[0]
    parts = re.split(r"(?<=[.!?])\s+|\n+", prose)
    return [" ".join(p.split()) for p in parts if p and p.strip()]


def _entities(text: str) -> dict[str, str]:
    """Canonical entity -> entityType, in order of appearance."""
    found: dict[str, str] = {}
    for match in _TERM_RE.finditer(text):
        key = match.group(1).lower()
        name = _TERMS[key]
        if key == "act" and "`act`" not in text and not re.search(r"\bwith act\b|\bact\b to\b", text, re.I):
            continue  # the verb, not nektos/act
        if key in ("rest", "node", "go", "ci", "cache") and not re.search(rf"\b{re.escape(match.group(1))}\b(?! (?:of|is|are))",
                                                                          text):
            continue
        found.setdefault(name, "Pattern" if key in PATTERNS else "Technology")
    for match in _BACKTICK.finditer(text):
        token = match.group(1).strip()
        canon = _TERMS.get(token.lower(), token)
        found.setdefault(canon, "Component" if re.search(r"[/._()]", token) else "Technology")
    for match in _PROPER.finditer(text):
        word = match.group(1)
        if word not in NOT_ENTITIES and word.lower() not in _TERMS:
            found.setdefault(word, "Technology")
    return found


def _resolve(phrase: str, entities: dict[str, str]) -> str:
    """The entity a phrase names (longest match), or the phrase itself."""
    inner = _entities(phrase)
    return next(iter(inner), phrase.strip(" .,`'\"")) if inner else phrase.strip(" .,`'\"")


def _entity_spans(text: str, entities: dict[str, str]) -> list[tuple[int, int, str]]:
    spans = []
    for name in entities:
        keys = [k for k, v in _TERMS.items() if v == name] + [name]
        for key in keys:
            for m in re.finditer(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text, re.I):
                spans.append((m.start(), m.end(), name))
    return sorted(set(spans))


def _relations(kind: Kind, text: str, entities: dict[str, str], project: str, signal_at: int) -> list[Relation]:
    rels: list[Relation] = []
    spans = _entity_spans(text, entities)
    for match in CONNECTOR.finditer(text):
        before = [name for s, e, name in spans if e <= match.start()]
        after = [name for s, e, name in spans if s >= match.end()]
        if before and after and before[-1] != after[0]:
            rels.append(Relation.model_validate({"from": before[-1], "to": after[0], "relationType": "CHOSE_OVER"}))
    for rtype, rx in VERB_RELATIONS:
        for match in rx.finditer(text):
            a, b = _resolve(match.group("a"), entities), _resolve(match.group("b"), entities)
            if a in entities or b in entities:
                rels.append(Relation.model_validate({"from": a, "to": b, "relationType": rtype}))
    rejected = {r.to for r in rels if r.relationType == "CHOSE_OVER"}
    named_after = list(dict.fromkeys(name for s, e, name in spans if s >= signal_at and name not in rejected))
    if kind in ("decision", "pattern") and project:
        for name in named_after:
            rels.append(Relation.model_validate({"from": project, "to": name, "relationType": "USES"}))
    if kind == "preference":
        for name in named_after:
            rels.append(Relation.model_validate({"from": "user", "to": name, "relationType": "PREFERS"}))
    unique = {(r.from_, r.to, r.relationType): r for r in rels}
    return list(unique.values())


def _category(entities: dict[str, str], text: str) -> str:
    lowered = text.lower()
    for name, keys in CATEGORIES:
        if any(k in entities for k in keys) or any(re.search(rf"\b{re.escape(k)}\b", lowered) for k in keys if k.islower()):
            return name
    return "general"


def _clean(text: str) -> str:
    text = FILLER.sub("", text.strip()).strip(" ,;:-")
    text = text.rstrip(".!")
    return text[:1].upper() + text[1:] if text else text


def _classify(sentence: str) -> tuple[Kind, float, int] | None:
    """(kind, base confidence, where the signal starts in `sentence`) for the first signal that matches."""
    stripped = FILLER.sub("", sentence)
    offset = len(sentence) - len(stripped)
    for kind, conf, rx in SIGNALS:
        match = rx.search(stripped)
        if match:
            return kind, conf, offset + match.start()
    return None


def capture_text(text: str, *, source: Source = "prompt", project: str = "", scope: Scope = "user") -> list[Captured]:
    """Every decision-like statement in `text` (the user's words), scored."""
    out: list[Captured] = []
    for sentence in sentences(text):
        reason = REASON_SENTENCE.match(sentence)
        if reason and out and not out[-1].decision.why:  # "Because X." right after the decision explains it
            prev = out[-1]
            because = _clean(sentence[reason.end():])
            if because:
                prev.decision = prev.decision.model_copy(update={"why": because, "confidence": min(0.95, prev.decision.confidence + 0.1)})
            continue
        if not (MIN_CHARS <= len(sentence) <= MAX_CHARS):
            continue
        stripped = FILLER.sub("", sentence)
        if sentence.endswith("?") or QUESTION_START.match(stripped):
            continue  # a question asks; it decides nothing
        found = _classify(sentence)
        if found is None:
            continue
        kind, confidence, signal_at = found
        what, why = stripped, None
        lead = LEADING_BECAUSE.match(stripped)
        if lead:
            what, why = lead.group("what"), lead.group("why")
        else:
            parts = RATIONALE.split(stripped, maxsplit=1)
            if len(parts) == 2 and parts[0].strip() and parts[1].strip():
                what, why = parts
        what, why = _clean(what), (_clean(why) or None) if why else None
        if len(what) < MIN_CHARS:
            continue
        if why:
            confidence += 0.1
        if HEDGES.search(sentence):
            confidence -= 0.25
        entities = _entities(sentence)
        if entities:
            confidence += 0.05
        if source == "tool-output":
            confidence = 0.4 + (confidence - 0.4) * 0.4  # inferred, never stated: 0.4-0.6
        elif source == "explicit":
            confidence = max(confidence, 0.85)
        confidence = round(max(0.1, min(0.95, confidence)), 2)
        decision = Decision(kind=kind, what=what[:500], why=why[:500] if why else None, entities=list(entities),
                            category=_category(entities, sentence), confidence=confidence, project=project,
                            scope=scope, source=source)
        out.append(Captured(decision, _relations(kind, sentence, entities, project, signal_at), entities))
    return out


def capture_explicit(text: str, *, outcome: str | None = None, scope: Scope = "user", project: str = "") -> Captured:
    """`memdir remember "..." --success|--failed`: always one record, high confidence.

    --failed records an anti-pattern (what went wrong is the lesson); --success a proven pattern.
    """
    found = capture_text(text, source="explicit", project=project, scope=scope)
    base = found[0] if found else None
    flat = " ".join(_prose(text).split()) or text.strip()
    if base is None:
        entities = _entities(flat)
        parts = RATIONALE.split(flat, maxsplit=1)
        what, why = (parts[0], parts[1]) if len(parts) == 2 and parts[0].strip() and parts[1].strip() else (flat, None)
        decision = Decision(kind="decision", what=_clean(what) or flat, why=_clean(why) if why else None,
                            entities=list(entities), category=_category(entities, flat), confidence=0.85,
                            project=project, scope=scope, source="explicit")
        base = Captured(decision, _relations("decision", flat, entities, project, 0), entities)
    by_outcome: dict[str, Kind] = {"success": "pattern", "failed": "anti-pattern"}
    kind = by_outcome.get(outcome or "", base.decision.kind)
    confidence = 0.9 if outcome else base.decision.confidence
    base.decision = base.decision.model_copy(update={"kind": kind, "confidence": confidence, "id": ""})
    base.decision = Decision.model_validate(base.decision.model_dump())  # a fresh id for the new kind
    base.relations = _relations(kind, flat, base.entity_types, project, 0)
    return base
