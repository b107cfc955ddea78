"""The English rules over one sentence of the user's own prose: explicit remember/forget requests, corrections and
confirmations, preferences, decisions with their rationale, role statements, deadlines and pointers into external
systems. What the rules read in every covered language is extractor/offline_multilingual.py; walking a session's
messages and keeping only what is not said for the moment is extractor/offline.py.
"""

from __future__ import annotations

import re

from memdir.stages.extractor import (
    offline_facts as facts,
    offline_lang as lang,
    offline_scope as scope,
    offline_user as user,
)
from memdir.stages.extractor.dates import DATE_PATTERN
from memdir.stages.extractor.drafts import Draft
from memdir.transcript import Message

REMEMBER = re.compile(
    # "Note that there is a .envrc file, but ..." adds context to the request at hand; "note this down" keeps it.
    r"^(?:please\s+|also\s+|and\s+)*(?:remember|keep in mind|don'?t forget|make a note(?: of)?|take note(?: of)?|"
    r"note (?:this|that|it) down)\b[\s,:]*(?:that\s+)?(?P<what>.+)",
    re.I,
)
FORGET = re.compile(
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
# "I'm inexperienced with networking concepts": how much the user knows of a field shapes every explanation in it;
# "I am unfamiliar with that concept" is about one point of the answer just given.
_NEW_TO = re.compile(
    r"\bi(?:'?m| am) (?:(?:very|quite|pretty|fairly|still|completely|totally|rather|a bit|somewhat) )?"
    r"(?:new to|not (?:very |that |too |really )?(?:familiar|experienced) with|unfamiliar with|"
    r"inexperienced (?:with|in)|an expert in|experienced with)\s+(?!(?:that|this|it|these|those|them|the (?:concept|idea|"
    r"term|word|part|step|command|option|syntax))\b)[^.,;!?]+|"
    r"\bi have (?:no|little|very little|zero) experience (?:with|in)\s+(?!(?:that|this|it|these|those|them)\b)"
    r"[^.,;!?]+", re.I)
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
    r"always (?:use|run(?! into\b| out of\b| across\b)|write|add|do|keep|put|check)|please (?:always|never)|"
    r"let'?s (?:always|never) \w+)\b.+",
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
# The request may open with a word of assent ("Alright can u see <url>", "Dobra obczaj to repo <url>") and come in
# the user's language; in Chinese or Japanese the verb follows the link ("<url> 分析一下這個是要怎麼用"). Bare "see"
# and "check" stay out: "see <url> for the roadmap" is where to look next time.
_LOOK_NOW = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|all right|right|so|now|and|then|hey|well|cool|great|dobra|bueno|vale|bon|alors|"
    r"tá|beleza|also|gut|ну|ладно)[,!.]?\s+)*(?:please\s+|pls\s+)?(?:(?:can|could|would) (?:you|u) (?:please\s+)?"
    r"(?:see|access|open|read|check)\b|(?:take|have) a look at|look at|check out|open|read|review|clone|visit|go to|"
    r"fetch|download|analy[sz]e|compare|browse|study|explore|obczaj|zobacz|przejrzyj|przeanalizuj|mira|revisa|analiza|"
    r"échale un vistazo|olha|veja|confira|analisa|d[áa] uma olhada|regarde|jette un (?:œil|oeil)|schau dir|sieh dir|"
    r"посмотри|глянь|изучи|проанализируй)\b"
    r"|^[^。！？.!?]{0,6}?(?:分析|看看|看一下|看下|查看|研究一下|瞧瞧|見て|確認して|調べて|読んで)", re.I)
_FOR_PURPOSE = re.compile(r"\b(?:for|as)\s+(?:an?\s+|the\s+)?(?:example|examples|reference|docs?|documentation|guide|"
                          r"how to|pattern|template|spec|specification)\b|参考|參考|参照|お手本", re.I)


# "okay can u see <repo url> the current version is this C:\\...": what the user says of it is kept (set 12).
_SAYS_WHAT_IT_IS = re.compile(r"\b(?:is|are|was|were|lives?|holds?|has|have|(?:it|that|this)['’]s|"
                              r"es|c['’]est|é|ist|это)(?!\w)", re.I)  # ... and in the languages _LOOK_NOW reads
# "Open <url>: the latency dashboard for the API": a colon (or a comma or dash) right after the link, then a label that
# opens as a thing does (an article or "our", then two words or more), says what it is too; "Open <url>: we need to
# fix it" goes on with the request, and "can u see <url>: the repo" names nothing the link does not.
_LABEL_AFTER_COLON = re.compile(r"^\s*[:,\-–—]\s*(?:the|an?|our|my|your|their|el|la|los|las|una?|nuestr[oa]s?|o|os|"
                                r"as|uma?|noss[oa]s?|le|les|une|notre|nos|der|die|das|eine?|unser[e]?|nasz[aey]?|наш[аие]?)\s+\S+\s+\w",
                                re.I)


def handed_over_to_look(sentence: str) -> bool:
    """A link handed over to be looked at now, said before or after the link, with nothing said of what it is."""
    if not _LOOK_NOW.match(facts.URL.sub(" ", sentence).strip(" \t,:;-—")):
        return False
    links = list(facts.URL.finditer(sentence))
    after = sentence[links[-1].end():] if links else ""
    return not (_SAYS_WHAT_IT_IS.search(after) or _LABEL_AFTER_COLON.match(after))
# "Sprint should be capitalized throughout": a norm for the work, when said to hold beyond the moment.
_NORM = re.compile(r"\b(?:should|must|has to|have to|needs? to)\b", re.I)
# A standing rule is said in a breath: a 60-word run-on with "need to" and "by default" in it is the task (set 14).
SHORT_RULE_WORDS = 25
_CHANGED = re.compile(r"\b(?:no longer|not just|not anymore|any more|anymore|these days|since (?:last|this)|now|instead)\b", re.I)
# Idioms that look like corrections but correct nothing.
IDIOM = re.compile(r"^(?:never ?mind|no worries|no problem|don'?t worry|do not worry|don'?t bother|not sure)\b[\s,.!]*", re.I)
_DEADLINE_WORDS = re.compile(
    r"\b(?:deadline|due|ships?|shipping|release[sd]?|launch(?:es|ing)?|freeze|demo|cut-?off|goes live|go-live|"
    r"must be done|needs to be done|by (?:the )?end of)\b",
    re.I,
)
IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|(?:never|always)" + _NO_VERB_AFTER + r"|use|avoid|prefer|stop|keep|make sure|run|write|add|put|"
    r"check|ask)\b", re.I
)
# "Our team always uses pnpm", "we never merge on Fridays": a habit of the team or the project is its convention, as
# "nuestro equipo siempre usa pnpm" is in the other languages. Only a verb of practice: "we always run into timeouts",
# "the server always returns 500" and "it always crashes" report what happens, and stay unsaved.
_HABIT = re.compile(
    r"^(?:(?:in|on|at|for) (?:this|our|the) [\w-]+,?\s+)?(?:we|our (?:team|company|org|organi[sz]ation|project|repo|"
    r"codebase|devs|developers|engineers)|(?:the|my|this) (?:team|project|repo|codebase))\s+(?:always|never)\s+"
    r"(?:use|deploy|write|run|squash|rebase|merge|review|prefer|keep|put|name|tag|follow|commit|release|ship|pin|"
    r"format|lint|document|add|avoid|test|pair|branch|push|pull|install|build|target|support)s?\b(?!\s+(?:into|out of|across)\b)",
    re.I,
)
_RATIONALE = re.compile(r"\s*(?:,\s*)?\b(?:because|since|so that|as otherwise|the reason is)\b\s*(?P<why>.+)$", re.I)


def habit(sentence: str) -> bool:
    """"Our team always uses pnpm": the team's or the project's habit, a rule for the work (English)."""
    return bool(_HABIT.match(sentence))


def split_rationale(sentence: str) -> tuple[str, str | None]:
    match = _RATIONALE.search(sentence)
    if not match or match.start() < 8:
        return sentence, None
    return sentence[: match.start()].rstrip(" ,;"), match.group("why").rstrip(" .!")


def classify(what: str) -> str:
    """The type an explicit "remember ..." request fits best."""
    if _ROLE.search(what) or _NEW_TO.search(what) or re.match(r"^(?:i|my)\b", what, re.I):
        return "user"
    if facts.URL.search(what) or facts.TICKET.search(what) or facts.REFERENCE_HINT.search(what):
        return "reference"
    if (IMPERATIVE.match(what) or _PREFERENCE.search(what) or re.search(r"\b(?:should|must)\b", what, re.I)
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
    if len(re.findall(r"\w{3,}", rest)) < 4 or not (IMPERATIVE.match(rest) or lang.is_standing(rest)):
        return None
    return rest[:1].upper() + rest[1:]


def rejection_draft(reason: str) -> Draft | None:
    """A reason typed when refusing a tool call is a correction when it states a general rule ("use pnpm");
    one about the call at hand ("keep the name of the py file ...") is not."""
    reason = " ".join(reason.split()).rstrip(" .!")
    if len(reason.split()) > 12 or not IMPERATIVE.match(reason) or re.search(r"\b(?:it|this|that|the \w+ file)\b", reason, re.I):
        return None
    rule, why = split_rationale(reason)
    return Draft("feedback", rule[:1].upper() + rule[1:], why or "the user rejected a tool call with this reason",
                 kind="correction", correction=True)


def sentence_drafts(sentence: str, messages: list[Message], index: int) -> list[Draft]:
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
        rule, why = split_rationale(sentence.rstrip(" .!"))
        rule = re.sub(r"^(?:no[,.!]?|nope[,.!]?|actually,?)\s+", "", rule, flags=re.I)
        drafts.append(Draft("feedback", rule[:1].upper() + rule[1:], why, kind="correction", correction=True))
    elif _PREFERENCE.search(sentence) or (_SUGGESTION.match(sentence) and _GENERAL.search(sentence)) or (
            user.reasoned_dislike(sentence)) or (
            _NORM.search(sentence) and lang.is_standing(sentence) and lang.word_count(sentence) <= SHORT_RULE_WORDS):
        rule, why = split_rationale(sentence.rstrip(" .!?"))
        drafts.append(Draft("feedback", rule, why, kind="preference"))
    decided = _DECISION.search(sentence)
    # "The README says we use pnpm", "you said we're going with Vite": not the user's decision, someone else's words
    decided = decided if decided and not facts.relayed(sentence[: decided.start()]) else None
    if (not question and decided and not _TASK_STATE.search(sentence) and not lang.picks_option(sentence)
            and not scope.about_one_thing(sentence)):
        rule, why = split_rationale(sentence.rstrip(" .!"))
        # two signals, not one: a decision word alone names a pick the code will show (offline_scope.decision_weighed)
        if why or scope.decision_weighed(sentence) or _GENERAL.search(sentence) or lang.is_standing(sentence):
            drafts.append(Draft("project", rule, why, kind="decision"))
    elif _DEADLINE_WORDS.search(sentence) and DATE_PATTERN.search(sentence):
        rule, why = split_rationale(sentence.rstrip(" .!"))
        drafts.append(Draft("project", rule, why, kind="deadline"))
    documentation = facts.documentation_link(sentence)
    if not drafts and (facts.points_somewhere(sentence) or documentation) and not facts.handed_over_for_contents(sentence) and (
            not handed_over_to_look(sentence) or _FOR_PURPOSE.search(sentence) or documentation):
        drafts.append(Draft("reference", sentence.rstrip(" .!"), kind="pointer"))
    return drafts
