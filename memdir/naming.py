"""Names for memories: the words a person would give them, and file-name-safe slugs in any script.

A memory memdir names itself (`memdir remember` without --name, the offline extractor, promoted
decisions) is named by its distinctive words: the tools, products and nouns it is about, never the
filler around them ("never use npm in this repo, use pnpm" is "Use pnpm, not npm", not "Never use
npm in this repo, use…"). Words are never cut in half to fit a limit: fewer words are taken.

Slugs keep the letters of every script (Claude Code's model names files `project_デプロイ手順.md`
too): Latin letters with accents fold to ASCII as before ("café" -> "cafe"), other letters stay as
they are, NFC-normalised; anything else (punctuation, path separators, control and bidi characters)
separates words. A slug is bounded in characters and in UTF-8 bytes, so a file name fits every
filesystem.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.words import STOPWORDS

NAME_WORDS = 5  # distinctive words in a name memdir gives; a person's names are short
LONG_WORD_CHARS = 16  # a run longer than this (a script written without spaces) is cut here in a name

# Words that carry no subject: what every rule says ("always use ... in this repo").
FILLER = STOPWORDS | frozenset(
    """use uses using used always never please make sure instead rather here every repo repository project
    codebase code really actually just also need needs want wants should must keep approach note remember
    mind thing stuff etc ok okay don't dont do not no can't cannot won't isn't let let's lets user user's
    e.g i.e eg ie vs i'd i'm im i've i'll we'd we're we've we'll you're it's that's there's think guess maybe
    probably fine sure yes yeah great well honest honestly""".split()
)
_NEGATED_START = re.compile(r"^\s*(?:no[,.!]?\s+|actually,?\s+|please\s+)*(?P<neg>never|don'?t|do not|avoid|stop)\b",
                            re.I)
_TERM = r"(?:the\s+|a\s+|an\s+)?(?P<{0}>[^\W_][\w.+#@/-]*[\w+#]|[^\W_])"
_VERB = r"(?P<verb>use|prefer|run|pick|choose|go with|switch to|install)"
# "use pnpm instead of npm", "prefer tabs over spaces", "use pnpm, not npm"
_PREFER = re.compile(_VERB + r"\s+" + _TERM.format("new") + r",?\s+(?:instead of|rather than|over|not)\s+"
                     + _TERM.format("old"), re.I)
# "never use npm in this repo, use pnpm", "don't use npm anymore, we moved to pnpm"
_REPLACE = re.compile(r"\b(?:never|don'?t|do not|stop|avoid|no longer)\s+(?:using\s+|use\s+|run\s+|running\s+)?"
                      + _TERM.format("old") + r"[^.;!?]*?[,;]\s*(?:and\s+|but\s+|instead\s+|we\s+)?"
                      r"(?:use|prefer|run|go with|switch(?:ed)? to|mov(?:e|ed) to|migrat(?:e|ed) to)\s+"
                      + _TERM.format("new"), re.I)
_WORD = re.compile(r"[^\W_](?:[\w'’.+#@/-]*[\w+#])?")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://(?P<host>[^\s/:?#]+)[^\s)>\]\"']*", re.I)
_RATIONALE = re.compile(r"\s*(?:;|\b(?:because|since|so that|the reason is)\b).*$", re.I)
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|incl|approx)\.", re.I)  # not the end of a sentence
_HIRAGANA = re.compile(r"[\u3041-\u309f]+")


# --- slugs: file names and Claude Code's kebab-case names -----------------------------
_ASCII_OR_NOT = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
_ASCII_NOT_WORD = re.compile(r"[^a-z0-9]")


# Code points HFS+ leaves out of a name when it compares names (git's is_hfs_dotgit skips the same ones).
_HFS_IGNORED = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                      "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"))


def on_disk(name: str) -> str:
    """`name` as a case-insensitive disk compares it (macOS's by default, Windows'): case-folded, in one Unicode
    normal form. Two names with the same key reach the same file there, so a check that guards a name (MEMORY.md,
    team/) compares these keys: `memory.md` or `Team/` got past an exact comparison to the very file it protects.
    So did what else those disks read past: the zero-width marks HFS+ ignores, and on Windows a stream after `:`
    (`MEMORY.md::$DATA` is the file's own data) and a name's trailing dots and spaces (`team.` is team/)."""
    name = name.translate(_HFS_IGNORED).split(":", 1)[0].rstrip(". ")
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def slug_words(text: str) -> list[str]:
    """The lower-case words of `text` that may appear in a file name, in any script."""
    out: list[str] = []
    kept = False  # the previous character was kept: a combining mark after it belongs to the word
    for run in _ASCII_OR_NOT.findall(unicodedata.normalize("NFC", text)):
        if run[0] < "\x80":  # a run of ASCII in one step: every save slugs every other memory's name
            out.append(_ASCII_NOT_WORD.sub(" ", run.lower()))
            kept = run[-1].isalnum()
        else:
            kept = _slug_chars(run, kept, out)
    return unicodedata.normalize("NFC", "".join(out)).split()


def _slug_chars(run: str, kept: bool, out: list[str]) -> bool:
    """Append the slug form of each non-ASCII character of `run`; returns whether the last was kept."""
    for ch in run:
        folded = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if folded.isascii() and folded.isalnum():  # é -> e, ﬁ -> fi, fullwidth Ａ -> a: as before
            out.append(folded.lower())
            kept = True
            continue
        category = unicodedata.category(ch)
        kept = category[0] in "LN" or (category[0] == "M" and kept)
        out.append(ch.lower() if kept else " ")
    return kept


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def bounded(words: list[str], sep: str, max_chars: int = C.SLUG_MAX_CHARS,
            max_bytes: int = C.SLUG_MAX_BYTES) -> str:
    """Whole words joined by `sep` within both limits; only a first word longer than them is cut."""
    out = ""
    for word in words:
        joined = f"{out}{sep}{word}" if out else word
        if len(joined) > max_chars or _utf8(joined) > max_bytes:
            break
        out = joined
    if not out and words:  # one word longer than the limits: cut between two of its characters
        out = words[0][:max_chars]
        while _utf8(out) > max_bytes:
            out = out[:-1]
    return out


@functools.lru_cache(maxsize=8192)  # every save compares its name with every other memory's
def slug(text: str, sep: str = "_") -> str:
    """`Deploy: prod` -> `deploy_prod`, `デプロイ手順` -> `デプロイ手順`; "memory" when nothing is left."""
    return bounded(slug_words(text), sep) or "memory"


# --- names a person would give --------------------------------------------------------
def _first_sentence(text: str) -> str:
    flat = _ABBREVIATION.sub(lambda m: m.group().replace(".", "\x00"), " ".join(text.split()))
    match = re.match(r"(.+?[.!?])(\s|$)|(.+?)[。！？]", flat)
    found = (match.group(1) or match.group(3)) if match else flat
    return found.rstrip(".").replace("\x00", ".")


def _surface_words(text: str, folders: bool = False) -> list[str]:
    """The words as written; a URL is its host, a path its last part (`folders`: then its folders, nearest first).
    Japanese, written without spaces, splits at its hiragana (particles and endings): `デプロイ手順はステージングで` ->
    デプロイ手順, ステージング."""
    text = _URL.sub(lambda m: m.group("host"), text)
    words = []
    for word in _WORD.findall(text):
        said = [word]
        if word.count("/") >= 2:  # a path is named by its last part: /Users/x/workspace/online-llm-tokenizer
            path = [p for p in reversed(word.split("/")) if p]
            said = (path if folders else path[:1]) or said
        for one in said:
            parts = [p for p in _HIRAGANA.split(one) if p] if _HIRAGANA.search(one) else [one]
            words += [p.rstrip(".") for p in (parts or [one])]
    return words


def _label_removed(subject: str) -> str:
    """"Keep this approach: split the change into commits" names the part after the label."""
    label, colon, rest = subject.partition(": ")
    if colon and rest.strip() and not content_words(label):
        return rest
    return subject


def _is_filler(word: str) -> bool:
    return word.lower().replace("’", "'") in FILLER


def _distinctive(word: str, index: int, latin_in_other_script: bool) -> bool:
    """A tool, product, version, date or proper noun: `pnpm-lock.yaml`, `v2`, `Grafana`, `2026-03-05`."""
    if any(c.isdigit() for c in word) or re.search(r"\w[.+#@/_-]\w|[+#]$", word):
        return True
    if (index > 0 and word[:1].isupper() and not word.isupper()) or (word.isupper() and len(word) > 1):
        return True
    return latin_in_other_script and word.isascii()


def content_words(text: str, limit: int | None = None, folders: bool = False) -> list[str]:
    """The distinctive words of `text`, most telling first: tools, products and names, then the other
    content words in the order they were said; filler never. `folders`: a path's folders too (_surface_words)."""
    words, seen = [], set()
    for word in _surface_words(text, folders):
        key = word.casefold()
        if key not in seen and not _is_filler(word):
            seen.add(key)
            words.append(word)
    words = [w for w in words if not _part_of_another(w, words)]
    other_script = any(not w.isascii() for w in words)
    ranked = sorted(range(len(words)), key=lambda i: (not _distinctive(words[i], i, other_script), i))
    return [words[i] for i in ranked[:limit]]


def _part_of_another(word: str, words: list[str]) -> bool:
    """`PAY` beside `PAY-142`: the longer word already says it (the name would read `pay-pay-142`)."""
    key = word.casefold()
    return any(other is not word and key in re.split(r"[-_./@#+]", other.casefold()) for other in words)


def _replacement(text: str) -> str | None:
    """"Use pnpm, not npm" when the text swaps one thing for another."""
    for pattern in (_PREFER, _REPLACE):
        match = pattern.search(text)
        if match and not _is_filler(match.group("new")) and not _is_filler(match.group("old")):
            verb = match.groupdict().get("verb") or "use"
            verb = "use" if verb.lower().startswith(("switch", "mov", "migrat")) else verb.lower()
            return f"{verb.capitalize()} {match.group('new')}, not {match.group('old')}"
    return None


def _fits(name: str) -> bool:
    """The name, and its slug whole (no word dropped), are within the limits."""
    full = "-".join(slug_words(name))
    return len(name) <= C.NAME_MAX_CHARS and len(full) <= C.SLUG_MAX_CHARS and _utf8(full) <= C.SLUG_MAX_BYTES


def _negation(subject: str) -> list[str]:
    """"never" for a rule that starts "don't ..." or "never ...": the name keeps which way it points."""
    match = _NEGATED_START.match(subject)
    if not match:
        return []
    word = match.group("neg").lower()
    return [word if word in ("avoid", "stop") else "never"]


def content_name(text: str) -> str:
    """The name a person would give this rule or fact: its distinctive words, within the limits."""
    subject = _label_removed(_first_sentence(text))
    subject = _RATIONALE.sub("", subject) or subject
    swapped = _replacement(subject)
    if swapped and _fits(swapped):
        return swapped
    said = _surface_words(subject)
    order = {w: i for i, w in reversed(list(enumerate(said)))}
    chosen = sorted(content_words(subject, NAME_WORDS) or said[:NAME_WORDS], key=lambda w: order.get(w, 0))
    # A run of a script written without spaces (Japanese, Chinese) is one "word": keep its start.
    chosen = [w if w.isascii() or len(w) <= LONG_WORD_CHARS else w[:LONG_WORD_CHARS] for w in chosen]
    prefix = _negation(subject)
    chosen = [w for w in chosen if w.lower() not in prefix] or chosen
    while len(chosen) > 1 and not _fits(" ".join(prefix + chosen)):
        # the least telling word goes first: plain words before tools and names, later before earlier
        chosen.remove(min(chosen, key=lambda w: (_distinctive(w, 1, False), -order.get(w, 0))))
    name = " ".join(prefix + chosen)
    if not _fits(name):  # one word longer than any limit: the slug cuts it, the name must fit too
        name = bounded(slug_words(name), " ")
    name = name or "note"
    return name[:1].upper() + name[1:]


def default_name(text: str) -> str:
    return content_name(text)


def default_description(text: str) -> str:
    sentence = _first_sentence(text)
    limit = C.INDEX_LINE_TARGET
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


# --- distinct names -------------------------------------------------------------------
def distinct_name(name: str, text: str, other_text: str, taken: Callable[[str], bool]) -> str:
    """`name` made distinct from the memory already called that: a suffix of the words in `text` that
    the other memory (`other_text`) does not have ("Staging DB" -> "Staging DB db2"), else a number.
    `taken(candidate)` says whether a candidate is in use (in the form the memory is written in)."""
    have = {w.casefold() for w in slug_words(f"{name} {other_text}")}
    # A path's folders too: two memories of `~/work/billing/deploy.sh` and `~/work/search/deploy.sh` are both named
    # `deploy.sh` (a path by its last part), and what tells them apart is a folder, not a number.
    extra = [w for w in content_words(text, folders=True) if not set(slug_words(w)) <= have]
    base = _surface_words(name) or [name]
    for count in range(1, 4):
        if count > len(extra):
            break
        candidate = _with_suffix(base, extra[:count])
        if not taken(candidate):
            return candidate
    for n in range(2, 1000):
        candidate = _with_suffix(base, [str(n)])
        if not taken(candidate):
            return candidate
    raise MemdirError(f"no distinct name left for {name!r}; choose a more specific name")


def _with_suffix(base: list[str], suffix: list[str]) -> str:
    """`base` words then `suffix`, dropping base words from the end (never the suffix) to fit."""
    words = list(base)
    while words and not _fits(" ".join(words + suffix)):
        words.pop()
    return " ".join(words + suffix) if words else bounded(suffix, " ")
