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
from memdir.stages.extractor import (
    offline_facts as facts,
    offline_lang as lang,
    offline_scope as scope,
    offline_user as user,
    prose,
)
from memdir.stages.extractor.dates import DATE_PATTERN, absolutize
from memdir.stages.extractor.excerpt import message_date
from memdir.stages.extractor.filing import OfflineOutcome, apply_drafts, taken_back, to_memory  # noqa: F401  (filing: extractor/filing.py)
from memdir.stages.extractor.offline_languages import COVERED, language_note, language_of  # offline.language_note too
from memdir.stages.extractor.offline_wording import merged_user_drafts, third_person, without_judgement
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
    said_in: str | None = None  # the uuid of the message whose words it is (provenance)
    said_as: str = "prompt"  # that message's kind: prompt, queued, answer, rejection


class Forget(Record):
    phrase: str


_ACK = re.compile(r"^(?:understood|got it|sure|noted|ok(?:ay)?|done|great|thanks|thank you|will do|of course)\b", re.I)
_REMEMBER = re.compile(
    # "Note that there is a .envrc file, but ..." adds context to the request at hand; "note this down" keeps it.
    r"^(?:please\s+|also\s+|and\s+)*(?:remember|keep in mind|don'?t forget|make a note(?: of)?|take note(?: of)?|"
    r"note (?:this|that|it) down)\b[\s,:]*(?:that\s+)?(?P<what>.+)",
    re.I,
)
_FORGET = re.compile(
    r"^(?:please\s+|actually,?\s+|oh,?\s+)*(?:forget|stop remembering|don'?t remember|no need to remember)\b"
    r"[\s,:]*(?:that\s+|about\s+)?(?P<what>.+)",
    re.I,
)
_ROLE = re.compile(
    # "I'm going to ignore the owner binding", "I'm building a tool for developers": what the user does now, not who
    # they are; a role is a noun phrase, never one that starts with a verb in -ing.
    r"\b(?:i'?m|i am|i work as|my role is|my job is)\s+(?:(?:a|an|the|our|their)\s+)?(?!\w+ing\b)"
    r"(?P<role>[\w\s/-]{2,60}?"
    r"(?:engineer|developer|dev|scientist|designer|manager|lead|student|founder|architect|analyst|researcher|"
    r"sre|devops|admin|administrator|pm|cto|ceo|consultant|maintainer|intern|owner|writer|teacher)s?)\b",
    re.I,
)
_NEW_TO = re.compile(r"\bi'?m (?:new to|not familiar with|unfamiliar with|an expert in|experienced with)\s+(?P<topic>[^.,;!?]+)", re.I)
# "Never seen this error before", "always the same error": an adverb of experience, no instruction follows it.
_NO_VERB_AFTER = r"(?!\s+(?:the|a|an|same|been|seen|had|heard|got|gotten|done|worked|was|were|is|are)\b)"
_CORRECTION = re.compile(
    r"^(?:no[,.!]?\s+|nope[,.!]?\s+|actually[,]?\s+|please\s+)*(?:don'?t|do not|never" + _NO_VERB_AFTER
    + r"|(?:stop|quit)(?= \w+ing\b)|avoid|no more)\b.+", re.I
)
_INSTEAD = re.compile(r"\b(?:use|prefer|go with)\s+(?P<new>[\w.+-]+)(?:\s+instead of|,?\s+not)\s+(?P<old>[\w.+-]+)", re.I)
_CONFIRM = re.compile(
    r"\b(?:exactly (?:like that|what i (?:wanted|meant|asked))|keep doing (?:that|this|it)|that'?s (?:exactly )?"
    r"(?:right|perfect|the way|what i wanted)|perfect[,!.]? (?:keep|do|that)|yes[,!]? (?:exactly|like that|that'?s it)|"
    r"great approach|good call)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i (?:always |really )?prefer|i'?d rather|i would rather|i (?:really )?(?:don'?t|do not) want (?:you )?to|"
    r"i'?d (?:actually |really )?(?:love|like|prefer) (?!you\b|your\b|to\b|it if\b|some\b|help\b)|"
    r"always (?:use|run|write|add|do|keep|put|check)|please (?:always|never)|let'?s (?:always|never) \w+)\b.+",
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
# A suggestion holds for the work when it says for what in general ("on all pushes", "always"); "we should use
# imageye_check-circle for the check marks" picks something for the piece at hand.
_GENERAL = re.compile(r"\b(?:all|any|every|each|everywhere|everything|always|never|whenever|from now on|going forward|"
                      r"by default|throughout)\b", re.I)
# "Look at https://github.com/x/y and tell me what you think": a link handed over to be read now, not kept,
# unless the user says what it is for ("Look at <url> for an example of how to implement OAuth").
_LOOK_NOW = re.compile(r"^(?:please\s+)?(?:(?:take|have) a look at|look at|check out|open|read|review|clone|visit|go to|"
                       r"fetch|download|analy[sz]e|compare|browse|study)\b", re.I)
_FOR_PURPOSE = re.compile(r"\b(?:for|as)\s+(?:an?\s+|the\s+)?(?:example|examples|reference|docs?|documentation|guide|"
                          r"how to|pattern|template|spec|specification)\b", re.I)
# "Sprint should be capitalized throughout": a norm for the work, when said to hold beyond the moment.
_NORM = re.compile(r"\b(?:should|must|has to|have to|needs? to)\b", re.I)
_CHANGED = re.compile(r"\b(?:no longer|not just|not anymore|any more|anymore|these days|since (?:last|this)|now|instead)\b", re.I)
# Idioms that look like corrections but correct nothing.
_IDIOM = re.compile(r"^(?:never ?mind|no worries|no problem|don'?t worry|do not worry|don'?t bother|not sure)\b[\s,.!]*", re.I)
_DEADLINE_WORDS = re.compile(
    r"\b(?:deadline|due|ships?|shipping|release[sd]?|launch(?:es|ing)?|freeze|demo|cut-?off|goes live|go-live|"
    r"must be done|needs to be done|by (?:the )?end of)\b",
    re.I,
)
_IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|(?:never|always)" + _NO_VERB_AFTER + r"|use|avoid|prefer|stop|keep|make sure|run|write|add|put|"
    r"check|ask)\b", re.I
)
_RATIONALE = re.compile(r"\s*(?:,\s*)?\b(?:because|since|so that|as otherwise|the reason is)\b\s*(?P<why>.+)$", re.I)
def _split_rationale(sentence: str) -> tuple[str, str | None]:
    match = _RATIONALE.search(sentence)
    if not match or match.start() < 8:
        return sentence, None
    return sentence[: match.start()].rstrip(" ,;"), match.group("why").rstrip(" .!")


def _classify(what: str) -> str:
    """The type an explicit "remember ..." request fits best."""
    if _ROLE.search(what) or _NEW_TO.search(what) or re.match(r"^(?:i|my)\b", what, re.I):
        return "user"
    if facts.URL.search(what) or facts.TICKET.search(what) or facts.REFERENCE_HINT.search(what):
        return "reference"
    if (_IMPERATIVE.match(what) or _PREFERENCE.search(what) or re.search(r"\b(?:should|must)\b", what, re.I)
            or lang.is_standing(what) or lang.standing_rule(what)):
        return "feedback"  # "remember: from now on reply in French" is how the work is done, a rule
    return "project"  # a statement of fact about the work


def _confirmed_in_own_words(sentence: str) -> str | None:
    """"Yes, exactly like that: keep the tests next to the code" -> "Keep the tests next to the code";
    a bare "exactly like that" says nothing in the user's words, so it saves nothing."""
    rest = _CONFIRM.sub(" ", _CONFIRM.sub(" ", sentence))
    rest = re.sub(r"^[\s,.:;!—-]*(?:like (?:that|this)|that'?s it)\b", "", rest, flags=re.I)
    rest = re.sub(r"^[\s,.:;!—-]*(?:(?:yes|yeah|yep|ok(?:ay)?|great|perfect|and|so|please|thanks)\b[\s,.:;!—-]*)*", "",
                  rest, flags=re.I).strip(" ,.:;!—-")
    if len(re.findall(r"\w{3,}", rest)) < 4 or not (_IMPERATIVE.match(rest) or lang.is_standing(rest)):
        return None
    return rest[:1].upper() + rest[1:]


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
    if _CONFIRM.search(sentence):
        # A confirmation keeps only what the user said about it, never the assistant's text, and is
        # never a correction (nothing was corrected).
        said = _confirmed_in_own_words(sentence)
        if said:
            drafts.append(Draft("feedback", said, f"the user confirmed it: \"{sentence}\"", kind="confirmation"))
    elif not question and (_CORRECTION.match(sentence) or _INSTEAD.search(sentence)) and not lang.just_that(sentence):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        rule = re.sub(r"^(?:no[,.!]?|nope[,.!]?|actually,?)\s+", "", rule, flags=re.I)
        drafts.append(Draft("feedback", rule[:1].upper() + rule[1:], why, kind="correction", correction=True))
    elif _PREFERENCE.search(sentence) or (_SUGGESTION.match(sentence) and _GENERAL.search(sentence)) or (
            user.reasoned_dislike(sentence)) or (
            _NORM.search(sentence) and lang.is_standing(sentence)):
        rule, why = _split_rationale(sentence.rstrip(" .!?"))
        drafts.append(Draft("feedback", rule, why, kind="preference"))
    decided = _DECISION.search(sentence)
    # "The README says we use pnpm", "you said we're going with Vite": not the user's decision, someone else's words
    decided = decided if decided and not facts.relayed(sentence[: decided.start()]) else None
    if (not question and decided and not _TASK_STATE.search(sentence) and not lang.picks_option(sentence)
            and not scope.about_one_thing(sentence)):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        # two signals, not one: a decision word alone names a pick the code will show (offline_scope.decision_weighed)
        if why or scope.decision_weighed(sentence) or _GENERAL.search(sentence) or lang.is_standing(sentence):
            drafts.append(Draft("project", rule, why, kind="decision"))
    elif _DEADLINE_WORDS.search(sentence) and DATE_PATTERN.search(sentence):
        rule, why = _split_rationale(sentence.rstrip(" .!"))
        drafts.append(Draft("project", rule, why, kind="deadline"))
    documentation = facts.documentation_link(sentence)
    if not drafts and (facts.points_somewhere(sentence) or documentation) and (
            not _LOOK_NOW.match(sentence) or _FOR_PURPOSE.search(sentence) or documentation):
        drafts.append(Draft("reference", sentence.rstrip(" .!"), kind="pointer"))
    return drafts


def detect(messages: list[Message]) -> tuple[list[Draft], list[Forget]]:
    """Drafts and forget requests found in the user's own prose (tool output, harness text and pasted
    material are not theirs)."""
    drafts: list[Draft] = []
    forgets: list[Forget] = []
    shown: set[str] = set()  # the session's own repositories, as shown so far
    for index, message in enumerate(messages):
        shown |= facts.repositories_shown(message)
        text = message.user_text()
        if not text:
            continue
        anchor = message_date(message) or date.today()
        found: list[Draft] = []
        if message.kind == "rejection":
            rejection = _rejection_draft(text)
            found = [rejection] if rejection else _message_drafts([" ".join(text.split())], messages, index, anchor,
                                                                  drafts, forgets, english_rules=False)
        else:
            own = _answers_only(text) if message.kind == "answer" else text
            found = _message_drafts(prose.statements(prose.own_prose(own)), messages, index, anchor, drafts, forgets)
        found = [d for d in found if not (d.kind == "pointer" and facts.only_links_to(shown, d.rule))]
        for draft in found:
            draft.said_on = anchor
            draft.said_in, draft.said_as = message.uuid, message.kind or "prompt"
            if draft.type == "user":
                draft.rule = third_person(without_judgement(draft.rule))
        drafts += merged_user_drafts(found)
    drafts = [d for d in drafts if not (d.kind in ("decision", "preference") and _CODE_STRUCTURE.search(d.rule))]
    return drafts, forgets



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
        sentence = _IDIOM.sub("", sentence).strip()
        language = language_of(sentence)
        if len(sentence) < 4 or language not in COVERED:
            continue
        if lang.is_question(sentence):
            found += _kept_in_request(sentence)
            continue
        if found and (lang.continues_previous(sentence) or (found[-1].kind == "format" and user.describes_output(sentence))):
            found[-1].rule = f"{found[-1].rule.rstrip(' .')}. {sentence.rstrip(' .!')}"
            continue
        if m := _FORGET.match(sentence):
            phrase = m.group("what").rstrip(" .!")
            # Said earlier in this window and taken back now: the forget wins, as it was said last.
            earlier[:] = [d for d in earlier if not taken_back(phrase, d.rule)]
            found = [d for d in found if not taken_back(phrase, d.rule)]
            forgets.append(Forget(phrase))
            continue
        if m := _REMEMBER.match(sentence):
            # "don't forget to update the changelog": a step of the task, not a fact to keep. "Remember to ..." is
            # the user asking for a memory in so many words (SPEC: an explicit request is saved), and stays.
            if (m.group("what").lower().startswith("to ") and not sentence.lower().lstrip(" ,.").startswith(
                    ("remember", "please remember", "also remember", "and remember"))
                    and not lang.is_standing(sentence)):
                continue
            # "Does that sound right? Remember I have to pay taxes": a reminder of what the question just asked must
            # weigh, not a request to keep it; a standing word makes it one ("... Remember, always use pnpm"), and so
            # does "please" (SPEC: an explicit request is saved): "Can you summarise it? Please remember my name is Dana".
            # Nor does a fact about the user themself, which holds whatever the question was: "How do I list the
            # files? Remember that I use Windows".
            if (said_before and lang.is_question(said_before) and not lang.is_standing(sentence)
                    and not sentence.lower().startswith("please") and not user.states_self(m.group("what"))):
                continue
            what, why = _split_rationale(m.group("what").rstrip(" .!"))
            found.append(Draft(_classify(what), what, why, kind="remember"))
            continue
        made = _sentence_drafts(sentence, messages, index) if english_rules else []
        # a decision for the moment ("I've decided to skip the refactor today") is no more lasting than a rule
        made = [d for d in made if not (d.kind in _RULE_KINDS and (_one_off(sentence) or _task_at_hand(sentence))
                                        or d.kind == "decision" and _one_off(sentence))]
        made = made or [d for d in _lang_drafts(sentence, language)
                         if not (d.kind in _MOMENT_KINDS and lang.is_one_off(sentence)
                                 or d.kind == "dislike" and lang.just_that(sentence))]
        for draft in made:
            if draft.kind == "writing" and said_before and user.points_back(sentence):
                draft.rule = f"{said_before.rstrip(' .!')}. {draft.rule}"  # "that language" is the sentence before
        found += made
    return found


_RULE_KINDS = ("correction", "preference")
# Facts said for the moment are not kept either: "for this PR, keep all commits minimal", "I hate it when you do that".
_MOMENT_KINDS = ("keep", "goal", "dislike", "environment")
# "From now on, ask before installing any package": the instruction follows the phrase that makes it standing.
_LEADING_STANDING = re.compile(r"^(?:from now on|going forward|in (?:the )?future|by default|when in doubt|if in doubt|"
                               r"whenever possible)\s*[,:]?\s*(?:please\s+)?", re.I)
# A standing rule is said in a breath; a long sentence with "every time" in it describes a task.
_SHORT_RULE_WORDS = 25
# "Fix the paths and run it, the vault will be in D:\\..." is about the task at hand, not a pointer to keep.
_TASK_VERB = re.compile(r"^(?:please\s+)?(?:fix|run|create|make|add|update|change|check|build|move|copy|open|show|"
                        r"install|delete|remove)\b", re.I)


def _one_off(sentence: str) -> bool:
    """A request about the work at hand ("don't touch the header yet"), not a rule for next time; nor is a
    possibility being explored ("if we did X, then ..."), nor the user's own plan for later."""
    return (lang.is_hypothetical(sentence) or lang.is_plan(sentence) or scope.about_one_thing(sentence)
            or ((scope.bounds_the_task(sentence) or lang.is_one_off(sentence) or scope.own_choice_now(sentence))
                and not lang.is_standing(sentence)))


def _kept_in_request(question: str) -> list[Draft]:
    """"Can you review it while keeping it simple and dependency free?": the question asks for help, but the quality
    it says to keep while doing so is a constraint on the work (only that clause, never the request)."""
    setup = user.setup_clause(question, asked=True)
    if setup and not lang.is_question(setup) and not lang.is_hypothetical(setup):
        # "..., 我开发环境会是无桌面端的服务器": the user's machine, said while asking, holds after the question
        return [Draft("user", setup, kind="setup")]
    if not re.search(r"(?:\bwhile|,) ?keeping\b", question, re.I) or not (fact := facts.stated_fact(question)):
        return []
    return [Draft(fact[0], fact[2], kind=fact[1])] if fact[1] == "keep" else []


def _task_at_hand(sentence: str) -> bool:
    """A rule-shaped request about the work in front of the user: an option picked, a feature asked for, a concrete
    local path to use. Only rules are held back by it: a pointer or a "remember" with a path still stands."""
    return lang.is_task_at_hand(sentence) and not lang.is_standing(sentence)


def _lang_drafts(sentence: str, language: str) -> list[Draft]:
    """Signals beyond the English rules, in every covered language: standing rules, facts about the user,
    links into external systems and where things are kept."""
    clean = sentence.rstrip(" .!")
    if _one_off(sentence):
        return []
    if (what := lang.remembered(sentence)) and len(what) >= 4:
        return [Draft("user" if lang.about_me(what) else _classify(what), what, kind="remember")]
    if setup := user.setup_clause(sentence):  # (before the standing rules: "我默认的终端是zsh" states, it asks nothing)
        return [Draft("user", setup, kind="setup")]
    rule_shaped = not _task_at_hand(sentence)
    if rule_shaped and lang.correction(sentence):
        rule, why = _split_rationale(clean)
        return [Draft("feedback", rule, why, kind="correction", correction=True)]
    standing = lang.standing_rule(sentence)
    # "Use subagents whenever possible": an instruction said to hold beyond the task, in any covered language.
    said_to_hold = ((language != "en" or _IMPERATIVE.match(_LEADING_STANDING.sub("", sentence))) and lang.is_standing(sentence)
                    and not scope.same_again(sentence))
    if rule_shaped and (standing or (said_to_hold and lang.word_count(sentence) <= _SHORT_RULE_WORDS)):
        rule, why = _split_rationale(clean)
        return [Draft("feedback", rule, why, kind="format" if standing == "format" else "preference")]
    # "..., ask me to install them or ask for permission": only its clause, as the sentence around it is often the task
    if (consent := lang.consent_clause(sentence)) and not _task_at_hand(consent):
        return [Draft("feedback", consent, kind="consent")]
    if rule_shaped and (clause := lang.each_norm_clause(sentence)) and lang.word_count(clause) <= _SHORT_RULE_WORDS:
        return [Draft("feedback", clause[:1].upper() + clause[1:], kind="preference")]
    if user.vocabulary(sentence):
        return [Draft("feedback", clean, kind="writing")]
    if kind := user.about_the_user(sentence):
        return [Draft("user", clean, kind=kind)]
    if fact := facts.stated_fact(clean):
        return [Draft(fact[0], fact[2], kind=fact[1])]
    if (uses := user.uses_tool(sentence)) and rule_shaped:
        return [Draft(uses, clean.lstrip("-*• "), kind="tools" if uses == "user" else "stack")]
    if clause := user.switching_clause(sentence):
        return [Draft("user", clause[:1].upper() + clause[1:], kind="switching")]
    if (lang.external_link(sentence) or facts.where_to_look(sentence)
            or (lang.points_to_location(sentence) and not _TASK_VERB.match(sentence))):
        return [Draft("reference", clean, kind="pointer")]
    return []


# What the code itself shows is never saved (SPEC §2); explicit requests and corrections still are.
_CODE_STRUCTURE = re.compile(
    r"\b(?:pattern|architecture|codebase|directory|folder|module|class(?:es)?|function|layer)\b"
    r"|\b[\w-]+/[\w./-]+|\.(?:py|ts|js|go|rs|java|rb)\b",
    re.I,
)
def apply(
    store: MemoryStore, messages: list[Message], *, today: date, dry_run: bool = False,
    source: str = "offline extraction", session: str | None = None,
) -> OfflineOutcome:
    drafts, forgets = detect(messages)
    outcome = apply_drafts(store, drafts, forgets, today=today, dry_run=dry_run, source=source, session=session)
    note = language_note(messages)
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

