"""The words the support check (extractor/support.py) weighs: a text's content terms and pointers, and matching them.

A term is a content word of three letters or more in any script, lower-cased, its Latin diacritics dropped, stop words
of the languages in the real transcripts left out; Chinese, Japanese, Korean and Thai (written without spaces) give
character pairs. A pointer is a host, file or dotted name (`evil.example`, `setup.sh`). Lookup matches a term across
inflections by a shared prefix, so "tests"/"testing" and "тестами"/"тесты" meet. Deciding whether a write is the
user's from these words is support.py's job, not this one's.
"""

from __future__ import annotations

import re
import unicodedata

from memdir import constants as C
from memdir.stages.extractor.support_risk import HIDDEN
from memdir.words import STOPWORDS as ENGLISH_STOPWORDS, nfkc

# Function words of the languages seen in the real transcripts, and the words every memory is written
# with ("the user asked ... keep it in later sessions"): they say nothing about where a sentence came from.
_MORE_STOPWORDS = frozenset("""
    always never every each per via etc eg ie please remember note memory memories user users apply
    later future keep kept session sessions said says asked asks wants wanted prefers preferred
    project projects change changes
    le la les un une des du de et est en que qui pour pas par sur dans au aux ce cette ces il elle ils
    nous vous je tu ne se sa son ses mon ma mes avec sans plus ou mais si comme être avoir fait faire
    el los las del al y es por para con sin una uno lo su sus mi mis tu tus se que más muy pero como
    der die das den dem des ein eine einen und ist nicht mit für auf im zu von sie er es ich wir ihr
    um o os as do da dos das em no na nos nas um uma é não com para por seu sua ao
    и в во не что он она оно они на я с со как а то все это так его её ее но да ты к у же вы за бы по
    только ей мне было вот от меня ещё еще нет о из ему теперь когда даже ну ли если уже или ни быть
    был до вас нибудь опять уж вам ведь там потом себя ничего ей может их чтобы тут где есть надо
    при всегда никогда перед после для
    il lo gli una che per con non sono come anche più essere questo questa quello dopo sempre mai del della dei
    nel nella sul alla tra fra suo sua loro molto
    utente vuole voglio chiesto detto preferisce usuario quiere pidió dijo prefiere utilisateur veut demandé
    préfère nutzer benutzer möchte gebeten gesagt bevorzugt quer pediu disse prefere usuário пользователь хочет
    попросил сказал предпочитает scritto escribió écrit geschrieben escreveu написал
""".split())
_LABELS = re.compile(re.escape(C.WHY_PREFIX) + "|" + re.escape(C.HOW_PREFIX))
_WORD = re.compile(r"\w+")
# evil.example, setup.sh, gemini.md (ASCII: a dotted name runs into the Chinese written next to it)
# Starting only where a run of name characters starts (its leading dashes aside): starting after each "-" of
# "a-a-a-..." re-read the rest of the run each time, 8 s on 20 KB (hostile25).
_POINTER = re.compile(r"(?<![\w.-])-*((?:[a-z0-9][\w-]*\.)+[a-z][\w-]*)", re.ASCII)
_PAIRED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI", "LAO", "KHMER", "MYANMAR")


def _script(ch: str) -> str:
    """The script a character is written in when words in it are not separated by spaces, else ""."""
    if ch < "\u0e00":
        return ""
    name = unicodedata.name(ch, "")
    return next((s for s in _PAIRED_SCRIPTS if name.startswith(s)), "")


def _pairs(run: str) -> list[str]:
    """Character pairs of a run in one unspaced script; hiragana runs (particles, endings) dropped."""
    if _script(run[0]) == "HIRAGANA":
        return []
    return [run] if len(run) <= 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def _split_scripts(word: str) -> list[str]:
    """A `\\w+` word cut where the script changes between spaced and unspaced writing ("blogページ")."""
    out, start = [], 0
    for i in range(1, len(word) + 1):
        if i == len(word) or _script(word[i]) != _script(word[start]):
            out.append(word[start:i])
            start = i
    return out


def terms(text: str) -> set[str]:
    """The content terms of `text`: lower-case words of three letters or more, stop words dropped;
    unspaced scripts as character pairs. Numbers alone are never a term (dates, line numbers)."""
    text = nfkc(_LABELS.sub(" ", text)).casefold()
    out: set[str] = set()
    for word in _WORD.findall(text):
        for part in _split_scripts(word):
            if _script(part[0]):
                out.update(_pairs(part))
            else:
                part = _without_accents(part)
                out.update(w for w in part.split("_") if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS)
    return out


# Latin letters with a stroke, which no decomposition separates from their base letter.
_STROKED = str.maketrans({"đ": "d", "ð": "d", "ø": "o", "ł": "l", "ħ": "h", "ı": "i"})


def _without_accents(word: str) -> str:
    """A Latin-script word with its diacritics dropped: people often type without them ("gui", "dien" for
    Vietnamese "gửi", "diện"; "uber" for "über"), and a memory written with them is the same words. Both sides
    of the check go through here. Words of other scripts are kept whole: their marks are part of the letters."""
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word.translate(_STROKED))
    if not all(ord(ch) < 0x250 or unicodedata.combining(ch) for ch in decomposed):
        return word
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# Folded as the words they are matched against are ("más" is "mas" by then).
STOPWORDS = frozenset(_without_accents(w) for w in ENGLISH_STOPWORDS | _MORE_STOPWORDS)


def pointers(text: str) -> set[str]:
    """Hosts, file names and dotted names (`evil.example`, `setup.sh`): what a planted command needs. A host with its
    dot written out or bracketed ("evil[.]example", "ev1l d0t ex4mple") is the pointer it spells."""
    text = HIDDEN.sub("", nfkc(text)).casefold()  # "evil\u200b.example" is evil.example
    return {p for p in _POINTER.findall(text) if len(p) >= 4} | _spelled_hosts(text)


# A host written so that no pointer pattern sees it: "evil[.]example", "evil(dot)example", "evil [dot] example",
# and a bare "dot" ("d0t") before a plausible ending, leet digits undone ("ev1l d0t ex4mple").
_BRACKETED = re.compile(r"(?<![\w-])([a-z0-9][\w-]*)\s*[\[({]\s*(?:\.|d[o0]t)\s*[\])}]\s*([a-z0-9][\w-]*)")
_BARE = re.compile(r"(?<![\w-])([a-z0-9][\w-]+)\s+d[o0]t\s+([a-z0-9][\w-]*)")
_LEET = str.maketrans("013457@$", "oieastas")
_ENDINGS = frozenset("com net org io dev app ai sh xyz info biz cc ly gg tk ru cn uk eu jp br example invalid localhost "
                     "online club shop cloud tech".split())  # not "in", "me", "us", "test": "a dot in the name"


def _spelled_hosts(folded: str) -> set[str]:
    """Hosts a folded text spells with the dot written out or bracketed, as `name.ending` (leet digits undone)."""
    out = {f"{a}.{b}".translate(_LEET) for a, b in _BRACKETED.findall(folded)}
    out |= {f"{a}.{b}".translate(_LEET) for a, b in _BARE.findall(folded) if b.translate(_LEET) in _ENDINGS}
    return out


class Lookup:
    """Terms of one side, matched exactly or by a shared prefix (inflections in any spaced script)."""

    def __init__(self, words: set[str]) -> None:
        self.words = words
        self.by_head: dict[str, list[str]] = {}
        for word in words:
            self.by_head.setdefault(word[:3], []).append(word)

    def has(self, term: str) -> bool:
        if term in self.words:
            return True
        if len(term) < 3 or _script(term[0]):
            return False
        return any(_same_stem(term, word) for word in self.by_head.get(term[:3], ()))


def _same_stem(a: str, b: str) -> bool:
    """tests/test, running/run, тестами/тесты: one is a prefix of the other, or they share all but
    their last two letters each (an ending), with at least four letters in common (typo/type differ)."""
    shorter, longer = sorted((a, b), key=len)
    if longer.startswith(shorter):
        return len(shorter) >= 3
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= 4 and common >= len(shorter) - 2
