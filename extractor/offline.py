"""The offline extraction engine: rules over what the user wrote, no model, fully deterministic.

It captures explicit remember/forget requests, corrections and confirmations, preferences,
decisions with their rationale, role statements, deadlines (relative dates made absolute) and
pointers into external systems, and writes the same typed files the LLM engine does. Lower recall
than the model by design; zero cost. Only the user's own prose is read (extractor/prose.py);
questions, requests and task state save nothing. Nothing here decides whether the LLM engine is
called: that depends only on whether the user said anything at all (extractor/run.py). Filing the drafts
without losing anyone's words is extractor/filing.py.
"""

from __future__ import annotations

import re
from datetime import date

from memdir.record import Record, field
from memdir.stages.extractor import prose
from memdir.stages.extractor.dates import DATE_PATTERN, absolutize
from memdir.stages.extractor.excerpt import message_date
from memdir.stages.extractor.filing import OfflineOutcome, apply_drafts, to_memory  # noqa: F401  (filing: extractor/filing.py)
from memdir.store import MemoryStore
from memdir.transcript import Message


class Draft(Record):
    """A memory the rules want to save; `correction` drafts may supersede an older memory."""

    type: str
    rule: str
    why: str | None = None
    how: str | None = None
    kind: str = field(kw_only=True)  # which rule matched: "correction", "preference", "remember"...
    correction: bool = False
    said_on: date | None = None


class Forget(Record):
    phrase: str


_ACK = re.compile(r"^(?:understood|got it|sure|noted|ok(?:ay)?|done|great|thanks|thank you|will do|of course)\b", re.I)
_REMEMBER = re.compile(
    r"^(?:please\s+|also\s+|and\s+)*(?:remember|note|keep in mind|don'?t forget|make a note)\b[\s,:]*(?:that\s+)?(?P<what>.+)",
    re.I,
)
_FORGET = re.compile(
    r"^(?:please\s+|actually,?\s+|oh,?\s+)*(?:forget|stop remembering|don'?t remember|no need to remember)\b"
    r"[\s,:]*(?:that\s+|about\s+)?(?P<what>.+)",
    re.I,
)
_ROLE = re.compile(
    r"\b(?:i'?m|i am|i work as|my role is|my job is)\s+(?:(?:a|an|the|our|their)\s+)?(?P<role>[\w\s/-]{2,60}?"
    r"(?:engineer|developer|dev|scientist|designer|manager|lead|student|founder|architect|analyst|researcher|"
    r"sre|devops|admin|administrator|pm|cto|ceo|consultant|maintainer|intern|owner|writer|teacher)s?)\b",
    re.I,
)
_NEW_TO = re.compile(r"\bi'?m (?:new to|not familiar with|unfamiliar with|an expert in|experienced with)\s+(?P<topic>[^.,;!?]+)", re.I)
_CORRECTION = re.compile(
    r"^(?:no[,.!]?\s+|nope[,.!]?\s+|actually[,]?\s+|please\s+)*(?:don'?t|do not|never|stop|quit|avoid|no more)\b.+", re.I
)
_INSTEAD = re.compile(r"\b(?:use|prefer|go with)\s+(?P<new>[\w.+-]+)\s+instead of\s+(?P<old>[\w.+-]+)", re.I)
_CONFIRM = re.compile(
    r"\b(?:exactly (?:like that|what i (?:wanted|meant|asked))|keep doing (?:that|this|it)|that'?s (?:exactly )?"
    r"(?:right|perfect|the way|what i wanted)|perfect[,!.]? (?:keep|do|that)|yes[,!]? (?:exactly|like that|that'?s it)|"
    r"great approach|good call)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i (?:always |really )?prefer|i'?d rather|i would rather|i (?:really )?(?:don'?t|do not) want (?:you )?to|"
    r"i'?d (?:actually |really )?(?:love|like|prefer) (?!you\b|your\b|to\b|it if\b|some\b|help\b)|"
    r"always (?:use|run|write|add|do|keep|put|check)|please (?:always|never))\b.+",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:let'?s (?:also )?(?:use|go with|switch to|adopt|stick with|move to|migrate to)|we(?:'ll| will| are going to)? "
    r"(?:use|go with|switch to|adopt|stick with|move to|migrate to)|we (?:chose|picked|decided)|(?:i|we)'?ve decided|"
    r"going with|decided to|the decision is|let'?s do (?=[\w.+-]+[.!]?$)(?!it|this|that|these|those|so|the|a|an))\b.+",
    re.I,
)
# Task state, not a decision worth keeping: "let's move to Phase 4", "let's go with the next step".
_TASK_STATE = re.compile(
    r"\b(?:phase|step|stage|part|task|item|point|section|todo|ticket|next one|the next|option \w|plan [a-z0-9])\b", re.I
)
# A suggestion about how the work is done: "I think we should run it on all pushes".
_SUGGESTION = re.compile(r"^(?:i think |i believe )?we should (?:always |also )?(?P<what>(?!be\b)\w.+)", re.I)
_CHANGED = re.compile(r"\b(?:no longer|not just|not anymore|any more|anymore|these days|since (?:last|this)|now|instead)\b", re.I)
# Idioms that look like corrections but correct nothing.
_IDIOM = re.compile(r"^(?:never ?mind|no worries|no problem|don'?t worry|do not worry|don'?t bother|not sure)\b[\s,.!]*", re.I)
_DEADLINE_WORDS = re.compile(
    r"\b(?:deadline|due|ships?|shipping|release[sd]?|launch(?:es|ing)?|freeze|demo|cut-?off|goes live|go-live|"
    r"must be done|needs to be done|by (?:the )?end of)\b",
    re.I,
)
_IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|never|always|use|avoid|prefer|stop|keep|make sure|run|write|add|put|check|ask)\b", re.I
)
_RATIONALE = re.compile(r"\s*(?:,\s*)?\b(?:because|since|so that|as otherwise|the reason is)\b\s*(?P<why>.+)$", re.I)
_URL = re.compile(r"https?://[^\s)>\]\"']+")
_TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_CHANNEL = re.compile(r"(?:^|\s)(#[a-z0-9][a-z0-9_-]{2,})\b")
_REFERENCE_HINT = re.compile(
    r"\b(?:dashboard|board|tracker|tracked|ticket|issue|runbook|docs?|wiki|channel|slack|jira|linear|grafana|repo|"
    r"repository|github|gitlab|bitbucket|"
    r"notion|confluence|sentry|datadog|pagerduty|spreadsheet|sheet)\b",
    re.I,
)


def _sentences(text: str) -> list[str]:
    return prose.sentences(text)


def _third_person(text: str) -> str:
    """User memories describe the user: "I'm a backend engineer" -> "The user is a backend engineer"."""
    text = re.sub(r"^(?:I'?m|I am)\b", "The user is", text)
    text = re.sub(r"^I\b", "The user", text)
    text = re.sub(r"^My\b", "The user's", text)
    for pattern, repl in ((r"\bI'?m\b", "they are"), (r"\bI am\b", "they are"), (r"\bmy\b", "their"),
                          (r"\bme\b", "them"), (r"\bI\b", "they")):
        text = re.sub(pattern, repl, text)
    return text


def _split_rationale(sentence: str) -> tuple[str, str | None]:
    match = _RATIONALE.search(sentence)
    if not match or match.start() < 8:
        return sentence, None
    return sentence[: match.start()].rstrip(" ,;"), match.group("why").rstrip(" .!")


def _classify(what: str) -> str:
    """The type an explicit "remember ..." request fits best."""
    if _ROLE.search(what) or _NEW_TO.search(what) or re.match(r"^(?:i|my)\b", what, re.I):
        return "user"
    if _URL.search(what) or _TICKET.search(what) or _REFERENCE_HINT.search(what):
        return "reference"
    if _IMPERATIVE.match(what) or _PREFERENCE.search(what) or re.search(r"\b(?:should|must)\b", what, re.I):
        return "feedback"
    return "project"  # a statement of fact about the work


# The assistant telling what it did itself ("I split the change into three commits"): the only kind
# of its sentence a confirmation may keep. What it relays ("the README says ...", "the user said ...")
# comes from a file, a page or a tool, and the user's "exactly like that" never makes it theirs.
_OWN_ACTION = re.compile(r"^(?:I|we)(?:'ve| have)?\s+(?!(?:am|was|'m|think|believe|guess|see|saw|noticed|found|read|"
                         r"will|'ll|would|can|could|should|might|must|need|want)\b)[a-z]+\b", re.I)
_RELAYED = re.compile(r"\b(?:says?|said|told|tells|asked|asks|according to|instructs?|instructed|"
                      r"recommends?|wants?)\b|[\"“”«»]", re.I)


def _previous_assistant_summary(messages: list[Message], index: int) -> str | None:
    """What the assistant had just done, in its own first sentence about its own action before the
    confirmation; None when it said no such thing."""
    for m in reversed(messages[:index]):
        if m.role == "assistant" and m.text():
            sentences = [s for s in _sentences(m.text()) if not _ACK.match(s) and len(s.split()) >= 4]
            first = sentences[0] if sentences else ""
            if _OWN_ACTION.match(first) and not _RELAYED.search(first):
                return first[:200].rstrip(".")
            return None
    return None


def _rejection_draft(reason: str) -> Draft | None:
    """A reason typed when refusing a tool call is a correction when it states a general rule ("use pnpm");
    one about the call at hand ("keep the name of the py file ...") is not."""
    reason = " ".join(reason.split()).rstrip(" .!")
    if len(reason.split()) > 12 or not _IMPERATIVE.match(reason) or re.search(r"\b(?:it|this|that|the \w+ file)\b", reason, re.I):
        return None
    rule, why = _split_rationale(reason)
    return Draft("feedback", rule[:1].upper() + rule[1:], why or "the user rejected a tool call with this reason",
                 kind="correction", correction=True)


def _sentence_drafts(sentence: str, messages: list[Message], index: int) -> list[Draft]:
    """What one sentence of the user's prose asks to keep (a question asks for help, it is not a rule)."""
    drafts: list[Draft] = []
    question = sentence.rstrip().endswith("?")
    if _ROLE.search(sentence):
        # "Since last week I'm the tech lead, not just a backend engineer": the user corrects who they are.
        drafts.append(Draft("user", sentence.rstrip(" .!"), kind="role", correction=bool(_CHANGED.search(sentence))))
    elif _NEW_TO.search(sentence):
        drafts.append(Draft("user", sentence.rstrip(" .!"), kind="expertise"))
    if not question and (_CORRECTION.match(sentence) or _INSTEAD.search(sentence)):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        rule = re.sub(r"^(?:no[,.!]?|nope[,.!]?|actually,?)\s+", "", rule, flags=re.I)
        drafts.append(Draft("feedback", rule[:1].upper() + rule[1:], why, kind="correction", correction=True))
    elif _CONFIRM.search(sentence):
        done = _previous_assistant_summary(messages, index)
        if done:
            drafts.append(Draft("feedback", f"Keep this approach: {done}", f"the user confirmed it: \"{sentence}\"",
                                kind="confirmation"))
    elif _PREFERENCE.search(sentence) or _SUGGESTION.match(sentence):
        rule, why = _split_rationale(sentence.rstrip(" .!?"))
        drafts.append(Draft("feedback", rule, why, kind="preference"))
    if not question and _DECISION.search(sentence) and not _TASK_STATE.search(sentence):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        drafts.append(Draft("project", rule, why, kind="decision"))
    elif _DEADLINE_WORDS.search(sentence) and DATE_PATTERN.search(sentence):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        drafts.append(Draft("project", rule, why, kind="deadline"))
    if not drafts and (_URL.search(sentence) or _TICKET.search(sentence)) and (
        _REFERENCE_HINT.search(sentence) or _CHANNEL.search(sentence)
    ):
        drafts.append(Draft("reference", sentence.rstrip(" .!"), kind="pointer"))
    return drafts


def detect(messages: list[Message]) -> tuple[list[Draft], list[Forget]]:
    """Drafts and forget requests found in the user's own prose (tool output, harness text and pasted
    material are not theirs)."""
    drafts: list[Draft] = []
    forgets: list[Forget] = []
    for index, message in enumerate(messages):
        text = message.user_text()
        if not text:
            continue
        anchor = message_date(message) or date.today()
        start = len(drafts)
        if message.kind == "rejection":
            found = _rejection_draft(text)
            drafts += [found] if found else []
        else:
            for sentence in _sentences(prose.own_prose(text)):
                sentence, _ = absolutize(sentence, anchor)
                sentence = _IDIOM.sub("", sentence).strip()
                if len(sentence) < 4:
                    continue
                if m := _FORGET.match(sentence):
                    phrase = m.group("what").rstrip(" .!")
                    # Said earlier in this window and taken back now: the forget wins, as it was said last.
                    kept = [d for d in drafts if not _taken_back(phrase, d.rule)]
                    start -= sum(1 for d in drafts[:start] if d not in kept)
                    drafts = kept
                    forgets.append(Forget(phrase))
                    continue
                if m := _REMEMBER.match(sentence):
                    what, why = _split_rationale(m.group("what").rstrip(" .!"))
                    drafts.append(Draft(_classify(what), what, why, kind="remember"))
                    continue
                drafts += _sentence_drafts(sentence, messages, index)
        for draft in drafts[start:]:
            draft.said_on = anchor
            if draft.type == "user":
                draft.rule = _third_person(_without_judgement(draft.rule))
    drafts = [d for d in drafts if not (d.kind in ("decision", "preference") and _CODE_STRUCTURE.search(d.rule))]
    return drafts, forgets


def _taken_back(phrase: str, rule: str) -> bool:
    """A "forget ..." request names this draft: most of its subject words (two at least when few)."""
    from memdir.stages.extractor.filing import _content_stems

    wanted = _content_stems(phrase)
    shared = wanted & _content_stems(rule)
    return bool(wanted) and len(shared) >= min(2, len(wanted)) and len(shared) / len(wanted) >= 0.5


# What the code itself shows is never saved (SPEC §2); explicit requests and corrections still are.
_CODE_STRUCTURE = re.compile(
    r"\b(?:pattern|architecture|codebase|directory|folder|module|class(?:es)?|function|layer)\b"
    r"|\b[\w-]+/[\w./-]+|\.(?:py|ts|js|go|rs|java|rb)\b",
    re.I,
)
_JUDGEMENT = re.compile(r"\b(?:terrible|awful|bad|hopeless|useless|stupid|dumb|clueless|suck)\b", re.I)


def _without_judgement(text: str) -> str:
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


def apply(
    store: MemoryStore, messages: list[Message], *, today: date, dry_run: bool = False,
    source: str = "offline extraction",
) -> OfflineOutcome:
    drafts, forgets = detect(messages)
    return apply_drafts(store, drafts, forgets, today=today, dry_run=dry_run, source=source)


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

