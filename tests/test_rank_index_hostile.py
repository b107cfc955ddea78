"""A planted rank index (recall.rank_index) attacked where its checks were thinnest: what its offsets
sections point at. Each test failed before the fix it names."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from memdir.stages.recall import rank_index, token_cache
from memdir.stages.recall.indexed_corpus import IndexedCorpus
from memdir.stages.recall.lexical import Ranker, document_tokens

INDEX = Path(rank_index.INDEX_FILE)
FIELDS = [(f"Note {i}", f"Kafka topic{i}, deploys with pnpm", "project", f"Body {i}: lag{i} on grafana, Alice said")
          for i in range(12)]
PROMPTS = ["what did Alice say about Kafka lag", "deploys on grafana", "topic3 lag3"]


def _sections(data: bytes) -> tuple[bytes, list[bytes]]:
    first = data.index(b"\n")
    second = data.index(b"\n", first + 1)
    parts, start = [], second + 1
    for size in (int(x) for x in data[first + 1: second].split()):
        parts.append(data[start: start + size])
        start += size
    return data[:first], parts


def _build(fields: list) -> bytes:
    keys, documents = [token_cache.digest(f) for f in fields], [document_tokens(*f) for f in fields]
    return rank_index.build(keys, [b""] * len(fields), documents) or b""


def _save(folder: Path, fields: list) -> None:
    rank_index.save(folder, [token_cache.digest(f) for f in fields], [b""] * len(fields),
                    [document_tokens(*f) for f in fields])


def _for(folder: Path, fields: list):
    """The corpus for a pool given as fields (no stamps: every memory found by its digest)."""
    return rank_index.corpus_for(folder, fields, lambda f: f)[0]


def _array_at(parts: list[bytes], name: str) -> int:
    return rank_index.TEXTS + rank_index.SECTIONS.index(name)  # the arrays follow the texts (then the n-gram pairs)


def _planted(tmp_path: Path, change: dict[str, list[int]]) -> None:
    """A valid index of FIELDS with some of its arrays replaced, each section's size declared right."""
    head, parts = _sections(_build(FIELDS))
    for name, values in change.items():
        parts[_array_at(parts, name)] = array("I", values).tobytes()
    sizes = " ".join(str(len(p)) for p in parts).encode()
    (tmp_path / INDEX).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / INDEX).write_bytes(b"".join([head, b"\n", sizes, b"\n", *parts]))


def _valid_arrays() -> dict[str, array]:
    _, parts = _sections(_build(FIELDS))
    return {name: array("I", parts[_array_at(parts, name)]) for name in rank_index.SECTIONS}


@pytest.mark.parametrize("name", ["stem", "word", "gram", "doc_stems", "names", "related"])
def test_offsets_that_go_back_or_past_their_section_are_not_loaded(tmp_path, name):
    """Fixed by _consistent's offsets check: every memory's slice the whole section (0, L, 0, L...) made
    each names()/related()/term_idfs() call decode all of it. At 16 MB and 250 memories that was 20 s of
    CPU per prompt, every prompt, as the file loaded fine and was never rebuilt."""
    valid = _valid_arrays()
    _, parts = _sections(_build(FIELDS))
    lengths = {"gram": len(parts[-1]) // rank_index.PAIR_BYTES, **{k: len(v) for k, v in valid.items()}}
    at, end = valid[name + "_at"], lengths[name if name in ("gram", "doc_stems", "names", "related") else name + "_docs"]
    assert end > 0 and len(at) > 3
    going_back = [0, *([end, 0] * len(at))][: len(at) - 1] + [end]
    past = [*at[:-1], end + 1]
    late_start = [1, *at[1:]]
    for offsets in (going_back, past, late_start):
        _planted(tmp_path, {name + "_at": offsets})
        assert rank_index.load(tmp_path) is None, offsets
        built = _for(tmp_path, FIELDS)  # the tokens, and a sound index written in its place
        assert isinstance(built, list)
        assert rank_index.load(tmp_path) is not None


def test_a_sound_index_still_loads_and_ranks_as_the_tokens(tmp_path):
    _planted(tmp_path, {})
    corpus = _for(tmp_path, FIELDS)
    assert isinstance(corpus, IndexedCorpus)
    want, got = Ranker(FIELDS, [document_tokens(*f) for f in FIELDS]), Ranker(FIELDS, corpus=corpus)
    for prompt in PROMPTS:
        assert got.rank(prompt) == want.rank(prompt) and got.rank(prompt)


# "passing" stems to "pass", and the word "pass" to "pas": the spelling "pass" is a word as written and another
# word's stem. Which stem a typo of it corrected to depended on the order the pool's words came in: sorted from
# the index, in set order from the tokens, so the index flipped the top memory of "passz".
TYPO_FIELDS = [("CI gate", "the build must be passing before merge", "project", "green checks"),
               ("Boarding pass", "keep the pass for the flight", "user", "printed copy"),
               ("Other", "unrelated note about kafka", "reference", "lag")]


def test_a_typo_corrects_the_same_whatever_order_the_words_come_in(tmp_path):
    from memdir.stages.recall.lexical import DocCorpus

    docs = [document_tokens(*f) for f in TYPO_FIELDS]

    class Ordered(DocCorpus):
        def __init__(self, reverse: bool) -> None:
            super().__init__(docs)
            self.reverse = reverse

        def written_stems(self):
            return sorted(super().written_stems(), reverse=self.reverse)

        def spelled(self, prefix):
            return None  # Ranker's whole table, from written_stems

    found = [Ranker(TYPO_FIELDS, corpus=Ordered(r)).corrections("passz") for r in (False, True)]
    assert found[0] == found[1] == {"passz": "pas"}  # the word "pass" meant, stemmed as a query's "pass" is
    assert Ranker(TYPO_FIELDS, corpus=DocCorpus(docs)).corrections("passz") == found[0]  # a prefix at a time

    _save(tmp_path, TYPO_FIELDS)
    corpus = _for(tmp_path, TYPO_FIELDS)
    assert isinstance(corpus, IndexedCorpus)
    want, got = Ranker(TYPO_FIELDS, docs), Ranker(TYPO_FIELDS, corpus=corpus)
    assert got.rank("passz") == want.rank("passz") and want.rank("passz")[0][0] == 1


def test_n_gram_pairs_read_after_the_file_is_cut_short_read_as_none(tmp_path):
    """The n-gram pairs are read from the open file when a prompt asks: a file truncated meanwhile (by
    anything) gives those n-grams no memories, never an error or another memory's counts."""
    _save(tmp_path, FIELDS)
    index = rank_index.load(tmp_path)
    assert index is not None
    g = index.gram_id("#kaf")
    assert g >= 0 and list(index.gram_postings(g))
    os.truncate(tmp_path / INDEX, index.pairs_at + rank_index.PAIR_BYTES)
    assert list(index.gram_postings(g)) == []
    assert len(Ranker(FIELDS, corpus=IndexedCorpus(index, list(range(len(FIELDS))), {}, len(FIELDS))).rank("kafka")) > 0


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc (Linux)")
def test_loading_the_index_again_and_again_leaves_no_file_open(tmp_path):
    _save(tmp_path, FIELDS)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        assert rank_index.load(tmp_path) is not None
    (tmp_path / INDEX).write_bytes(b"memdir-rank-index 2 broken\n1 2\n")
    for _ in range(50):
        assert rank_index.load(tmp_path) is None
    assert len(os.listdir("/proc/self/fd")) <= before + 1


class _Stamped:
    """A header the header cache served: its fields and the stamp it was served under."""

    def __init__(self, fields: tuple, stamp: bytes) -> None:
        self.fields, self.stamp = fields, stamp


def test_a_pool_holding_one_memory_twice_is_indexed_once_and_served_from_the_index(tmp_path):
    """A memory copied into another file is the same text twice in the pool. The index written of that pool held
    its key twice, which load() refuses (keys must be unique): every prompt found no index, built one (the n-gram
    postings alone ~70-180 ms at 250 memories) and wrote it again, to the same end."""
    pool = [*FIELDS, FIELDS[3], FIELDS[3], FIELDS[7]]
    assert isinstance(_for(tmp_path, pool), list)  # no index yet: built from the tokens and written
    corpus = _for(tmp_path, pool)
    assert isinstance(corpus, IndexedCorpus), "the index written for this pool is not served to it"
    want, got = Ranker(pool, [document_tokens(*f) for f in pool]), Ranker(pool, corpus=corpus)
    for prompt in PROMPTS:
        assert got.rank(prompt) == want.rank(prompt) and got.rank(prompt)


def test_many_copies_of_a_stamped_memory_do_not_count_as_an_index_older_than_the_header_cache(tmp_path):
    """Each copy's stamp differs (another file) and only one copy can hold the memory's place in the index: the
    others are found by their text and ranked beside it. They counted as memories the index had missed the
    stamps of (MAX_UNSTAMPED), so past 16 copies every prompt built and wrote the index again."""
    copies = rank_index.MAX_UNSTAMPED + 4
    pool = [_Stamped(f, b"f%d" % i) for i, f in enumerate(FIELDS)]
    pool += [_Stamped(FIELDS[0], b"copy%d" % i) for i in range(copies)]
    first = rank_index.corpus_for(tmp_path, pool, lambda h: h.fields)[0]
    assert isinstance(first, list)
    corpus = rank_index.corpus_for(tmp_path, pool, lambda h: h.fields)[0]
    assert isinstance(corpus, IndexedCorpus) and len(corpus.extra) == copies
    fields = [h.fields for h in pool]
    want, got = Ranker(fields, [document_tokens(*f) for f in fields]), Ranker(fields, corpus=corpus)
    for prompt in PROMPTS:
        assert got.rank(prompt) == want.rank(prompt) and got.rank(prompt)


def test_without_os_pread_the_hook_ranks_from_the_tokens(tmp_path, monkeypatch):
    """Windows' os has no pread, which the n-gram pairs are read with: load() raised AttributeError (caught by
    nothing, the descriptor left open), so the hook could not rank at all. Without it there is no index."""
    _save(tmp_path, FIELDS)
    monkeypatch.delattr(os, "pread")
    assert rank_index.load(tmp_path) is None
    os.unlink(tmp_path / INDEX)
    built = _for(tmp_path, FIELDS)
    assert isinstance(built, list) and not (tmp_path / INDEX).exists()  # no index written that none could read
    assert Ranker(FIELDS, built).rank(PROMPTS[0]) == Ranker(FIELDS).rank(PROMPTS[0]) != []


def test_n_gram_pairs_cut_in_the_middle_of_a_pair_read_as_none(tmp_path):
    """A file cut short at a 4-byte boundary within a pair read back an odd number of uint32: as many memories
    as asked for, one count fewer, and zip(strict=True) raised ValueError in the middle of ranking."""
    _save(tmp_path, FIELDS)
    index = rank_index.load(tmp_path)
    assert index is not None
    g = index.gram_id("#kaf")
    start, end = index.gram_at[g], index.gram_at[g + 1]
    assert end - start == len(FIELDS)
    os.truncate(tmp_path / INDEX, index.pairs_at + rank_index.PAIR_BYTES * end - 4)
    assert list(index.gram_postings(g)) == []
    corpus = IndexedCorpus(index, list(range(len(FIELDS))), {}, len(FIELDS))
    assert Ranker(FIELDS, corpus=corpus).rank("kafka lag")
