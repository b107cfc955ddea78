"""How the offline engine words a memory: one about the user in the third person, without the judgement or the
request of the moment that came with it ("I'm a backend engineer, please fix this" -> "The user is a backend
engineer"), and as one memory when told over consecutive sentences; a correction's **How to apply:** line from what
the user said (where it holds, what replaces what), not filler."""

from __future__ import annotations

import re
from typing import Any


def third_person(text: str) -> str:
    """User memories describe the user: "I'm a backend engineer" -> "The user is a backend engineer"."""
    text = re.sub(r"^(?:I'?m|I am)\b", "The user is", text)
    text = re.sub(r"^I (?:don'?t|do not)\b", lambda m: "The user does not" if " not" in m.group(0) else "The user doesn't",
                  text)
    text = re.sub(r"^I (?:(always|usually|normally|mostly|often|never) )?(\w+)\b",
                  lambda m: "The user " + (m.group(1) + " " if m.group(1) else "") + _third_person_verb(m.group(2)), text)
    text = re.sub(r"^I\b", "The user", text)
    text = re.sub(r"^My\b", "The user's", text)
    for pattern, repl in ((r"\bI'?m\b", "they are"), (r"\bI am\b", "they are"), (r"\bmy\b", "their"),
                          (r"\bme\b", "them"), (r"\bI\b", "they")):
        text = re.sub(pattern, repl, text)
    return text


# Verbs a user fact starts with ("I use direnv ..." -> "The user uses direnv ..."); other words are left as they are.
_VERBS = frozenset("use prefer work like want need live write run install manage keep build code develop speak "
                   "read study teach deploy host test".split())
_IRREGULAR = {"have": "has", "do": "does", "go": "goes"}


def _third_person_verb(word: str) -> str:
    lower = word.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    return word + "s" if lower in _VERBS else word


_JUDGEMENT = re.compile(r"\b(?:terrible|awful|bad|hopeless|useless|stupid|dumb|clueless|suck)\b", re.I)


def without_judgement(text: str) -> str:
    """User memories never carry negative judgements (nor the request of the moment): drop those clauses."""
    parts = re.split(r"(,\s*|\s+and\s+|\s+but\s+)", text)
    clauses, separators = parts[::2], parts[1::2]
    drop = [bool(_JUDGEMENT.search(c) or re.match(r"\s*please\b", c, re.I)) for c in clauses]
    if not any(drop) or all(drop):
        return text
    out = ""
    for i, clause in enumerate(clauses):
        if drop[i]:
            continue
        if out:
            out += separators[i - 1] if i > 0 and not drop[i - 1] else ", "
        out += clause.strip()
    return out


def merged_user_drafts(found: list[Any]) -> list[Any]:
    """Who the user is, told in consecutive sentences of one message ("My name is Lisa. I'm a project
    manager."), is one memory about them, not one per sentence; so is a list of what the work is built on
    ("I'm using Twilio for SMS. I'm using Resend for emails.")."""
    out: list[Any] = []
    for draft in found:
        same = draft.type == "user" == out[-1].type or draft.kind == "stack" == out[-1].kind if out else False
        if same and not (draft.correction or out[-1].correction):
            out[-1].rule = f"{out[-1].rule.rstrip(' .')}. {draft.rule}"
        else:
            out.append(draft)
    return out


# "Don't mock the database in integration tests": the place a correction names is where to apply it.
_SCOPE = re.compile(r"\b(?P<prep>in|on|for|inside|within|across)\s+(?P<where>(?!(?:it|this|that|them|there|here)\b)"
                    r"(?:(?:the|a|an|any|all|every|our|my)\s+)?[\w./#-]+(?:\s+[\w./#-]+){0,3})\s*[.!]?$", re.I)
_REPLACES = re.compile(r"\b(?:use|prefer|go with)\s+(?P<new>[\w.+-]+)(?:\s+instead of|,?\s+not)\s+(?P<old>[\w.+-]+)", re.I)


def correction_how(rule: str) -> str:
    """A correction's **How to apply:** line: what replaces what, or where it holds, said in the user's words; else
    the moment to check for it ("instead of the corrected behaviour" said nothing the rule did not)."""
    if replaced := _REPLACES.search(rule):
        return f"use {replaced.group('new')} wherever {replaced.group('old')} would have been used"
    if scope := _SCOPE.search(rule):
        return f"check any work {scope.group('prep').lower()} {scope.group('where')} against this before handing it back"
    return "check new work against this before handing it back"
