"""Older memories are matched on bytes (issue 26): the same matches as the str.translate it replaced."""

from __future__ import annotations

import random

from memdir.scan import Header
from memdir.stages.recall.manifest import older_matches, words_only

_STR_TABLE = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


def test_word_starts_match_as_with_str_translate():
    alphabet = [*"abcdeK_-. \n*#:1", "İ", "—", "’", "é", "\u212a", "\u00a0", "日本"]  # Kelvin sign lowers to "k"
    rng = random.Random(26)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        old = (" " + text).lower().translate(_STR_TABLE)
        new = b" " + words_only(text)
        for stem in ("k", "ab", "i", "e1", "ki", "abc"):
            assert ((" " + stem) in old) == ((b" " + stem.encode()) in new), (text, stem)


def test_non_ascii_text_still_matches_its_words():
    older = [Header(f"m{i}.md", f"/m/m{i}.md", float(i), f"Deploy rule {i}", "Résumé — never on Friday", "feedback",
                    excerpt="The “freeze” lasts until Monday.") for i in range(3)]
    older.append(Header("other.md", "/m/other.md", 9.0, "Kafka offsets", "consumer lag", "project"))
    found = older_matches("why is the freeze on friday", older, 10)
    assert [h.rel_path for h in found] == ["m2.md", "m1.md", "m0.md"]  # ties: newest first
