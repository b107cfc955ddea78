"""Words as memdir compares them: lower-case tokens, stop words dropped, light stemming.

Core text handling shared by both stages (the extractor files and dedups memories with it, recall
ranks them with it), so neither stage imports the other (DESIGN: data flows one way).
"""

from __future__ import annotations

import re
import unicodedata

from memdir import constants as C

_TOKEN = re.compile(r"[a-z0-9]+")  # ASCII text, the common case: one C-speed pass

# Any other text: runs of letters and digits (underscore splits, as in ASCII), with the scripts written
# without spaces between words cut out as runs of their own, so "pnpmを使う" is pnpm | を | 使 | う.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\u3005\u3007"
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
_SPACELESS = _HAN + _HIRAGANA + _KATAKANA + _HANGUL
_UNICODE_TOKEN_PATTERN = (
    f"([{_HAN}]+)|([{_HANGUL}]+)|([{_KATAKANA}]+)|[{_HIRAGANA}]+|((?:(?![{_SPACELESS}])[^\\W_])+)")
# Compiling that pattern takes ~5 ms (its Han range reaches past U+FFFF), a tenth of a prompt hook's budget,
# paid by every hook that renders a memory with one accented letter. So text is first cut into runs of
# letters and digits (and the kana signs that are not letters, such as the katakana middle dot), a pattern
# that compiles in a tenth of a millisecond; only a run holding a character of a spaceless script (all at
# U+1100 or above) goes through the pattern, compiled on the first such run.
_RUN = re.compile("(?:[^\\W_]|[\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f])+")
_FIRST_SPACELESS = "\u1100"  # Hangul jamo: the lowest code point of _SPACELESS
_unicode_token: re.Pattern[str] | None = None


def _unicode_tokens(run: str) -> list[tuple[str, str, str, str]]:
    global _unicode_token
    if _unicode_token is None:
        _unicode_token = re.compile(_UNICODE_TOKEN_PATTERN)
    return _unicode_token.findall(run)


def _bigrams(run: str) -> list[str]:
    """A run of Chinese characters or Korean syllables as overlapping pairs, the usual unit for
    matching text with no spaces between words (a lone character stands for itself)."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def split_words(text: str) -> list[str]:
    """The lower-case words of `text`, in order, before stop words and stemming.

    ASCII text splits on anything but letters and digits. Other text is NFKC-normalised first
    (full-width "ｐｎｐｍ" is pnpm) and split Unicode-aware: accented Latin, Cyrillic, Greek... are
    words as written; Han (Chinese, Japanese kanji) and Hangul runs become character bigrams;
    a katakana run (a Japanese loanword: データベース) is one word; hiragana, which in Japanese text
    is mostly particles and inflection (の, を, です), is dropped like a stop word.
    """
    lowered = text.lower()
    if lowered.isascii():
        return _TOKEN.findall(lowered)
    runs = _RUN.findall(nfkc(text).lower())
    if not runs or max("".join(runs)) < _FIRST_SPACELESS:
        return runs  # accented Latin, Cyrillic...: every run is a word (one C pass, not a test per run)
    out: list[str] = []
    for run in runs:
        if max(run) < _FIRST_SPACELESS:
            out.append(run)
            continue
        for han, hangul, katakana, other in _unicode_tokens(run):
            if han or hangul:
                out.extend(_bigrams(han or hangul))
            elif katakana or other:
                out.append(katakana or other)
    return out

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    ever also any anything something someone get got go going went like likely might may must shall
    kind sort ones one lot lots much many thing things way ways time times
    s t d ll re ve m don doesn didn isn wasn aren weren won wouldn shouldn couldn hasn haven""".split()
)  # the last line: what contractions leave behind ("that's" -> that, s), which is never the topic

# Inflectional suffixes, longest first; a stem keeps at least three letters.
_SUFFIXES = ("ational", "ization", "fulness", "ousness", "iveness", "ations", "ation", "ments", "ment",
             "ings", "ing", "edly", "ies", "ied", "ers", "er", "est", "ed", "ly", "es", "s")
# -er and -est come off only a stem of at least this many letters: in shorter words they are part of the
# word (letter, cover, water, paper, career, request), and cutting them made "letter" the "let" of "let's",
# "career" a "car", and "cover" a word that "covered" was not (recruiter -> recruit, painter -> paint stay).
_AGENT_STEM_MIN = 5


_stem_cache: dict[str, str] = {}


def stem(word: str) -> str:
    cached = _stem_cache.get(word)
    if cached is None:
        if len(_stem_cache) >= C.STEM_CACHE_MAX_WORDS:
            _stem_cache.clear()  # the warm server tokenises every memory of every folder (recall.token_pack)
        cached = _stem_cache[word] = _stem(word)
    return cached


def _stem(word: str) -> str:
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (4 if suffix == "ly" else 3):
            base = word[: -len(suffix)]
            if suffix in ("ers", "er", "est") and len(base) < _AGENT_STEM_MIN:
                continue  # letters -> letter (the plain -s), not "let"
            if suffix == "ly" and base.endswith("i"):
                continue  # family/families, not an adverb of "fami" (apply/reply: the base is too short)
            if suffix in ("ies", "ied"):
                return base + "y"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, planned -> plan
            if base.endswith("e"):
                base = base[:-1]
            return base
    # A final e goes from four-letter words too, as it goes before -es, -ed and -ing: page and pages, make and
    # making, rule and rules, role and roles were each two different stems.
    return word[:-1] if word.endswith("e") else word


# A run of more than NFKC_MARKS_KEPT characters that are neither word characters, spaces nor below U+0300: every
# long run of combining marks is one (marks are not \w), found at C speed; a run of emoji or CJK punctuation only
# costs the exact check below. As text: compiled (and cached by re) only for long text that is not NFKC.
_LONG_MARK_RUN = r"[^\w\s\x00-\u02ff]{%d,}" % (C.NFKC_MARKS_KEPT + 1)


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, with no run of more than NFKC_MARKS_KEPT combining marks. NFKC sorts
    each run of marks by an insertion sort: 50,000 alternating marks took 1.9 s and 100 KB 7.5 s (hostile9), on a
    prompt in the hook or on tool output in the extractor. Short text cannot be slow, nor can text already in NFKC
    (real memories are: 6 us to check one; a Python pass over each made tokenising it a third slower)."""
    if len(text) > C.NFKC_CHECKED_CHARS and not unicodedata.is_normalized("NFKC", text) and re.search(_LONG_MARK_RUN, text):
        text = _marks_capped(text)
    return unicodedata.normalize("NFKC", text)


def _marks_capped(text: str) -> str:
    combining = unicodedata.combining
    kept = C.NFKC_MARKS_KEPT
    out: list[str] = []
    run = 0
    start = 0  # the first character not yet copied
    for i, ch in enumerate(text):
        if ch < "\u0300" or not combining(ch):
            run = 0
            continue
        run += 1
        if run == kept + 1:
            out.append(text[start:i])
        elif run <= kept:
            continue
        start = i + 1
    if not out:
        return text
    out.append(text[start:])
    return "".join(out)


def tokens(text: str) -> list[str]:
    return [stem(t) for t in split_words(text) if t not in STOPWORDS]


# Words of a request to a coding agent that never say what it is about (issue 21): a memory that says
# "never use npm in this repo" is not about "use" or "repo", so "should I use tabs or spaces?" and
# "rename the repo" must not recall it. Recall never matches on these, in a prompt or in a memory.
# Kept short on purpose: a longer list (need, make, help, know, show, good, great...) measurably lost
# LoCoMo questions, whose memories are about people ("what did Melanie make?"); words merely frequent
# in one folder are handled per folder (recall.lexical.Ranker.common).
FILLER = frozenset(
    """use uses used using please thank thanks ok okay yes yeah
    repo repos repository repositories project projects code codebase file files folder folders stuff bit""".split()
)


def meaning_tokens(text: str) -> list[str]:
    """`tokens(text)` without filler: the words that can say what a prompt or a memory is about."""
    return [stem(t) for t in split_words(text) if t not in STOPWORDS and t not in FILLER]


# What a prompt says that is not a word of its own (issue 21): a single letter ("x"), a bare number ("20") and a
# file name's extension ("py" of utils.py, "md" of CLAUDE.md). Recall still ranks on them, but without the model
# they never make a match (recall.offline.stands_on_words). As text: compiled (and cached by re) only by a prompt
# with a dot inside a word.
_EXTENSION = r"(?<=\w)\.([a-z][a-z0-9]{0,4})(?![\w.])"


def chance_words(query: str) -> set[str]:
    """The prompt's words that say nothing on their own, lower-cased as `split_words` gives them: single letters,
    bare numbers and file-name extensions ("rename x to count in utils.py": x, py)."""
    out = {w for w in split_words(query) if len(w) < 2 or w.isdigit()}
    if _dotted(query):
        out.update(m.group(1) for m in re.finditer(_EXTENSION, query))
    return out


# A file name or code identifier the prompt names ("apply.py", "tests/test_x.py", "signals/", `flush_stale_jobs`,
# camelCase): the words it is cut into ("apply", "py") say less than the whole does. As text: compiled (and
# cached by re) only by a prompt that has a dot, slash, underscore or backtick. The file name needs two
# characters before its lower-case extension ("U.S.", "J.K.", "e.g." are not files) and a slash path must end
# in "/" or start at the root ("and/or", "artists/bands" are words).
_IDENTIFIER = (r"`([^`\n]{3,80})`"
               r"|((?:[\w.-]+/)*[\w-]*\w\w(?:\.[\w-]+)*\.[a-z][a-z0-9]{0,4})(?![\w])"
               r"|((?:[~.]{0,2}/)?(?:[\w.-]+/)+)(?=[\s,;:!?)]|$)"
               r"|\b(_?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b"
               r"|\b([a-z]+[A-Z][A-Za-z0-9]*)\b")
_IDENTIFIER_MARKS = frozenset("/_`")  # and a dot inside a word (`_dotted`), not one that ends a sentence
_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def identifiers(query: str) -> list[str]:
    """The file names and code identifiers the prompt names, lower-cased, each once, in order."""
    if not _IDENTIFIER_MARKS.intersection(query) and not _dotted(query) and not any(
            a.islower() and b.isupper() for a, b in zip(query, query[1:], strict=False)):
        return []  # no mark of an identifier and no camelCase: most prompts, without compiling the pattern (0.6 ms)
    out: list[str] = []
    for match in re.finditer(_IDENTIFIER, query):
        found = next(g for g in match.groups() if g).strip().removesuffix("()").lstrip("@").lower()
        if match.group(2) and "/" in found:
            found = found.rsplit("/", 1)[1]  # a file by its name: a memory says "test_x.py" as often as "tests/test_x.py"
        if len(found) >= 3 and found not in out:
            out.append(found)
    return out


def _dotted(query: str) -> bool:
    """Whether a dot is followed by a letter or digit ("apply.py"), not by a space or the end ("... the CTA.")."""
    at = query.find(".")
    while at >= 0:
        if query[at + 1 : at + 2].isalnum():
            return True
        at = query.find(".", at + 1)
    return False


def holds_identifier(text: str, identifier: str) -> bool:
    """Whether lower-cased `text` holds `identifier` whole: not inside a longer name ("auto_apply.py")."""
    at = text.find(identifier)
    while at >= 0:
        end = at + len(identifier)
        if ((at == 0 or text[at - 1] not in _IDENTIFIER_CHARS)
                and (identifier.endswith("/") or end == len(text) or text[end] not in _IDENTIFIER_CHARS)):
            return True
        at = text.find(identifier, at + 1)
    return False


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether the optimal-string-alignment distance (edits incl. one swap of neighbours) is <= limit."""
    if abs(len(a) - len(b)) > limit:
        return False
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return False
        previous2, previous = previous, current
    return previous[-1] <= limit
