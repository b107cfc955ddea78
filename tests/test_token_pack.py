"""The warm server's packed tokens (recall.token_pack): the same tokens back, used in place of tokenising,
filled in the background, giving way to prompts, and bounded."""

from __future__ import annotations

import shutil
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

from memdir.scan import scan
from memdir.stages.recall import manifest
from memdir.stages.recall.lexical import document_tokens
from memdir.stages.recall.token_pack import Packer, TokenPack


def _whole(tokens) -> tuple:
    """Everything a Ranker reads of DocTokens, with the order of both counts."""
    return (tokens.words, list(tokens.words), tokens.written, list(tokens.written), tokens.gram_length,
            tokens.names, tokens.related)


SAMPLES = [
    ("Deploy rule", "Deploys go out on Thursdays", "project", "Never on Friday. **Why:** freeze **How to apply:** wait"),
    ("pnpm only", "Use pnpm, never npm", "feedback", "install the dependencies with pnpm; npm breaks the lockfile"),
    ("project notes", "a type word in the text", "project", "project project projects feedback"),  # type = a word
    ("データベース", "pnpmを使う 中文测试 한국어", "user", "Никогда не используй npm — только pnpm café"),
    ("", "", "", ""),
    ("x", "y", "type with spaces", "z " * 70_000),  # a count past 16 bits
]


@pytest.mark.parametrize("fields", SAMPLES)
def test_unpacked_tokens_are_the_tokens_packed(fields):
    store = TokenPack()
    store.put(fields, document_tokens(*fields))
    assert _whole(store.get(fields)) == _whole(document_tokens(*fields))


@settings(max_examples=150, deadline=None)
@given(st.tuples(st.text(max_size=40), st.text(max_size=80), st.sampled_from(["", "user", "feedback", "pnpm"]),
                 st.text(max_size=400)))
def test_any_text_packs_and_unpacks_unchanged(fields):
    store = TokenPack()
    store.put(fields, document_tokens(*fields))
    assert _whole(store.get(fields)) == _whole(document_tokens(*fields))


def test_the_real_folder_packs_unchanged_and_small(realdata):
    from benchmarks import realistic

    headers = scan(realdata / realistic.REAL_FOLDER).headers
    store = TokenPack()
    for h in headers:
        store.put(manifest.fields_of(h), document_tokens(*manifest.fields_of(h)))
    assert len(store.packed) == len(headers) >= 50
    for h in headers:
        assert _whole(store.get(manifest.fields_of(h))) == _whole(document_tokens(*manifest.fields_of(h)))
    # about 1 KB packed a real-sized memory (46 KB as objects), plus its ~2.2 KB of text held at 2 bytes a character
    assert store.size < 7000 * len(headers)


def test_a_full_pack_keeps_what_it_has_and_a_huge_vocabulary_starts_over():
    full = TokenPack(max_bytes=1)
    full.put(SAMPLES[0], document_tokens(*SAMPLES[0]))
    assert full.get(SAMPLES[0]) is None and full.size == 0
    small = TokenPack(max_words=5)
    small.put(SAMPLES[0], document_tokens(*SAMPLES[0]))  # past 5 words now
    small.put(SAMPLES[1], document_tokens(*SAMPLES[1]))  # starts over, then holds this one
    assert small.get(SAMPLES[0]) is None
    assert _whole(small.get(SAMPLES[1])) == _whole(document_tokens(*SAMPLES[1]))


def test_the_server_ranks_from_the_pack_instead_of_tokenising(monkeypatch):
    store = TokenPack()
    monkeypatch.setattr(manifest, "_pack", store)
    kept = manifest.KeptTokens()
    fields = (SAMPLES[0], SAMPLES[1])
    for f in fields:
        store.put(f, document_tokens(*f))
    calls: list[tuple] = []

    def counted(*f):
        calls.append(f)
        return document_tokens(*f)

    monkeypatch.setattr(manifest, "document_tokens", counted)
    assert [_whole(t) for t in kept.tokenised(fields, None)] == [_whole(document_tokens(*f)) for f in fields]
    assert calls == []
    new = SAMPLES[2]
    kept.tokenised((new,), None)
    assert calls == [new]  # not packed yet: tokenised, and packed for next time
    assert store.get(new) is not None


def _wait(predicate, seconds=20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_the_packer_packs_a_folder_in_the_background_and_gives_way_to_prompts(realdata, tmp_path):
    from benchmarks import realistic

    folder = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, folder)
    headers = scan(folder).headers
    busy = threading.Event()
    busy.set()
    store = TokenPack()
    packer = Packer(store, busy.is_set)
    packer.want(headers)
    time.sleep(0.3)
    assert store.packed == {}  # a prompt is being answered all along: nothing packed meanwhile
    busy.clear()
    assert _wait(lambda: len(store.packed) == len(headers))
    assert _wait(lambda: packer.done is headers)
    packer.want(headers)  # the same list again (the watched view's, nothing changed): nothing to do
    assert not packer.wake.is_set()


def test_edited_memories_are_packed_afresh_and_stale_entries_dropped(realdata, tmp_path):
    from benchmarks import realistic

    folder = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, folder)
    before = scan(folder).headers
    store = TokenPack()
    packer = Packer(store, lambda: False)
    packer.want(before)
    assert _wait(lambda: packer.done is before)
    files = sorted(p for p in folder.glob("*.md") if p.name != "MEMORY.md")
    for path in files[:len(files) // 2 + 2]:  # over half the folder edited: the old texts outnumber the live ones
        path.write_text(path.read_text(encoding="utf-8") + "\nzqx edited\n", encoding="utf-8")
    after = scan(folder).headers
    packer.want(after)
    assert _wait(lambda: packer.done is after)
    live = {manifest.fields_of(h) for h in after}
    assert live <= store.packed.keys()
    assert len(store.packed) < 2 * len(after)  # not every edited text's old entry kept for good
    edited = next(h for h in after if "zqx" in h.excerpt)
    packed = store.get(manifest.fields_of(edited))
    assert packed is not None and "zqx" in packed.written

