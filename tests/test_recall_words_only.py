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


def test_the_servers_word_index_matches_as_the_linear_test(monkeypatch):
    from memdir.stages.recall import manifest
    from memdir.stages.recall.older_index import OlderIndex

    rng = random.Random(7)
    words = ["deploy", "deployment", "résumé", "resume", "kafka", "offsets", "freeze", "friday", "page", "pager",
             "one", "online", "batch-03", "İstanbul", "\u212aelvin", "naïve", "ledger"]

    def header(i: int) -> Header:
        text = " ".join(rng.choice(words) for _ in range(12))
        return Header(f"m{i}.md", f"/m/m{i}.md", rng.random(), f"note {rng.choice(words)}", text[:40], "project",
                      excerpt=text)

    folder = [header(i) for i in range(300)]
    queries = ["deploy the kafka offsets on friday", "resume page one", "istanbul kelvin naive", "batch 03 ledger"]
    linear = {q: manifest.older_matches(q, folder, 50) for q in queries}
    index = OlderIndex()
    monkeypatch.setattr(manifest, "_index", index)
    for q in queries:
        assert manifest.older_matches(q, folder, 50) == linear[q]
    assert len(index.indexed) == 300
    # An edited memory is a new Header; a deleted one is simply not asked about.
    folder[5] = header(5)
    del folder[7]
    for q in queries:
        indexed = manifest.older_matches(q, folder, 50)
        monkeypatch.setattr(manifest, "_index", None)
        assert indexed == manifest.older_matches(q, folder, 50)
        monkeypatch.setattr(manifest, "_index", index)  # the same index, stale entries and all
    assert len(index.indexed) == 301  # the edited memory added, nothing rebuilt


def test_the_servers_ranking_keeps_the_linear_ties(monkeypatch):
    """Equal scores and equal mtimes (a folder restored from git): the index's ranking (numpy) keeps the
    linear scoring's order, not just its set."""
    from memdir.stages.recall import manifest
    from memdir.stages.recall.older_index import OlderIndex

    texts = ["deploy kafka", "kafka deploy", "friday deploy", "kafka", "deploy", "friday kafka deploy", "ledger"]
    folder = [Header(f"m{i}.md", f"/m/m{i}.md", float(i % 2), f"note {i}", texts[i % len(texts)], "project",
                     excerpt=texts[i % len(texts)]) for i in range(120)]
    queries = ["deploy the kafka offsets on friday", "kafka", "friday deploy", "nothing here"]
    linear = {q: manifest.older_matches(q, folder, 50) for q in queries}
    assert any(len(found) == 50 for found in linear.values())
    monkeypatch.setattr(manifest, "_index", OlderIndex())
    for q in queries:
        assert [h.rel_path for h in manifest.older_matches(q, folder, 50)] == [h.rel_path for h in linear[q]]
