"""The offline rules over one sentence in any covered language (extractor/offline_lang.py holds each language's
markers): standing rules, facts about the user, links into external systems and where things are kept; and whether
a sentence is said for the moment (a one-off, the task at hand) rather than to hold. The English-only rules are
extractor/offline_english.py.
"""

from __future__ import annotations

import re

from memdir.stages.extractor import (
    offline_facts as facts,
    offline_lang as lang,
    offline_scope as scope,
    offline_user as user,
)
from memdir.stages.extractor.drafts import Draft
from memdir.stages.extractor.offline_english import IMPERATIVE, SHORT_RULE_WORDS, classify, habit, split_rationale

# "From now on, ask before installing any package": the instruction follows the phrase that makes it standing.
_LEADING_STANDING = re.compile(r"^(?:from now on|going forward|in (?:the )?future|by default|when in doubt|if in doubt|"
                               r"whenever possible)\s*[,:]?\s*(?:please\s+)?", re.I)
# "Fix the paths and run it, the vault will be in D:\\..." is about the task at hand, not a pointer to keep.
_TASK_VERB = re.compile(r"^(?:please\s+)?(?:fix|run|create|make|add|update|change|check|build|move|copy|open|show|"
                        r"install|delete|remove)\b", re.I)


def one_off(sentence: str) -> bool:
    """A request about the work at hand ("don't touch the header yet"), not a rule for next time; nor is a
    possibility being explored ("if we did X, then ..."), nor the user's own plan for later."""
    return (lang.is_hypothetical(sentence) or lang.is_plan(sentence) or scope.about_one_thing(sentence)
            or ((scope.bounds_the_task(sentence) or lang.is_one_off(sentence) or scope.own_choice_now(sentence))
                and not lang.is_standing(sentence)))


def kept_in_request(question: str) -> list[Draft]:
    """"Can you review it while keeping it simple and dependency free?": the question asks for help, but the quality
    it says to keep while doing so is a constraint on the work (only that clause, never the request)."""
    setup = user.setup_clause(question, asked=True)
    if setup and not lang.is_question(setup) and not lang.is_hypothetical(setup):
        # "..., 我开发环境会是无桌面端的服务器": the user's machine, said while asking, holds after the question
        return [Draft("user", setup, kind="setup")]
    if not re.search(r"(?:\bwhile|,) ?keeping\b", question, re.I) or not (fact := facts.stated_fact(question)):
        return []
    return [Draft(fact[0], fact[2], kind=fact[1])] if fact[1] == "keep" else []


def task_at_hand(sentence: str) -> bool:
    """A rule-shaped request about the work in front of the user: an option picked, a feature asked for, a concrete
    local path to use. Only rules are held back by it: a pointer or a "remember" with a path still stands."""
    return lang.is_task_at_hand(sentence) and not lang.is_standing(sentence)


def sentence_drafts(sentence: str, language: str) -> list[Draft]:
    """Signals beyond the English rules, in every covered language: standing rules, facts about the user,
    links into external systems and where things are kept."""
    clean = sentence.rstrip(" .!")
    # (before one_off: said while asking for this commit, it holds; unless said for the work at hand, "pour ce fix")
    if (habit_said := facts.git_habit(sentence)) and not lang.said_for_now(sentence):
        return [Draft("feedback", habit_said[1][:1].upper() + habit_said[1][1:], kind=habit_said[0])]
    if one_off(sentence):
        return []
    if (what := lang.remembered(sentence)) and len(what) >= 4:
        return [Draft("user" if lang.about_me(what) else classify(what), what, kind="remember")]
    if setup := user.setup_clause(sentence):  # (before the standing rules: "我默认的终端是zsh" states, it asks nothing)
        return [Draft("user", setup, kind="setup")]
    rule_shaped = not task_at_hand(sentence)
    if rule_shaped and lang.correction(sentence):
        rule, why = split_rationale(clean)
        return [Draft("feedback", rule, why, kind="correction", correction=True)]
    standing = lang.standing_rule(sentence)
    # "Use subagents whenever possible": an instruction said to hold beyond the task, in any covered language.
    # (English asks for an imperative or a habit of the team: its "the server always returns 500" is a report)
    english_rule = IMPERATIVE.match(_LEADING_STANDING.sub("", sentence)) or habit(sentence)
    said_to_hold = ((language != "en" or english_rule) and lang.is_standing(sentence) and not scope.same_again(sentence))
    if rule_shaped and (standing or (said_to_hold and lang.word_count(sentence) <= SHORT_RULE_WORDS)):
        rule, why = split_rationale(clean)
        return [Draft("feedback", rule, why, kind="format" if standing == "format" else "preference")]
    # "..., ask me to install them or ask for permission": only its clause, as the sentence around it is often the task
    if (consent := lang.consent_clause(sentence)) and not task_at_hand(consent):
        return [Draft("feedback", consent, kind="consent")]
    if rule_shaped and (clause := lang.each_norm_clause(sentence)) and lang.word_count(clause) <= SHORT_RULE_WORDS:
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
    if ((lang.external_link(sentence) or facts.where_to_look(sentence)
            or (lang.points_to_location(sentence) and not _TASK_VERB.match(sentence)))
            and not facts.handed_over_for_contents(sentence)):
        return [Draft("reference", clean, kind="pointer")]
    return []
