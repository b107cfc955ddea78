"""The offline extraction engine: rules over what the user wrote, no model, fully deterministic.

It captures explicit remember/forget requests, corrections and confirmations, preferences,
decisions with their rationale, role statements, deadlines (relative dates made absolute) and
pointers into external systems, and writes the same typed files the LLM engine does. Lower recall
than the model by design; zero cost. Only the user's own prose is read (extractor/prose.py);
questions, requests and task state save nothing. Nothing here decides whether the LLM engine is
called: that depends only on whether the user said anything at all (extractor/run.py).

This module walks a session's messages, sentence by sentence, and keeps what is not said for the moment. The rules
over one sentence are extractor/offline_english.py (English only) and extractor/offline_multilingual.py (every
covered language); what they find is extractor/drafts.py's Draft and Forget. Filing the drafts without losing
anyone's words is extractor/filing.py.
"""

from __future__ import annotations

import re
from datetime import date

from memdir.stages.extractor import (
    offline_dense as dense,
    offline_english as english,
    offline_facts as facts,
    offline_lang as lang,
    offline_multilingual as multilingual,
    offline_user as user,
    prose,
)
from memdir.stages.extractor.dates import absolutize
from memdir.stages.extractor.drafts import Draft, Forget
from memdir.stages.extractor.excerpt import message_date
from memdir.stages.extractor.filing import OfflineOutcome, apply_drafts, taken_back, to_memory  # noqa: F401  (filing: extractor/filing.py)
from memdir.stages.extractor.offline_languages import COVERED, language_note, language_of  # offline.language_note too
from memdir.stages.extractor.offline_multilingual import kept_in_request, one_off, task_at_hand
from memdir.stages.extractor.offline_wording import merged_user_drafts, third_person, without_judgement
from memdir.store import MemoryStore
from memdir.transcript import Message

_RULE_KINDS = ("correction", "preference")
# Facts said for the moment are not kept either: "for this PR, keep all commits minimal", "I hate it when you do that".
_MOMENT_KINDS = ("keep", "goal", "dislike", "environment")
# "Sem voce como coauthor!" on its own: the sentence before says what it is about (the commits asked for).
_BARE_CLAUSE_WORDS = 6
# What the code itself shows is never saved (SPEC §2); explicit requests and corrections still are.
_CODE_STRUCTURE = re.compile(
    r"\b(?:pattern|architecture|codebase|directory|folder|module|class(?:es)?|function|layer)\b"
    r"|\b[\w-]+/[\w./-]+|\.(?:py|ts|js|go|rs|java|rb)\b",
    re.I,
)


def detect(messages: list[Message]) -> tuple[list[Draft], list[Forget]]:
    """Drafts and forget requests found in the user's own prose (tool output, harness text and pasted
    material are not theirs)."""
    drafts: list[Draft] = []
    forgets: list[Forget] = []
    shown: set[str] = set()  # the session's own repositories, as shown so far
    window = dense.Window(dense.shared_scorer()) if dense.wanted() else None  # the meaning signal, when on
    for index, message in enumerate(messages):
        shown |= facts.repositories_shown(message)
        text = message.user_text()
        if not text:
            continue
        anchor = message_date(message) or date.today()
        found: list[Draft] = []
        if message.kind == "rejection":
            rejection = english.rejection_draft(text)
            found = [rejection] if rejection else _message_drafts([" ".join(text.split())], messages, index, anchor,
                                                                  drafts, forgets, english_rules=False)
            if window is not None:
                window.add([text], found, (anchor, message))
        else:
            own = _answers_only(text) if message.kind == "answer" else text
            sentences = prose.statements(prose.own_prose(own))
            found = _message_drafts(sentences, messages, index, anchor, drafts, forgets)
            if window is not None:
                window.add(sentences, found, (anchor, message))
        found = [d for d in found if not (d.kind == "pointer" and facts.only_links_to(shown, d.rule))]
        drafts += merged_user_drafts(_said(found, anchor, message))
    if window is not None:  # scored in one batch; a forget said in the window takes them back as it does the rules'
        for draft, (anchor, message) in window.drafts():
            if not any(taken_back(f.phrase, draft.rule) for f in forgets):
                drafts += _said([draft], anchor, message)
    drafts = [d for d in drafts if not (d.kind in ("decision", "preference", "dense") and _CODE_STRUCTURE.search(d.rule))]
    return drafts, forgets


def _said(found: list[Draft], anchor: date, message: Message) -> list[Draft]:
    """The drafts, stamped with the message that said them; a fact about the user in the third person."""
    for draft in found:
        draft.said_on = anchor
        draft.said_in, draft.said_as = message.uuid, message.kind or "prompt"
        if draft.type == "user":
            draft.rule = third_person(without_judgement(draft.rule))
    return found


def _answers_only(text: str) -> str:
    """An AskUserQuestion answer reads "Q: <the agent's question>\nA: <the user's answer>": only the answers
    are the user's words (the question, even a statement such as "Q: You're the user here.", is not)."""
    answers = re.findall(r"^A: (.*?)(?=^Q: |\Z)", text, flags=re.M | re.S)
    return "\n\n".join(a.strip() for a in answers)


def _message_drafts(sentences: list[str], messages: list[Message], index: int, anchor: date, earlier: list[Draft],
                    forgets: list[Forget], *, english_rules: bool = True) -> list[Draft]:
    """The drafts one message's sentences make. Nothing comes from a question, from a sentence in a language
    the rules do not cover (offline_languages.py), or from a one-off request; a forget request also takes back
    what an earlier message of this window said (`earlier` is edited in place)."""
    found: list[Draft] = []
    previous = ""
    for sentence in sentences:
        said_before, previous = previous, sentence
        sentence, _ = absolutize(sentence, anchor)
        sentence = english.IDIOM.sub("", sentence).strip()
        language = language_of(sentence)
        if len(sentence) < 4 or language not in COVERED:
            continue
        if lang.is_question(sentence):
            found += kept_in_request(sentence)
            continue
        if found and (lang.continues_previous(sentence) or (found[-1].kind == "format" and user.describes_output(sentence))):
            found[-1].rule = f"{found[-1].rule.rstrip(' .')}. {sentence.rstrip(' .!')}"
            continue
        if m := english.FORGET.match(sentence):
            phrase = m.group("what").rstrip(" .!")
            # Said earlier in this window and taken back now: the forget wins, as it was said last.
            earlier[:] = [d for d in earlier if not taken_back(phrase, d.rule)]
            found = [d for d in found if not taken_back(phrase, d.rule)]
            forgets.append(Forget(phrase))
            continue
        if m := english.REMEMBER.match(sentence):
            found += _remembered(m.group("what"), sentence, said_before)
            continue
        made = english.sentence_drafts(sentence, messages, index) if english_rules else []
        # a decision for the moment ("I've decided to skip the refactor today") is no more lasting than a rule
        made = [d for d in made if not (d.kind in _RULE_KINDS and (one_off(sentence) or task_at_hand(sentence))
                                        or d.kind == "decision" and one_off(sentence))]
        made = made or [d for d in multilingual.sentence_drafts(sentence, language)
                         if not (d.kind in _MOMENT_KINDS and lang.is_one_off(sentence)
                                 or d.kind == "dislike" and lang.just_that(sentence))]
        for draft in made:
            if draft.kind == "writing" and said_before and user.points_back(sentence):
                draft.rule = f"{said_before.rstrip(' .!')}. {draft.rule}"  # "that language" is the sentence before
            elif draft.kind == "attribution" and said_before and len(sentence.split()) <= _BARE_CLAUSE_WORDS:
                draft.rule = f"{said_before.rstrip(' .!…。！')}. {draft.rule}"  # "Commit per file... Without co-author!"
        found += made
    return found


def _remembered(what: str, sentence: str, said_before: str) -> list[Draft]:
    """The memory a "remember ..." sentence asks for (`what`: the words after it), or none when it only reminds of
    a step of the task or of what the question before it must weigh."""
    # "don't forget to update the changelog": a step of the task, not a fact to keep. "Remember to ..." is
    # the user asking for a memory in so many words (SPEC: an explicit request is saved), and stays.
    if (what.lower().startswith("to ") and not sentence.lower().lstrip(" ,.").startswith(
            ("remember", "please remember", "also remember", "and remember"))
            and not lang.is_standing(sentence)):
        return []
    # "Does that sound right? Remember I have to pay taxes": a reminder of what the question just asked must
    # weigh, not a request to keep it; a standing word makes it one ("... Remember, always use pnpm"), and so
    # does "please" (SPEC: an explicit request is saved): "Can you summarise it? Please remember my name is Dana".
    # Nor does a fact about the user themself, which holds whatever the question was: "How do I list the
    # files? Remember that I use Windows".
    if (said_before and lang.is_question(said_before) and not lang.is_standing(sentence)
            and not sentence.lower().startswith("please") and not user.states_self(what)):
        return []
    rule, why = english.split_rationale(what.rstrip(" .!"))
    return [Draft(english.classify(rule), rule, why, kind="remember")]


def apply(
    store: MemoryStore, messages: list[Message], *, today: date, dry_run: bool = False,
    source: str = "offline extraction", session: str | None = None,
) -> OfflineOutcome:
    drafts, forgets = detect(messages)
    outcome = apply_drafts(store, drafts, forgets, today=today, dry_run=dry_run, source=source, session=session)
    note = language_note(messages, dense_read=dense.wanted())
    outcome.notes += [note] if note else []
    return outcome


def log_drafts(memory_dir, messages: list[Message], *, today: date, dry_run: bool = False) -> OfflineOutcome:
    """Daily-log mode: the same captures, appended to today's log instead of filed as memories."""
    from memdir.daylog import append, entry_line, log_path
    from memdir.secrets import find_secrets

    drafts, forgets = detect(messages)
    outcome = OfflineOutcome(drafts=drafts)
    lines = [entry_line(d.type, d.rule, d.why) for d in drafts] + [entry_line("forget", f.phrase) for f in forgets]
    clean = []
    for line in lines:
        found = find_secrets(line)
        if found:
            outcome.errors.append(f"refusing to log an entry that looks like it contains {found[0].kind}")
        else:
            clean.append(line)
    if clean:
        path = log_path(memory_dir, today)
        if not dry_run:
            append(memory_dir, today, clean)
        outcome.saved.append(path.relative_to(memory_dir).as_posix())
    return outcome

