"""What `memdir consolidate` compares: a memory's claim as normalised words, how alike two claims are,
and which pairs are worth a look at all.

Offline, only exact and near-exact duplicates are merged. "Near-exact" is two tests, both needed:
- the word-level similarity (difflib's ratio over the normalised words, order kept) is at least
  NEAR_EXACT (0.9: in a ten-word claim, one word changed; `consolidate_text_threshold` in
  docs/consolidate.md has the figures from the real folder), and
- no word that carries the meaning on its own differs: a negation or polarity word (not, never,
  always, only, instead...), a number, or anything shaped like code, a path or an identifier.
  "Use port 5432" and "Use port 5433", or "Always rebase" and "Never rebase", are never merged:
  they are listed for the user (or judged by the model) as a possible contradiction.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter, defaultdict

from memdir import body_sections, constants as C

NEAR_EXACT = 0.9
RELATED = 0.12  # content-word overlap (Jaccard) from which two memories are judged together (docs/consolidate.md)
MAX_SHARED_BY = 40  # a word in more memories than this says nothing about which two are alike (a blocking key)

_MARKUP = re.compile(r"[*`~>#|]+|\[\[|\]\]|^\s*(?:[-+]|\d+[.)])\s+", re.MULTILINE)
# Code, paths and identifiers first (`scripts/run.py`, `snake_case`, `v1.2`), kept whole; then plain words.
_WORD = re.compile(r"\w[\w./:@-]*[./:@_-][\w./:@-]*\w|[^\W_]+(?:'[^\W_]+)*")
_CRITICAL = frozenset("""
not no never none nothing nobody nor neither without cannot can't cant don't dont doesn't doesnt isn't isnt
won't wont shouldn't shouldnt mustn't mustnt didn't didnt aren't arent wasn't wasnt avoid stop stopped
always only instead except unless but rather must should prefer preferred deprecated removed disabled enabled
true false yes more less fewer most least before after above below first last
""".split())
_STOP = frozenset("""
a an the and or of to in on at for by with from as is are was were be been being it its this that these those
i you we they he she them us our your their my me his her so if then than there here what which who when where
how why all any each do does did done has have had will would can could may might just also into over about
""".split())


def claim(body: str, description: str = "") -> str:
    """What a memory says, without its **Why:** / **How to apply:** sections (they are merged, not compared).
    A body that is only those sections (or empty) is compared by its description."""
    rule = body_sections.without_sections(body)
    return rule if len(words(rule)) >= 3 else f"{description}\n{rule}".strip()


def words(text: str) -> list[str]:
    """The text as compared: NFKC, case-folded, markdown markup and punctuation gone, one list of words."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return _WORD.findall(_MARKUP.sub(" ", text))


def similarity(a: list[str], b: list[str]) -> float:
    """difflib's ratio over two word lists: 1.0 the same words in the same order."""
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def critical_difference(a: list[str], b: list[str]) -> list[str]:
    """The words that differ between `a` and `b` and carry meaning on their own (see the module docstring)."""
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            out += [w for w in a[i1:i2] + b[j1:j2] if _is_critical(w)]
    return out


def _is_critical(word: str) -> bool:
    return word in _CRITICAL or any(ch.isdigit() for ch in word) or any(ch in word for ch in "./:@_-")


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text) if w not in _STOP and len(w) > 1)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def related_pairs(bags: dict[str, frozenset[str]], bar: float = RELATED) -> list[tuple[str, str, float]]:
    """Pairs of keys whose word bags overlap by at least `bar` (Jaccard), best first. A word more than
    MAX_SHARED_BY memories use says nothing about which two are alike and is left out of both the pairing
    and the measure, so a big folder is not n-squared."""
    holders: dict[str, list[str]] = defaultdict(list)
    for key, bag in bags.items():
        for word in bag:
            holders[word].append(key)
    size = {key: sum(1 for w in bag if len(holders[w]) <= MAX_SHARED_BY) for key, bag in bags.items()}
    shared: Counter[tuple[str, str]] = Counter()
    for keys in holders.values():
        if len(keys) <= MAX_SHARED_BY:
            shared.update((a, b) if a < b else (b, a) for i, a in enumerate(keys) for b in keys[i + 1:])
    out = []
    for (a, b), count in shared.items():
        score = count / (size[a] + size[b] - count)
        if score >= bar:
            out.append((a, b, score))
    return sorted(out, key=lambda t: (-t[2], t[0], t[1]))


def union_section(sections: list[str | None], prefix: str) -> str | None:
    """One section holding every distinct item of `sections` (a label's text, one item per line or bullet),
    the first section's items first. None when none has the section."""
    items: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for text in sections:
        if not text:
            continue
        for item in _items(text[len(prefix):] if text.startswith(prefix) else text):
            key = tuple(words(item))
            if key and key not in seen:
                seen.add(key)
                items.append(item)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return "\n" + "\n".join(item if re.match(r"(?:[-*+]|\d+[.)])\s", item) else f"- {item}" for item in items)


def _items(text: str) -> list[str]:
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def why_and_how(bodies: list[str]) -> dict[str, str | None]:
    """The union of the **Why:** and of the **How to apply:** sections of `bodies`, in order."""
    return {prefix: union_section([body_sections.section(b, prefix) for b in bodies], prefix)
            for prefix in (C.WHY_PREFIX, C.HOW_PREFIX)}
