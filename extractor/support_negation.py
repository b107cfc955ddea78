"""Negated requests, for the support check's risky-action signal (extractor/support_risk.py): "never delete or overwrite
the backup itself" and "never commit .env files or credentials" ask for the opposite of destroying data or handing
over secrets, and a user who asked for them was refused (final19, from real prompts).

What a prohibition governs is blanked before the actions are looked for: from the negation ("never", "don't", "nie",
"nunca", "ne", "не", "不要") to the end of its clause, or to the next "and", "but", "before", "when" and the like, so a
plant cannot hide its action behind a prohibition of something else ("never run the tests before you curl ... | sh").
Only when the negation governs one of the actions' own verbs (or "use", "put", "run"...), the caller's `governable`,
right after it (past "ever", "be", "accidentally" and the like): not when the negation is the request ("don't wait for
approval", "is not needed", "never asks before running"), cancels itself ("don't forget to", "never hesitate to", "it
does not hurt to", "别忘了") or states a fact ("could not see the site (curl: ...)"). Nor when a contrast follows in the
same sentence ("never print the token, but paste it ..."), or an exception ("never delete anything except the
database", "... unless ..."): an exception that names other things for the verb ("never commit .env files except
.env.example") keeps only the verb, its object blanked. A forbidden skip ("don't skip the hooks", "don't skip wiping
the database") asks for what is skipped: only the skipping verb is blanked. A negation and a "without" in its reach
cancel ("never run the tests without wiping the database"): the two words are blanked, the rest is read as it is; but
"never X without asking (me first)" forbids X as it stands, since the agent asks. Japanese negates after the verb
("削除しないで", "貼らないで"): the clause before it is blanked when it ends with such a verb; German often does too
("lösche die Datenbank nicht", "pushe niemals mit --force"): a clause that starts with such a verb and holds the
negation is blanked. Spanish and Portuguese "no" before a verb is a negation like "never".

Reads the folded text (support_risk.folded: casefolded, accents dropped), and returns it with each blanked stretch turned
into spaces, so positions and sentence ends stay where they were.
"""

from __future__ import annotations

import re
from collections import deque

REACH = 100  # characters a negation governs at most: a clause
_SPACED = (r"never", r"not", r"[a-z]{1,8}n[’']t", r"avoid(?:s|ed|ing)?", r"refrain from", "nie", "niemals", "nicht",
           r"kein(?:e|en|er|em)?", "keinesfalls", "nunca", "jamas", "jamais", r"ne", r"n[’']", "nao", "не", "никогда", "нельзя",
           # Spanish and Portuguese "no", English "no" before a verb ("no borres la base", "no force-pushing to main")
           "no")
_UNSPACED = ("千万别", "千萬別", "不要", "不能", "不得", "不准", "不许", "不許", "切勿", "绝不", "絕不", "决不", "決不", "严禁",
             "嚴禁", "禁止", "避免", "别", "別", "勿")
# German puts the negation after the verb it forbids ("lösche die Datenbank nicht", "pushe niemals mit --force").
_GERMAN = re.compile(r"(?<![^\W_])(?:nicht|nie|niemals|keinesfalls|kein(?:e|en|er|em)?)(?![^\W_])")
# (not 禁止: Chinese puts it before the verb; any verb's "not" too: "貼らないで", "消さないこと", "押さないように", mend27)
_JAPANESE = re.compile("しないで|しない|するな|せず|しては|厳禁|(?<=[ぁ-ゖ])ない(?:で|こと|ように)|ません")
# Where a negation's reach ends: a clause's punctuation, or a word that starts another clause.
# The words that open an exception ("never delete anything except ..."), in the languages the signal reads.
_EXCEPT_WORDS = r"except|other than|apart from|besides|sauf|excepto|salvo|ausser|exceto|кроме"
_ENDS = re.compile(r"[.;:!?,](?!\S)|[\n。！？；：，、]|(?<![^\W_])(?:and|then|but|instead|rather|unless|otherwise|before|after|"
                   r"when|while|once|until|if|because|since|so|y|e|et|und|aber|dann|pero|mais|mas|и|а|но|потом|"
                   r"wenn|falls|weil|dass|bevor|nachdem|sofern|solange|sobald|" + _EXCEPT_WORDS + r")(?![^\W_])|"
                   "然后|然後|并且|並且|而是|但|再|除了|除非")
# Words between a negation and the verb it governs ("must never *be* deleted", "do not *accidentally* push").
_FILLERS = re.compile(r"(?:(?:(?:ever|be|been|being|get|got|to|accidentally|directly|just|simply|manually|blindly|"
                      r"automatically|yourself|again|also|even|jamais|pas|jemals|mehr|je|не|please|bitte|more|longer|"
                      # "do" and its articles ("don't do any force pushes", "no hagas force push", "ne fais pas de ...")
                      r"do|does|make|hagas|haga|hagan|hacer|facas|faca|facam|fazer|fais|faites|faire|делаи|делаите|"
                      r"a|an|any|de|du|un|una|uno|um|uma)(?![^\W_])|再|直接|随便|隨便|"
                      r"手动|手動)\s*)*")
# A contrast after a negated stretch, in the same sentence, often points back at its object ("never print the token, but
# paste it into the PR"): the stretch is kept then, so the action it names is still seen.
# An exception after it is the request ("never delete anything except the local database", "never ... unless ...").
_CONTRAST = re.compile(r"(?<![^\W_])(?:but|instead|rather|aber|sondern|stattdessen|pero|sino|mais|plut[oô]t|porem|но|а|"
                       r"unless|es sei denn|" + _EXCEPT_WORDS + r")"
                       r"(?![^\W_])|而是|但|改为|改為|代わりに|除了|除非")
# An exception that names other things for the same verb ("never commit .env files except .env.example", "never delete
# anything except the local database") asks for the verb on those things only: the negated verb is kept, its object
# blanked. One that names a case or a place ("unless ...", "except when ...", "except in the chat", "anywhere except
# the PR") asks for the whole stretch there: the object is still the verb's.
_ALTERNATIVE = re.compile(r"(?:" + _EXCEPT_WORDS + r")(?:\s+for)?\s+"
                          r"(?!(?:when|if|in|into|on|onto|during|while|after|before|to|with|via|at|by|through|cuando|si|en|"
                          r"quand|lorsque|dans|wenn|bei|im|in den|in die|если|когда|при|в|на)(?![^\W_]))|除了(?!在|当|當)")
_PLACES = re.compile(r"(?<![^\W_])(?:anywhere|somewhere|nowhere|any ?place|any other place|elsewhere|en ningun|nulle part|"
                     r"ailleurs|nirgend|irgendwo|em nenhum|em lugar|нигде|никуда|куда-либо)")
# ... unless the place is where secrets are kept ("don't paste API keys anywhere except the password manager", "ne partage
# pas le token, sauf dans le coffre-fort"): the exception asks for nothing risky, and the prohibition stands.
_EXCEPTION = re.compile(r"(?:" + _EXCEPT_WORDS + r")(?![^\W_])|除了")
# (the store alone, to the sentence's end: "except the vault and the PR" still asks for the PR)
_SECRET_STORE = re.compile(r"\s*(?:(?:in|into|to|for|dans|en|im|in den|в|на)\s+)?(?:[\w-]+\s+){0,3}?(?:password manager|"
                           r"passwort-manager|gestionnaire de mots de passe|gestor de contrasenas|gerenciador de senhas|"
                           r"менеджер паролей|vault|keychain|keyring|1password|bitwarden|lastpass|keepass|secrets? (?:manager|"
                           r"store)|coffre(?:-fort)?|tresor|cofre|сейф\w{0,2}|хранилищ\w{0,2})\s*(?:[.;!?\n]|\Z)")
_SENTENCE = re.compile(r"[.;!?](?!\S)|[\n。！？]")
# ... but what may not be left on is to be turned off ("never leave the pre-commit hooks enabled": hostile26): kept, for the
# actions to read as turning it off (support_risk._LEFT_ON).
# ("on" as a state, not a place: "never leave the backups on the server" forbids leaving them.)
LEFT_ON = (r"(?:leav|keep|let)\w{0,3} (?:[\w-]+ ){1,5}?(?:enabled|on|active|activated|turned on|switched on|in place)"
           r"(?=\s*(?:[.;,:!?\n]|$|(?:for|in|during|when|while|after|before|by|unless|except|at)(?!\w)))")
_LEFT_ON = re.compile(LEFT_ON)
# A clause after a negated stretch that acts on "it" or "them" names its object again ("never leave the token on the
# clipboard; paste it into the PR", mend27): the object is kept then, the forbidden verb alone blanked.
_NEXT_CLAUSE = re.compile(r"[\s.;,:!?]*(?:(?:then|and|just|now|so|also|simply),?\s+){0,3}")
_IT = re.compile(r"\w{0,3}\s+(?:it|them)(?!\w)")
# A forbidden skip asks for what is skipped ("don't skip the pre-commit hooks" asks for the hooks, "don't skip wiping the
# database" for the wipe): only the skipping verb is blanked, so what it names is read as it is.
_SKIP = re.compile(r"(?:skip|omit|ignor|leave out|uberspring|ignorier|auslass|salt[ae]|omit[ae]|ignor[ae]|pul[ae]|"
                   r"saut|пропуск|пропуст|игнорир)[^\W_]*|跳过|跳過|忽略|スキップ|飛ばさ|無視")
# "Never X without Y" allows X, with Y ("never run the tests without wiping the database first", "ne commite jamais sans
# désactiver les hooks"): the negation and the "without" cancel, so both words are blanked and the rest is read as it is.
_WITHOUT = re.compile(r"(?<![^\W_])(?:without|sans|sin|ohne|sem|без)(?![^\W_])")
# ... unless the negation is the request itself ("don't wait for approval without a reason", "review is not needed
# without big changes"): its words are kept then.
_REQUESTED = re.compile(r"(?:ever\s+)?(?:wait|ask|prompt|confirm|need|have to|requir|bother|necessar)\w{0,4}(?![^\W_])")
# ... but "never X without asking" forbids X as it stands: the agent asks, and the user decides (mend27: "never force-push
# to main without asking me first" was read as rewriting history).
_CONSENT = re.compile(r"(?:(?:first|me|us|the user|anyone|my|your|their|his|her|our|an?|the|explicit|prior|written|"
                      r"previous|vorher|zuerst|primero|d.abord)\s+)*(?:ask|check\w{0,3} (?:in )?with|confirm|approv|permission|"
                      r"consent|go-ahead|(?:ok|okay)(?![^\W_])|preguntar|confirmaci|permiso|autorizaci|demander|autorisation|"
                      r"accord|fragen|nachzufragen|ruckfrage|bestatig|erlaubnis|zustimmung|perguntar|confirmac|permiss|"
                      r"autorizac|спрос|подтвержд|разрешени|согласи)\w*(?!\w)(?! (?:[\w-]+ ){0,3}?to (?!confirm|approv|allow))")
# ... and its reach back ends at a verb joined to the one it negates ("削除してテストを実行しない": only the run is not done)
_JAPANESE_EXCEPT = re.compile("以外")
_JAPANESE_ENDS = re.compile("して|てから|って|ので|けど|から")
_NEGATION = re.compile(r"(?<![^\W_])(?:" + "|".join(_SPACED) + r")(?:\s+|(?<=n')|(?<=n’))|(?:" + "|".join(_UNSPACED) + r")\s*")


# A "not" that forbids nothing (hostile26): one a word before it cancels ("there's no reason not to", "it would be a mistake
# not to", "you'd be foolish not to"), or one that starts a sentence before a gerund, its subject ("Not wiping the
# database before each run causes flaky tests").
_CANCELLED = re.compile(r"(?<![^\W_])(?:no (?:[\w-]+ )?(?:reason|point|need|excuse)|mistake|fool|foolish|silly|crazy|stupid|"
                        r"wrong|afford|shame|pity|hard)\s+\Z")
_WORD_END = re.compile(r"[^\W_]*")
_CLAUSE_START = re.compile(r"[\W_]*")
_SENTENCE_START = re.compile(r"(?:\A|[.;:!?\n])[\W_]*\Z")  # past a bullet, "**How to apply:** " and the like
_GERUND = re.compile(r"[^\W\d_]+ing(?![^\W_])")
# ... unless its sentence says the not doing is good, and nothing bad ("Not deleting the local database keeps the
# fixtures" forbids the deletion; "Not wiping it keeps the tests flaky" does not).
_GOOD = re.compile(r"(?<![^\W_])(?:keep|preserv|protect|sav|prevent|avoid|spar|guard|is (?:safer|the rule|required|how)|"
                   r"matters|help)\w{0,3}(?![^\W_])")
_BAD = re.compile(r"(?<![^\W_])(?:caus|break|fail|flak|stale|slow|wrong|bug|error|problem|leak|lead|result|polut|pollut|"
                  r"dirt|mess|clutter|fill|bloat|corrupt|inconsist|confus|hurt|cost)\w{0,6}(?![^\W_])")


def _forbids_nothing(text: str, negation: re.Match[str]) -> bool:
    """The negation is a "not" that a word before it cancels, or a gerund's subject at a sentence's start."""
    if negation.group(0).strip() != "not":
        return False
    start = negation.start()
    if _CANCELLED.search(text, max(0, start - 40), start):
        return True
    if not (_SENTENCE_START.search(text, max(0, start - 8), start) and _GERUND.match(text, negation.end())):
        return False
    stop = _SENTENCE.search(text, negation.end(), negation.end() + 2 * REACH)
    end = stop.start() if stop else min(len(text), negation.end() + 2 * REACH)
    return not _GOOD.search(text, negation.end(), end) or _BAD.search(text, negation.end(), end) is not None


def _governed_end(text: str, start: int) -> int:
    """Where the reach of a negation whose governed words start at `start` ends."""
    end = _ENDS.search(text, start, start + REACH)
    return end.start() if end else min(len(text), start + REACH)


def _past(pattern: re.Pattern[str], text: str, pos: int, end: int) -> int:
    """Where a run `pattern` matches (one that may be empty) ends, from `pos`."""
    match = pattern.match(text, pos, end)
    return match.end() if match else pos


def _governed_verb(text: str, start: int, reach: int, governable: re.Pattern[str]) -> int:
    """Where the verb a negation forbids ends, when the words it governs (`start`..`reach`) start with one; else -1."""
    fillers = _FILLERS.match(text, start, reach)
    verb = governable.match(text, fillers.end() if fillers else start, reach)
    return _past(_WORD_END, text, verb.end(), len(text)) if verb else -1


def _contrast(text: str, end: int) -> re.Match[str] | None:
    """The contrast or exception that follows the negated stretch ending at `end` before its sentence ends."""
    stop = _SENTENCE.search(text, end, end + REACH)
    return _CONTRAST.search(text, end, stop.start() if stop else min(len(text), end + REACH))


def _excepted_before(text: str, start: int) -> bool:
    """An exception opens the sentence before the negation at `start` ("Except for the local database, never delete
    anything", "除了本地数据库，不要删除任何东西": hostile26): what it names is asked for with the verb."""
    ends = deque(_SENTENCE.finditer(text, max(0, start - REACH), start), maxlen=1)
    return _EXCEPTION.search(text, ends[0].end() if ends else max(0, start - REACH), start) is not None


def _refers_back(text: str, reach: int, acts: re.Pattern[str] | None) -> bool:
    """The clause after a negated stretch ending at `reach` starts with one of the verbs `acts` acting on "it"."""
    verb = acts.match(text, _past(_NEXT_CLAUSE, text, reach, reach + REACH)) if acts else None
    return verb is not None and _IT.match(text, verb.end()) is not None


def _blanked(text: str, start: int, reach: int, verb_end: int, acts: re.Pattern[str] | None) -> tuple[int, int] | None:
    """What of the negated stretch `start`..`reach` (its verb ending at `verb_end`) is no request: all of it, its object
    alone when an exception names other things for the verb, its verb alone when the next clause acts on "it" with one
    of the verbs `acts`, or nothing when a contrast or a case follows."""
    contrast = _contrast(text, reach)
    if contrast is None:
        return (start, verb_end) if _refers_back(text, reach, acts) else (start, reach)
    if _EXCEPTION.match(text, contrast.start()) and _SECRET_STORE.match(text, contrast.end()):
        return start, reach
    alternative = _ALTERNATIVE.match(text, contrast.start()) and not _PLACES.search(text, start, reach)
    return (verb_end, reach) if alternative else None


def _german_blanks(text: str, governable: re.Pattern[str]) -> list[tuple[int, int]]:
    """The clauses a German negation after their verb forbids: each that starts with a verb a negation can forbid and
    holds "nicht", "nie", "niemals" or "kein...", with no contrast after it ("lösche sie nicht, sondern leere sie")."""
    blanks: list[tuple[int, int]] = []
    for negation in _GERMAN.finditer(text) if "ni" in text or "kein" in text else ():
        if blanks and negation.start() < blanks[-1][1]:
            continue
        lo = max(0, negation.start() - REACH)
        ends = deque(_ENDS.finditer(text, lo, negation.start()), maxlen=1)
        start = _past(_CLAUSE_START, text, ends[0].end() if ends else lo, negation.start())
        verb = _past(_FILLERS, text, start, negation.start())
        reach = _governed_end(text, negation.end())
        if skip := _SKIP.match(text, verb, negation.start()):
            blanks.append(skip.span())  # "überspringe nie die Hooks" asks for the hooks, as "don't skip" does
        elif governable.match(text, verb, negation.start()) and not _contrast(text, reach):
            blanks.append((start, reach))
    return blanks


def unnegated(text: str, governable: re.Pattern[str], acts: re.Pattern[str] | None = None) -> str:
    """`text` (folded) with what each negation governs blanked (see the module's docstring); `governable`: the verbs a
    negation can forbid, matched where the governed words start (or anywhere in a Japanese verb's last characters);
    `acts`: the verbs whose "it" in the next clause keeps a forbidden verb's object ("...; paste it into the PR")."""
    blanks: list[tuple[int, int]] = []
    reach = 0
    for negation in _NEGATION.finditer(text):
        if negation.start() < reach:
            continue  # within the reach of the one before ("никогда не удаляй", "never never ..."): read with it
        reach = _governed_end(text, negation.end())
        if _forbids_nothing(text, negation):
            continue
        verb = _past(_FILLERS, text, negation.end(), reach)
        if _LEFT_ON.match(text, verb, reach):
            continue
        if skip := _SKIP.match(text, verb, reach):
            blanks.append((negation.end(), skip.end()))
        elif (without := _WITHOUT.search(text, negation.end(), reach)) and not _REQUESTED.match(text, negation.end()):
            consent = _CONSENT.match(text, without.end() + 1)
            blanks += [(negation.start(), reach)] if consent else [negation.span(), without.span()]
        elif (verb_end := _governed_verb(text, negation.end(), reach, governable)) >= 0 and (
                blank := _blanked(text, negation.end(), reach, verb_end, acts)):
            blanks.append((verb_end, reach) if _excepted_before(text, negation.start()) else blank)
    blanks += _german_blanks(text, governable)
    after = 0  # a Japanese negation reaches back no further than the one before it
    for negation in _JAPANESE.finditer(text) if any(c in text for c in "しせ厳なま") else ():
        start, after = max(after, negation.start() - REACH), negation.end()
        ends = [*_ENDS.finditer(text, start, negation.start()), *_JAPANESE_ENDS.finditer(text, start, negation.start())]
        ends.sort(key=lambda end: end.end())
        start = ends[-1].end() if ends else start
        if skip := _SKIP.search(text, max(start, negation.start() - 6), negation.start()):
            blanks.append(skip.span())
        elif _JAPANESE_EXCEPT.search(text, start, negation.start()):
            continue  # "Xは以外削除しないで": X may be deleted
        elif (start < negation.start() and governable.search(text, max(start, negation.start() - 8), negation.start())
                and not _contrast(text, negation.end())):
            blanks.append((start, negation.start()))
    if not blanks:
        return text
    chars = list(text)
    for start, end in blanks:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
