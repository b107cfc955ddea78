"""The prompt hook's rank index (recall.rank_index, issue 26): a Ranker on the index ranks every pool the
hook meets exactly as one on every memory's tokens, and whatever is planted or broken in the file only
costs the build it was meant to save."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.scan import scan
from memdir.stages.recall import api, manifest, rank_index, token_cache
from memdir.stages.recall.indexed_corpus import IndexedCorpus
from memdir.stages.recall.lexical import Ranker, document_tokens
from tests.realdata_prompts import SIZES, sampled_prompts

INDEX = Path(rank_index.INDEX_FILE)
NOW = time.time()
# Typos ("databse"), proper names, a job word, an unknown topic and non-ASCII: every path of rank and evidence.
EXTRA_PROMPTS = ["how do I run the databse migraton", "what did Alice say about Kafka and Gemini?",
                 "install the dependencies", "the capital of Portugal", "résumé für die Bewerbung 日本語"]


def _prompts(size: int | None = None) -> list[str]:
    return (sampled_prompts(size) if size else sampled_prompts()) + EXTRA_PROMPTS


@pytest.fixture(scope="module")
def built(realdata, tmp_path_factory):
    """A realistic 260-memory folder built from the real one (benchmarks/realistic.py): its fields and tokens."""
    from benchmarks import realistic

    root = tmp_path_factory.mktemp("rank")
    real = root / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, real)
    folder = realistic.build(root / "built", 260, source_folder=real)
    fields = [manifest.fields_of(h) for h in scan(folder).headers]
    return fields, [document_tokens(*f) for f in fields]


def _same(fields, docs, corpus, prompts) -> None:
    """Ranker on `corpus` against one on the pool's own tokens: the same scores, to the last float."""
    want, got = Ranker(fields, docs), Ranker(fields, corpus=corpus)
    assert corpus.n == len(fields)
    for prompt in prompts:
        assert got.rank(prompt) == want.rank(prompt), prompt
        a, b = want.evidence(prompt), got.evidence(prompt)
        assert (a.share, a.matched, a.distinct, a.titled) == (b.share, b.matched, b.distinct, b.titled), prompt


def _save(folder: Path, fields: list) -> None:
    rank_index.save(folder, [token_cache.digest(f) for f in fields], [b""] * len(fields),
                    [document_tokens(*f) for f in fields])


def _for(folder: Path, fields: list):
    """The corpus for a pool given as fields (no stamps: every memory found by its digest)."""
    return rank_index.corpus_for(folder, fields, lambda f: f)[0]


def _corpus(tmp_path: Path, indexed: list, pool: list):
    """The index of the `indexed` fields written, then the corpus for `pool` (fields) from it."""
    _save(tmp_path, indexed)
    corpus = _for(tmp_path, pool)
    assert isinstance(corpus, IndexedCorpus)
    return corpus


@pytest.mark.parametrize("size", SIZES)
def test_every_pool_ranks_as_on_its_own_tokens(built, tmp_path, size):
    fields, docs = built
    prompts = _prompts(size)
    base = list(range(200))
    rng = random.Random(7)
    surfaced = [i for i in base if rng.random() > 0.2]  # memories surfaced earlier in the session leave the pool
    older = base[:150] + list(range(200, 250))  # another prompt's older matches
    pools = {"same": base, "masked": surfaced, "extra": older, "reordered": rng.sample(base, len(base)),
             "copied text": [*base, base[3]]}
    assert sum(1 for i in base if i not in surfaced) > 20 and len(set(older) - set(base)) == 50
    # One index of the base pool (its tokens as built) that every pool's corpus is read from.
    rank_index.save(tmp_path, [token_cache.digest(fields[i]) for i in base], [b""] * len(base), [docs[i] for i in base])
    for name, pool in pools.items():
        corpus = _for(tmp_path, [fields[i] for i in pool])
        assert isinstance(corpus, IndexedCorpus)
        assert (name == "masked") == bool(corpus.masked) or name in ("extra", "copied text"), name
        _same([fields[i] for i in pool], [docs[i] for i in pool], corpus, prompts)
    assert any(Ranker([fields[i] for i in base], [docs[i] for i in base]).rank(p) for p in prompts)


def test_typo_candidates_from_the_index_are_the_table_s_for_every_prefix(built, tmp_path):
    """IndexedCorpus.spelled reads a prefix's candidates off the sorted words and stems instead of building
    Ranker.spellings' whole table: the same entries, for every prefix any word or stem of the pool has."""
    fields, docs = built
    pool = [fields[i] for i in range(200)]
    corpus = _corpus(tmp_path, pool, pool)
    table = Ranker(pool, docs[:200]).spellings()
    prefixes = {w[:2] for w in corpus.index.words} | {t[:2] for t in corpus.index.stems} | {"zz", "é", "q"}
    assert len(table) > 100
    for prefix in prefixes:
        assert corpus.spelled(prefix) == table.get(prefix, {}), prefix
    typo = Ranker(pool, corpus=corpus)
    assert typo.corrections("how do we deplyo the resmue bulider") == Ranker(pool, docs[:200]).corrections(
        "how do we deplyo the resmue bulider") != {}


def test_typo_candidates_of_a_masked_pool_are_its_own_table_s_for_every_prefix(built, tmp_path):
    """With memories surfaced earlier in the session left out of the pool (masked), IndexedCorpus.spelled still reads
    a prefix's candidates off the index, without the words only the left-out memories hold: the same entries as the
    table Ranker builds from the pool's own words, and the same corrections."""
    fields, docs = built
    # surfaced memories leave the pool: some copies of the real ones, and three whose words no other memory has
    # (a word or stem only they hold must leave the table; "deployer" is one edit from "deplyo")
    surfaced = [("Zephyrine cluster", "where the zephyrine deployer runs", "reference", "Quorumstore backs the deployer."),
                ("Resumable uploads", "resumable chunked uploads", "project", "Portugalia office uploads resume nightly."),
                ("Bulidings", "the bulidings list", "project", "Buliding managers sign off.")]
    indexed = [fields[i] for i in range(200)] + surfaced
    pool = [i for i in range(200) if i % 9]
    corpus = _corpus(tmp_path, indexed, [fields[i] for i in pool])
    assert len(corpus.masked) == len(indexed) - len(pool) and not corpus.extra
    own = Ranker([fields[i] for i in pool], [docs[i] for i in pool])
    table = own.spellings()
    prefixes = {w[:2] for w in corpus.index.words} | {t[:2] for t in corpus.index.stems} | {"zz", "é", "q"}
    for prefix in prefixes:
        assert corpus.spelled(prefix) == table.get(prefix, {}), prefix
    typo = Ranker([fields[i] for i in pool], corpus=corpus)
    for prompt in ["how do we deplyo the resmue bulider", "what is the capital of Portugal?", *_prompts()]:
        assert typo.corrections(prompt) == own.corrections(prompt), prompt


@pytest.mark.parametrize("size", SIZES)
def test_recall_is_the_same_with_and_without_the_index(built, tmp_path, realdata, monkeypatch, size):
    from benchmarks import realistic

    folder = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, folder)
    prompts = _prompts(size)

    def answers(indexed: bool) -> list[tuple[list[str], str]]:
        manifest._rankers.clear()
        with monkeypatch.context() as patch:
            if not indexed:
                patch.setattr(rank_index, "load", lambda memory_dir: None)
            out = [([h.rel_path for h in r.selected], r.context)
                   for r in (api.recall(folder, p, engine="offline", record=False, now=NOW) for p in prompts)]
        manifest._rankers.clear()
        return out

    expected = answers(indexed=False)
    assert any(selected for selected, _ in expected)
    assert (folder / INDEX).exists()  # written by the build, for the next prompt
    calls = []
    monkeypatch.setattr(token_cache, "tokenised", lambda *a, **k: calls.append(a) or [])
    assert answers(indexed=True) == expected
    assert calls == []  # every prompt ranked from the index: no memory's tokens read


def test_a_pool_far_from_the_index_is_built_and_indexed_again(built, tmp_path):
    fields, _ = built
    indexed = fields[:100]
    pool = fields[100:100 + rank_index.MAX_EXTRA + 1]
    _save(tmp_path, indexed)
    assert isinstance(_for(tmp_path, pool), list)  # too many the index lacks: the tokens
    again = rank_index.load(tmp_path)
    assert again is not None and again.keys == [token_cache.digest(f) for f in pool]  # and the new pool indexed


FIELDS = [
    ("Deploy rule", "Deploys go out on Thursdays", "project", "Never deploy on Friday.\n**Why:** the freeze"),
    ("pnpm", "Never use npm in this repo, use pnpm", "feedback", "Résumé — “curly” naïve 日本語のテキスト"),
    ("Kafka offsets", "consumer lag on the Kafka cluster", "reference", "dashboard at grafana for lag"),
]
PROMPTS = ["when do deploys go out?", "install with pnpm", "kafka consumer lag dashboard", "Kafka Alice databse"]


def _valid(tmp_path: Path) -> bytes:
    _save(tmp_path, FIELDS)
    return (tmp_path / INDEX).read_bytes()


def _ranked_safely(tmp_path: Path) -> None:
    """Whatever the file holds: no exception, and the answers are ranks over these memories only."""
    built = _for(tmp_path, FIELDS)
    ranker = Ranker(FIELDS, built) if isinstance(built, list) else Ranker(FIELDS, corpus=built)
    for prompt in PROMPTS:
        assert all(0 <= i < len(FIELDS) for i, _ in ranker.rank(prompt))
        assert len(ranker.evidence(prompt).share) == len(FIELDS)


def _sections(data: bytes) -> tuple[list[bytes], list[int], int]:
    first = data.index(b"\n")
    second = data.index(b"\n", first + 1)
    return data[: second + 1].split(b"\n")[:2], [int(x) for x in data[first + 1: second].split()], second + 1


def test_a_planted_or_broken_file_never_breaks_ranking(tmp_path):
    valid = _valid(tmp_path)
    assert rank_index.load(tmp_path) is not None
    _, sizes, start = _sections(valid)
    rng = random.Random(3)
    damaged = [b"", b"\n\n\n", valid[: len(valid) // 2], valid + b"x", valid.replace(b"memdir-rank-index", b"other"),
               bytes(rng.randrange(256) for _ in range(2000))]
    arrays_at = start + sum(sizes[:3])
    for _ in range(40):  # positions and counts anywhere in the arrays: out of range, zero, huge
        flipped = bytearray(valid)
        at = rng.randrange(arrays_at, len(valid))
        flipped[at] = rng.choice((0, 1, 0x7F, 0xFF))
        damaged.append(bytes(flipped))
    for data in damaged:
        (tmp_path / INDEX).write_bytes(data)
        _ranked_safely(tmp_path)


def test_a_symlinked_index_is_not_followed(tmp_path):
    valid = _valid(tmp_path)
    outside = tmp_path / "outside"
    outside.write_bytes(valid)
    (tmp_path / INDEX).unlink()
    (tmp_path / INDEX).symlink_to(outside)
    assert rank_index.load(tmp_path) is None
    _save(tmp_path, FIELDS[:1])
    assert outside.read_bytes() == valid  # never written through


def test_another_tokeniser_s_or_header_reader_s_index_is_not_used(tmp_path, monkeypatch):
    from memdir import header_cache

    _valid(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(token_cache, "_fingerprint", "0" * 16)
        assert rank_index.load(tmp_path) is None
    assert rank_index.load(tmp_path) is not None
    monkeypatch.setattr(header_cache, "_fingerprint", b"1" * 16)  # its stamps stand for another reader's fields
    assert rank_index.load(tmp_path) is None


def test_memories_the_header_cache_served_are_found_by_stamp_and_an_edited_one_by_its_text(tmp_path, monkeypatch):
    from memdir import header_cache
    from memdir.header_cache import CachedHeader, HeaderCache

    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    folder = tmp_path / "m"
    folder.mkdir()
    for i, (name, description, kind, body) in enumerate(FIELDS):
        (folder / f"m{i}.md").write_text(f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n")
    HeaderCache(folder).scan()  # cached
    headers = HeaderCache(folder).scan().headers
    assert all(isinstance(h, CachedHeader) and h.stamp for h in headers)
    built, fields = rank_index.corpus_for(folder, headers, manifest.fields_of)  # no index yet: built, and indexed
    assert isinstance(built, list)
    digests = []
    monkeypatch.setattr(token_cache, "digest", lambda f: digests.append(f) or b"0" * 32)
    again, fields = rank_index.corpus_for(folder, headers, manifest.fields_of)
    assert isinstance(again, IndexedCorpus) and digests == [] and fields == [None] * 3  # by stamp
    monkeypatch.undo()
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    edited = folder / "m0.md"
    edited.write_text(edited.read_text().replace("Thursdays", "Saturdays"))
    headers = HeaderCache(folder).scan().headers
    corpus, _ = rank_index.corpus_for(folder, headers, manifest.fields_of)
    ranked = Ranker([manifest.fields_of(h) for h in headers], corpus=corpus)
    expected = Ranker([manifest.fields_of(h) for h in headers])
    assert ranked.rank("deploys on saturdays") == expected.rank("deploys on saturdays")
    assert ranked.rank("deploys on saturdays")  # the new word is found: ranked on the new text


def test_the_index_stays_within_its_read_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "RANK_INDEX_MAX_BYTES", 200)
    assert rank_index.build([token_cache.digest(f) for f in FIELDS], [b""] * 3, [document_tokens(*f) for f in FIELDS])
    _save(tmp_path, FIELDS)
    assert not (tmp_path / INDEX).exists()  # over the limit: not written, never half read back


def test_the_4_gram_pairs_have_their_own_limit(tmp_path, monkeypatch):
    """The pairs are read only at a prompt's own 4-grams: memories with long texts may push them past what the
    rest may take (8 MB), and an index over its limit is built again, and thrown away, on every prompt."""
    data = rank_index.build([token_cache.digest(f) for f in FIELDS], [b""] * 3, [document_tokens(*f) for f in FIELDS])
    assert data
    first = data.index(b"\n")
    pairs = int(data[first + 1: data.index(b"\n", first + 1)].split()[-1])
    monkeypatch.setattr(C, "RANK_INDEX_MAX_BYTES", len(data) - pairs)  # the rest just fits; the pairs are extra
    _save(tmp_path, FIELDS)
    assert rank_index.load(tmp_path) is not None
    monkeypatch.setattr(C, "RANK_INDEX_PAIRS_MAX_BYTES", pairs - 1)  # over the pairs' own limit: not read
    assert rank_index.load(tmp_path) is None
    (tmp_path / INDEX).unlink()
    _save(tmp_path, FIELDS)
    assert not (tmp_path / INDEX).exists()  # nor written


def test_an_index_past_what_a_hook_reads_is_not_built(tmp_path, monkeypatch):
    """hostile21's pool (250 memories of 64 KB of distinct words) has a rank index over RANK_INDEX_MAX_BYTES in its
    postings alone: building it (20 s) only to refuse it was most of a prompt's time once its n-gram search was
    bounded (tests/test_recall_gram_search.py)."""
    rng = random.Random(23)
    bodies = [" ".join("".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(300)) for _ in range(4)]
    documents = [document_tokens(f"note {i}", "", "project", body) for i, body in enumerate(bodies)]
    built: list[int] = []
    monkeypatch.setattr(rank_index, "build", lambda keys, stamps, docs: built.append(len(docs)))
    keys = [b"%d" % i for i in range(4)]
    monkeypatch.setattr(C, "RANK_INDEX_MAX_BYTES", 10_000)  # 4 memories of 300 words: 1,200 postings of each kind
    rank_index.save(tmp_path, keys, [b""] * 4, documents)
    assert built == []
    monkeypatch.setattr(C, "RANK_INDEX_MAX_BYTES", 8 << 20)
    rank_index.save(tmp_path, keys, [b""] * 4, documents)
    assert built == [4]
