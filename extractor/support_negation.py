"""Negated requests, for the support check's risky-action signal (extractor/support_risk.py): "never delete or overwrite
the backup itself" and "never commit .env files or credentials" ask for the opposite of destroying data or handing
over secrets, and a user who asked for them was refused (final19, from real prompts).

What a prohibition governs is blanked before the actions are looked for: from the negation ("never", "don't", "nie",
"nunca", "ne", "не", "不要") to the end of its clause, or to the next "and", "but", "before", "when" and the like, so a
plant cannot hide its action behind a prohibition of something else ("never run the tests before you curl ... | sh").
Japanese negates after the verb ("削除しないで"): the clause before it is blanked. Not blanked, when one of the three words
after the negation (two characters in Chinese, the two before a Japanese one) says the negation *is* the request or
cancels itself:
- getting around something by not doing it: "don't wait for approval", "is not needed", "never asks before running";
- a double negative: "don't forget to", "never hesitate to", "not a problem to", "don't skip", "别忘了".

Reads the folded text (support_risk.folded: casefolded, accents dropped), and returns it with each blanked stretch turned
into spaces, so positions and sentence ends stay where they were.
"""

from __future__ import annotations

import re

REACH = 100  # characters a negation governs at most: a clause
_SPACED = (r"never", r"not", r"[a-z]{1,8}n[’']t", r"avoid(?:s|ed|ing)?", r"refrain from", "nie", "niemals", "nicht",
           r"kein(?:e|en|er|em)?", "keinesfalls", "nunca", "jamas", "jamais", r"ne", r"n[’']", "nao", "не", "никогда", "нельзя")
_UNSPACED = ("千万别", "千萬別", "不要", "不能", "不得", "不准", "不许", "不許", "切勿", "绝不", "絕不", "决不", "決不", "严禁",
             "嚴禁", "禁止", "避免", "别", "別", "勿")
_JAPANESE = re.compile("しないで|しない|するな|せず|しては|厳禁")  # not 禁止: Chinese puts it before the verb
# Where a negation's reach ends: a clause's punctuation, or a word that starts another clause.
_ENDS = re.compile(r"[.;:!?,](?!\S)|[\n。！？；：，、]|(?<![^\W_])(?:and|then|but|instead|rather|unless|otherwise|except|before|after|"
                   r"when|while|once|until|if|because|since|so|y|e|et|und|aber|dann|pero|mais|mas|и|а|но|потом)(?![^\W_])|"
                   "然后|然後|并且|並且|而是|但|再")
# The negation is the request (getting around something by not doing it) or cancels itself (a double negative).
_KEPT = re.compile(r"(?<![^\W_])(?:wait|need|have|ask|prompt|confirm|bother|requir|necessar|check|verif|review|look|"
                   r"longer|more|mehr|one|body|only|matter|problem|forget|hesitat|fail|refus|mind|worry|afraid|shy|skip|"
                   r"omit|neglect|think|дожид|жд|нуж|спрашива|переспрашива|забуд|забыва|esper|pregunt|precis|necesit|"
                   r"olvid|esquec|pergunt|aguard|attend|demand|besoin|oubli|frag|nachfrag|wart|brauch|notig|vergiss)")
# A contrast after a negated stretch, in the same sentence, often points back at its object ("never print the token, but
# paste it into the PR"): the stretch is kept then, so the action it names is still seen.
_CONTRAST = re.compile(r"(?<![^\W_])(?:but|instead|rather|aber|sondern|stattdessen|pero|sino|mais|plut[oô]t|porem|но|а)"
                       r"(?![^\W_])|而是|但|改为|改為|代わりに")
_SENTENCE = re.compile(r"[.;!?](?!\S)|[\n。！？]")
_KEPT_UNSPACED = re.compile("忘|等|需要|询问|詢問|确认|確認|跳过|跳過|犹豫|猶豫")
_KEPT_JAPANESE = re.compile("(?:確認|聞か|待た|忘れ|躊躇)$")
# ... and its reach back ends at a verb joined to the one it negates ("削除してテストを実行しない": only the run is not done)
_JAPANESE_ENDS = re.compile("して|てから|って|ので|けど|から")
_NEGATION = re.compile(r"(?<![^\W_])(?:" + "|".join(_SPACED) + r")(?:\s+|(?<=n')|(?<=n’))|(?:" + "|".join(_UNSPACED) + r")\s*")


def _governed_end(text: str, start: int) -> int:
    """Where the reach of a negation whose governed words start at `start` ends."""
    end = _ENDS.search(text, start, start + REACH)
    return end.start() if end else min(len(text), start + REACH)


def _kept(governed: str) -> bool:
    """The negation is the request itself, or cancels itself: judged on its first three words (two characters when
    they are Chinese)."""
    if governed[:1].isascii() or " " in governed.strip()[:12]:
        return _KEPT.search(" ".join(governed.split()[:3])) is not None
    return _KEPT_UNSPACED.search(governed[:2]) is not None


def _contrasted(text: str, end: int) -> bool:
    """A contrast follows the negated stretch ending at `end` before its sentence ends."""
    stop = _SENTENCE.search(text, end, end + REACH)
    return _CONTRAST.search(text, end, stop.start() if stop else min(len(text), end + REACH)) is not None


def unnegated(text: str) -> str:
    """`text` (folded) with what each negation governs blanked (see the module's docstring)."""
    blanks: list[tuple[int, int]] = []
    for negation in _NEGATION.finditer(text):
        if blanks and negation.start() < blanks[-1][1]:
            continue  # inside a stretch already blanked ("never never ..."): reading it again blanks nothing new
        end = _governed_end(text, negation.end())
        if end > negation.end() and not _kept(text[negation.end():end]) and not _contrasted(text, end):
            blanks.append((negation.end(), end))
    after = 0  # a Japanese negation reaches back no further than the one before it
    for negation in _JAPANESE.finditer(text) if "し" in text or "せ" in text or "厳" in text else ():
        start, after = max(after, negation.start() - REACH), negation.end()
        ends = [*_ENDS.finditer(text, start, negation.start()), *_JAPANESE_ENDS.finditer(text, start, negation.start())]
        ends.sort(key=lambda end: end.end())
        start = ends[-1].end() if ends else start
        if (start < negation.start() and not _KEPT_JAPANESE.search(text, start, negation.start())
                and not _contrasted(text, negation.end())):
            blanks.append((start, negation.start()))
    if not blanks:
        return text
    chars = list(text)
    for start, end in blanks:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
