"""recall.older_words: the numbers are read from the open file when asked, and a file that changes under a
reader only sends the lookup back to the texts (issue 26)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir import header_cache
from memdir.header_cache import HeaderCache
from memdir.stages.recall import manifest, older_words
from memdir.stages.recall.older_words import WordIndex

WORDS = Path(older_words.CACHE_FILE)


@pytest.fixture(autouse=True)
def _files_settled(monkeypatch):
    monkeypatch.setattr(header_cache, "RACY_NS", 0)  # files written a moment ago are cached as settled ones


def _folder(tmp_path: Path) -> HeaderCache:
    for i in range(30):
        topic = ("grafana dashboards", "kafka consumer lag", "resume builds")[i % 3]
        (tmp_path / f"note_{i}.md").write_text(
            f"---\nname: note {i}\ndescription: about {topic} number{i}\ntype: project\n---\n{topic} body {i}\n")
    old = 1_700_000_000
    for i, path in enumerate(sorted(tmp_path.glob("*.md"))):
        os.utime(path, (old + i, old + i))
    cache = HeaderCache(tmp_path)
    cache.scan()
    return cache


def _linear(stems: list[bytes], older: list) -> dict[bytes, list[int]]:
    texts = [b" " + manifest._text_of(h) for h in older]
    return {s: [i for i, t in enumerate(texts) if b" " + s in t] for s in stems}


def test_a_loaded_index_answers_as_the_texts(tmp_path):
    cache = _folder(tmp_path)
    older = cache.scan().headers
    # b"resum": the vocabulary's last word (hostile27: a lookup stopping one word short of the end passed the suite)
    stems = [b"grafana", b"kafk", b"number1", b"absent", b"resum", b"zzz"]
    index = WordIndex(cache)
    assert index.matches(stems, older, manifest._text_of) == _linear(stems, older)  # built and saved
    assert index.vocabulary[-1].startswith(b"resum")
    loaded = WordIndex(cache)
    assert loaded.matches(stems, older, manifest._text_of) == _linear(stems, older)
    assert loaded.fd >= 0  # its numbers are read from the file, as asked


def test_a_file_cut_short_after_it_was_read_sends_the_lookup_to_the_texts(tmp_path):
    cache = _folder(tmp_path)
    older = cache.scan().headers
    WordIndex(cache).matches([b"grafana"], older, manifest._text_of)
    loaded = WordIndex(cache)
    assert loaded.matches([b"kafk"], older, manifest._text_of) == _linear([b"kafk"], older)
    os.truncate(tmp_path / WORDS, loaded.base + 4)
    assert loaded.matches([b"grafana", b"resum"], older, manifest._text_of) is None  # the caller tests the texts
    candidates = manifest.candidates(older, "grafana resume", words=WordIndex(cache))
    assert candidates  # a fresh lookup rebuilds or falls back, never raises


def test_lookups_leave_no_file_open(tmp_path):
    cache = _folder(tmp_path)
    older = cache.scan().headers
    WordIndex(cache).matches([b"grafana"], older, manifest._text_of)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        assert WordIndex(cache).matches([b"grafana"], older, manifest._text_of) is not None
    (tmp_path / WORDS).write_bytes(b"memdir-older-words 1 broken\n")
    for _ in range(50):
        WordIndex(cache).matches([b"grafana"], older, manifest._text_of)
    assert len(os.listdir("/proc/self/fd")) <= before + 1
