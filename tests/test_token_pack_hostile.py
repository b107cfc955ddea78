"""The warm server's packed tokens (recall.token_pack) under hostile use: folders of many distinct words,
several threads at once, two projects' folders taking turns."""

from __future__ import annotations

import random
import string
import threading

from memdir import constants as C, words
from memdir.stages.recall import manifest
from memdir.stages.recall.lexical import document_tokens
from memdir.stages.recall.token_pack import Packer, TokenPack
from tests.test_token_pack import _whole


def _memory(rng: random.Random, n: int, i: int) -> tuple[str, str, str, str]:
    made = " ".join("".join(rng.choices(string.ascii_lowercase, k=9)) for _ in range(n))
    return (f"note {i}", "pnpm and docker", "project", made)


def test_the_stem_cache_stays_bounded_when_every_memory_is_tokenised(monkeypatch):
    """The packer tokenises every memory of every folder the server is asked about, so a folder of
    random words (64 KB of scanned body each) grew words._stem_cache without end: 1,000,000 distinct
    words held about 100 MB, 20,000 such memories would hold gigabytes."""
    monkeypatch.setattr(C, "STEM_CACHE_MAX_WORDS", 500)
    words._stem_cache.clear()
    rng = random.Random(7)
    store = TokenPack()
    folder = [_memory(rng, 100, i) for i in range(30)]  # 3,000 distinct words
    for fields in folder:
        store.put(fields, document_tokens(*fields))
        assert len(words._stem_cache) <= 500 + 1
    for fields in folder:  # and the tokens are still right, packed or tokenised again
        assert _whole(store.get(fields)) == _whole(document_tokens(*fields))
    words._stem_cache.clear()


def test_threads_reading_while_the_vocabulary_starts_over_get_the_right_tokens():
    """`get` unpacks outside the lock against the words it read under it; a `put` that starts the vocabulary
    over (or keep_only) meanwhile must never make it read another vocabulary's words."""
    rng = random.Random(3)
    folder = [_memory(rng, 30, i) for i in range(40)]
    expected = {f: _whole(document_tokens(*f)) for f in folder}
    store = TokenPack(max_words=200)  # starts over every few memories
    wrong: list[tuple] = []
    stop = threading.Event()

    def putting() -> None:
        while not stop.is_set():
            for f in folder:
                store.put(f, document_tokens(*f))
            store.keep_only(set(folder[:20]))

    def getting() -> None:
        while not stop.is_set():
            for f in folder:
                got = store.get(f)
                if got is not None and _whole(got) != expected[f]:
                    wrong.append(f)

    threads = [threading.Thread(target=putting), threading.Thread(target=getting), threading.Thread(target=getting)]
    for t in threads:
        t.start()
    threading.Event().wait(1.5)
    stop.set()
    for t in threads:
        t.join()
    assert wrong == []


class _Header:
    def __init__(self, folder: str, fields: tuple[str, str, str, str]) -> None:
        self.name, self.description, self.type, self.excerpt = fields
        self.rel_path = f"{fields[0]}.md"
        self.abs_path = f"{folder}/{self.rel_path}"


def _packed_whole(packer: Packer, headers: list) -> bool:
    return packer.done is headers and all(packer.store.get(manifest.fields_of(h)) for h in headers)


def test_two_projects_taking_turns_do_not_throw_each_other_away():
    """One server answers every project of a user: a prompt in a small project's folder (over NEWEST memories)
    dropped the big project's whole pack, and the next prompt there packed it all again (about 12 s of CPU
    at 20,000 memories), at each switch between two terminals."""
    rng = random.Random(5)
    big = [_Header("/home/u/.claude/projects/big/memory", _memory(rng, 5, i)) for i in range(600)]
    small = [_Header("/home/u/.claude/projects/small/memory", _memory(rng, 5, 1000 + i)) for i in range(250)]
    store = TokenPack()
    tokenised: list[tuple] = []
    packer = Packer(store, lambda: False)
    import memdir.stages.recall.token_pack as token_pack

    def counted(*f):
        tokenised.append(f)
        return document_tokens(*f)

    original, token_pack.document_tokens = token_pack.document_tokens, counted
    try:
        for headers in (big, small, big, small):
            headers = list(headers)  # a new list each time, as the watched view gives after a change
            packer.want(headers)
            deadline = threading.Event()
            for _ in range(2000):
                if _packed_whole(packer, headers):
                    break
                deadline.wait(0.01)
            assert _packed_whole(packer, headers)
    finally:
        token_pack.document_tokens = original
    assert len(tokenised) == len(big) + len(small)  # each memory packed once


def test_the_texts_an_entry_is_keyed_by_count_against_the_bound():
    """An entry is keyed by its memory's whole scanned text (up to 64 KB); a memory of one word repeated packs to a
    few bytes, so max_bytes bounded nothing of the old texts edited memories left behind (about 2.2 KB each for a
    real-sized memory, more than its packed tokens)."""
    store = TokenPack(max_bytes=200_000)
    for i in range(20):
        fields = (f"note {i}", "", "project", f"edit{i} " + "same " * 10_000)  # 50 KB of text each
        store.put(fields, document_tokens(*fields))
    assert store.size <= 200_000
    assert 1 <= len(store.packed) <= 4
    store.keep_only(set())
    assert store.size == 0


def test_a_full_pack_stops_growing_its_vocabulary_and_the_packer_stops_tokenising():
    """Once full, every later put (each prompt's unpacked matches) still added its words to the vocabulary, until it
    passed max_words and started over, dropping the whole pack; and the packer tokenised the rest of the folder
    for nothing."""
    rng = random.Random(11)
    folder = [_memory(rng, 50, i) for i in range(40)]
    store = TokenPack(max_bytes=3_000, max_words=10_000)
    for fields in folder:
        store.put(fields, document_tokens(*fields))
    kept, words = dict(store.packed), len(store.words)
    assert store.full and kept
    for fields in folder:
        store.put(fields, document_tokens(*fields))
    assert store.packed == kept and len(store.words) == words
    store.keep_only(set())
    assert not store.full


def test_the_packer_stops_at_a_full_pack():
    rng = random.Random(13)
    headers = [_Header("/home/u/p/memory", _memory(rng, 50, i)) for i in range(300)]
    store = TokenPack(max_bytes=3_000)
    calls: list[int] = []
    import memdir.stages.recall.token_pack as token_pack

    original = token_pack.document_tokens
    token_pack.document_tokens = lambda *f: calls.append(1) or original(*f)
    try:
        packer = Packer(store, lambda: False)
        packer.want(headers)
        for _ in range(2000):
            if packer.done is headers:
                break
            threading.Event().wait(0.01)
    finally:
        token_pack.document_tokens = original
    assert packer.done is headers and store.full
    assert len(calls) < 20


def test_the_bound_counts_the_memory_a_non_latin_text_takes():
    """The key texts were counted by `len`, in characters: CPython keeps a Korean or Japanese text in 2 bytes a
    character (an emoji's, 4), so edited memories' old texts in those scripts could hold 2-4 times max_bytes."""
    import sys

    store = TokenPack(max_bytes=400_000)
    for i in range(40):
        fields = (f"메모 {i}", "배포 절차", "project", f"편집{i} " + "배포는 화요일에 합니다 🚀 " * 400)
        store.put(fields, document_tokens(*fields))
    held = sum(len(data) + sum(map(sys.getsizeof, fields)) for fields, data in store.packed.items())
    assert store.full and held <= 400_000
