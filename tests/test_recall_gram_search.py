"""Offline ranking's character n-gram search (recall.bm25.grams_in_words) on a long prompt.

hostile21: 250 memories of one 64 KB line of distinct words each and a 10,000-character prompt took the offline
engine (and the llm engine's quotes, before the model call) 56 s, 53 of them searching the pool's 16 MB of words
once per query n-gram. Past C.RECALL_GRAM_SEARCHES_MAX n-grams each word is cut once instead: the same counts.
"""

from __future__ import annotations

import random

from memdir import constants as C
from memdir.stages.recall.bm25 import grams_in_words, marked_words
from memdir.stages.recall.lexical import Ranker, char_grams

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class _Scanned(str):
    """The marked words, counting the characters each search reads (str.find reads to its match, or to the end)."""

    read = 0

    def find(self, sub, start=0, *rest):  # type: ignore[override]
        at = super().find(sub, start, *rest)
        _Scanned.read += (len(self) if at == -1 else at + len(sub)) - start
        return at


def _words(rng: random.Random, count: int) -> list[str]:
    return list(dict.fromkeys("".join(rng.choice(_LETTERS) for _ in range(rng.randint(5, 10))) for _ in range(count)))


def test_a_long_prompt_reads_the_pool_words_a_few_times_not_once_per_n_gram():
    rng = random.Random(21)
    words = _words(rng, 20_000)
    grams = set(char_grams(" ".join(rng.sample(words, 400))))
    assert len(grams) > 2 * C.RECALL_GRAM_SEARCHES_MAX
    vocabulary, text, starts = marked_words(words)
    _Scanned.read = 0
    found = grams_in_words((vocabulary, _Scanned(text), starts), grams)
    assert found  # the prompt's words are the pool's
    # Once per n-gram, 1,800 of them: some 400 MB read for a 220 KB pool (the hostile case: 16 MB, 9,000 times).
    assert _Scanned.read <= 2 * len(text), f"read {_Scanned.read:,} characters of {len(text):,}"


def _in_batches(marked, grams: list[str]) -> dict[str, dict[str, int]]:
    """grams_in_words, asked a few n-grams at a time (each batch searched as before) and merged."""
    merged: dict[str, dict[str, int]] = {}
    for at in range(0, len(grams), C.RECALL_GRAM_SEARCHES_MAX):
        for word, held in grams_in_words(marked, grams[at: at + C.RECALL_GRAM_SEARCHES_MAX]).items():
            merged.setdefault(word, {}).update(held)
    return merged


def test_many_n_grams_find_the_counts_a_few_at_a_time_find(monkeypatch):
    """Overlapping matches (aaaa in #aaaaaa#), words shorter than an n-gram (#a#), other scripts, and n-grams that
    no word holds or that only a search across two marked words finds (one with the newline that joins them)."""
    monkeypatch.setattr(C, "RECALL_GRAM_SEARCHES_MAX", 8)
    rng = random.Random(22)
    pieces = ["a", "aa", "aaaa", "aaaaaa", "ab", "abab", "résumé", "naïve", "日本語", "データ", "x1", "1234", "ç", "e#f"]
    for _ in range(40):
        words = list({"".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 60))})
        marked = marked_words(words)
        grams = char_grams(" ".join(rng.choice(pieces) for _ in range(20)))
        grams += [g for w in rng.sample(words, min(5, len(words))) for g in char_grams(w, rng.choice((2, 3, 5)))]
        grams += ["".join(rng.choice("ab#\n") for _ in range(rng.randint(1, 5))) for _ in range(30)] + ["zzzz"]
        grams = list(dict.fromkeys(grams))
        assert grams_in_words(marked, grams) == _in_batches(marked, grams)


def test_a_long_prompt_ranks_a_real_sized_pool_as_a_search_per_n_gram_did(monkeypatch, realdata):
    from pathlib import Path

    folder = Path(realdata) / "memory-folders"
    texts = sorted(p.read_text(encoding="utf-8") for p in folder.rglob("*.md") if p.name != "MEMORY.md")
    fields = [(t[:60], t[60:200], "project", t) for t in texts]
    prompt = " ".join(texts[3].split()[:1500])[: C.RECALL_PROMPT_MAX_CHARS]
    assert len(set(char_grams(prompt))) > C.RECALL_GRAM_SEARCHES_MAX
    cut = Ranker(fields).rank(prompt)
    monkeypatch.setattr(C, "RECALL_GRAM_SEARCHES_MAX", 10**9)
    assert Ranker(fields).rank(prompt) == cut and cut
