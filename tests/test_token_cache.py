"""Each memory's ranking tokens kept on disk (recall.token_cache, issue 26): recall answers exactly as
when every memory is tokenised afresh, cold or warm, after edits, renames and deletes, and whatever
is planted in the cache file."""

from __future__ import annotations

import binascii
import os
import random
import shutil
import time
from array import array
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.scan import scan
from memdir.stages.recall import api, manifest, rank_index, token_cache
from memdir.stages.recall.bm25 import BM25, GramBM25
from memdir.stages.recall.lexical import _word_grams, char_grams, document_tokens
from tests.hook_runs import prompt_hook, same_size_same_mtime_edit
from tests.realdata_prompts import SIZES, sampled_prompts

NOW = time.time()
CACHE = Path(token_cache.CACHE_FILE)


def _realdata_prompts(size: int | None = None) -> list[str]:
    return sampled_prompts(size) if size else sampled_prompts()


def _fresh(memory_dir, fields, fill=False):
    return [document_tokens(*f) for f in fields]


def _answers(folder: Path, prompts: list[str], monkeypatch, cached: bool) -> list[tuple[list[str], str]]:
    """(selected files, rendered context) per prompt, from a ranker built in this call (the in-process
    table kept per folder text is emptied first: the tokens come from the cache file, or afresh)."""
    manifest._rankers.clear()
    with monkeypatch.context() as patch:
        if not cached:
            patch.setattr(token_cache, "tokenised", _fresh)
            patch.setattr(rank_index, "load", lambda memory_dir: None)  # nor the pool's postings (recall.rank_index)
            patch.setattr(rank_index, "save", lambda *args: None)
        out = []
        for prompt in prompts:
            result = api.recall(folder, prompt, engine="offline", record=False, now=NOW)
            out.append(([h.rel_path for h in result.selected], result.context))
    manifest._rankers.clear()
    return out


@pytest.fixture
def folders(realdata, tmp_path):
    """The real 55-file folder, and a realistic 80-memory folder built from it (benchmarks/realistic.py)."""
    from benchmarks import realistic

    real = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, real)
    built = realistic.build(tmp_path / "built", 80, source_folder=real)
    return real, built


@pytest.mark.parametrize("size", SIZES)
def test_recall_is_the_same_cold_warm_and_uncached(folders, monkeypatch, size):
    every = _realdata_prompts(size)
    assert len(every) == size
    for folder, prompts in zip(folders, (every, every[: size // 3]), strict=True):  # the built folder: one set's prompts
        expected = _answers(folder, prompts, monkeypatch, cached=False)
        assert any(selected for selected, _ in expected)  # the comparison is not of empty answers
        assert not (folder / CACHE).exists()
        assert _answers(folder, prompts[:1], monkeypatch, cached=True) == expected[:1]  # cold: writes it
        written = (folder / CACHE).stat().st_mtime_ns
        assert _answers(folder, prompts, monkeypatch, cached=True) == expected  # warm
        assert (folder / CACHE).stat().st_mtime_ns == written  # nothing changed: not rewritten


def test_edits_renames_and_deletes_are_never_ranked_from_stale_tokens(folders, monkeypatch):
    real, _ = folders
    prompts = _realdata_prompts()
    _answers(real, prompts, monkeypatch, cached=True)  # warm
    files = sorted(p for p in real.glob("*.md") if p.name != C.INDEX_NAME)
    # A memory's longest word in its first lines becomes a word no other memory has, at the same size
    # and mtime: only tokens of the new text find it for a prompt naming that word.
    offered = {h.rel_path for h in scan(real).headers if manifest.candidates([h], "")}
    target = [f for f in files if f.name in offered][3]
    head = target.read_text(encoding="utf-8").split("---", 2)[2].splitlines()[:12]
    word = max((w for line in head for w in line.split() if w.isascii() and w.isalpha()), key=len)
    replacement = "zq" + "k" * (len(word) - 2)
    same_size_same_mtime_edit(target, word, replacement)
    os.rename(files[5], real / "renamed_memory.md")
    files[7].unlink()
    prompts.append(f"and the {replacement}?")
    expected = _answers(real, prompts, monkeypatch, cached=False)
    assert target.name in expected[-1][0]
    assert _answers(real, prompts, monkeypatch, cached=True) == expected


def test_an_edited_memory_gets_its_new_tokens(tmp_path):
    fields = [("Deploy rule", "Deploys go out on Thursdays", "project", "Never on Friday. **Why:** freeze")]
    assert _tokens(token_cache.tokenised(tmp_path, fields)) == _tokens(_fresh(None, fields))
    edited = [("Deploy rule", "Deploys go out on Saturdays", "project", "Never on Friday. **Why:** freeze")]
    got = token_cache.tokenised(tmp_path, edited)
    assert _tokens(got) == _tokens(_fresh(None, edited)) != _tokens(_fresh(None, fields))
    assert len(_lines(tmp_path)) == 2  # both texts kept, the one just used first
    assert _lines(tmp_path)[0].startswith(token_cache.digest(edited[0]))


def _tokens(docs) -> list[tuple]:
    return [(d.words, d.written, d.gram_length, d.names, d.related) for d in docs]


def _lines(folder: Path) -> list[bytes]:
    return (folder / CACHE).read_bytes().split(b"\n")[2:]


FIELDS = [
    ("Deploy rule", "Deploys go out on Thursdays", "project", "Never deploy on Friday.\n**Why:** the freeze"),
    ("pnpm", "Never use npm in this repo, use pnpm", "feedback", "Résumé — “curly” naïve 日本語のテキスト"),
    ("Kafka offsets", "consumer lag", "reference", "aaaaa aaaa bbb b c 12 12345"),
]


def _planted(tmp_path: Path, data: bytes) -> None:
    (tmp_path / CACHE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / CACHE).write_bytes(data)


def _header() -> bytes:
    return f"{token_cache.FORMAT} {token_cache.fingerprint()}".encode()


def _array(code: str, values: list[int]) -> bytes:
    return code.encode() + binascii.b2a_base64(array(code, values).tobytes(), newline=False)


def _file(fields=FIELDS[0], foreign: int | None = None, cut: int | None = None, **change: bytes | str) -> bytes:
    """A cache file holding one valid entry for `fields`, with some of its eight parts replaced;
    `foreign`: that part lists one word of the vocabulary the memory does not hold."""
    vocabulary: list[str] = []
    line = token_cache.encode(token_cache.digest(fields), document_tokens(*fields), vocabulary, {})
    assert line is not None
    parts = line.split(b"\t")
    for index, value in change.items():
        parts[int(index[1:])] = value.encode() if isinstance(value, str) else value
    if foreign is not None:
        vocabulary.append("kafka")
        parts[foreign] = _array("I", [len(vocabulary) - 1])
    data = b"\n".join([_header(), " ".join(vocabulary).encode(), b"\t".join(parts)])
    return data[:cut]


def _many(index: int, value: int, less: int = 0) -> bytes:
    """Counts for the terms of part `index - 1` of FIELDS[0]'s entry, each `value`, `less` of them left out."""
    terms = array("I")
    terms.frombytes(binascii.a2b_base64(_file().split(b"\n")[2].split(b"\t")[index - 1][1:]))
    return _array("H", [value] * (len(terms) - less))


@pytest.mark.parametrize("content", [
    b"",
    b"\x00" * 1000,
    os.urandom(5000),
    b"memdir-tokens 2 0000000000000000\n",  # another tokeniser's file
    b"memdir-tokens 2",
    _file().replace(b"memdir-tokens 2 ", b"memdir-tokens 2 x"),
    _file().replace(b"memdir-tokens 2", b"memdir-tokens 1"),
    _file(cut=-7),  # truncated
    b"\n".join(_file().split(b"\n")[::2]),  # no vocabulary line
    _file().replace(b"deploy", b"d\xffploy"),  # not UTF-8
    _file(p1="Ixx"),  # positions not base64
    _file(p1="IAAA"),  # positions: not a whole number of them
    _file(p1=_array("I", [10**6])),  # past the vocabulary
    _file(p1=_array("I", [0, 0]), p2=_array("H", [1, 1])),  # a term twice
    _file(p1=_array("Q", [0])),  # unknown position type
    _file(p2=_many(2, 1, less=1)),  # one count too few
    _file(p4=_many(4, 0)),  # zero counts
    _file(p4=b"Z" + _many(4, 1)[1:]),  # unknown count type
    _file(p5="-3"), _file(p5="1e9"), _file(p5="9" * 40),
    _file(foreign=6),  # a name the memory does not hold
    _file(foreign=7),  # a related word it does not hold
    _file() + b"\textra",
    _file(p0="0" * 32),
    _file(FIELDS[1]).replace(b"\t", b"\n", 3),
])
def test_a_planted_or_broken_cache_is_never_used_and_never_fails(tmp_path, content):
    _planted(tmp_path, content)
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))
    assert _lines(tmp_path)[0].startswith(token_cache.digest(FIELDS[0]))  # rewritten, the good entries first
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))  # and then read


def test_the_entries_it_writes_are_read_back(tmp_path):
    token_cache.tokenised(tmp_path, FIELDS)
    lines = _lines(tmp_path)
    vocabulary = (tmp_path / CACHE).read_bytes().split(b"\n")[1].decode().split(" ")
    assert [token_cache.parse(line, line[:32], vocabulary) is not None for line in lines] == [True] * 3
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))


def test_a_cache_file_over_the_limit_or_not_a_regular_file_is_neither_read_nor_written(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "TOKEN_CACHE_MAX_BYTES", 100)
    token_cache.tokenised(tmp_path, FIELDS)
    assert not (tmp_path / CACHE).exists()  # never written past what would be read back
    monkeypatch.undo()
    elsewhere = tmp_path / "elsewhere"
    planted = _file(foreign=6)
    elsewhere.write_bytes(planted)
    (tmp_path / CACHE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / CACHE).symlink_to(elsewhere)
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))  # not read through it
    assert (tmp_path / CACHE).is_symlink() and elsewhere.read_bytes() == planted  # nor written through it
    (tmp_path / CACHE).unlink()
    os.mkfifo(tmp_path / CACHE)
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))  # no hang
    (tmp_path / CACHE).unlink()
    (tmp_path / CACHE).mkdir()
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))
    assert (tmp_path / CACHE).is_dir()


def test_it_keeps_at_most_the_entry_limit_with_those_just_used_first(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "TOKEN_CACHE_MAX_ENTRIES", 4)
    many = [(f"note {i}", f"about topic{i}", "project", f"body {i}") for i in range(6)]
    token_cache.tokenised(tmp_path, many[:3])
    token_cache.tokenised(tmp_path, many[3:])
    keys = [line[:32] for line in _lines(tmp_path)]
    assert keys == [token_cache.digest(f) for f in (many[3], many[4], many[5], many[0])]


def test_a_term_the_format_cannot_hold_is_tokenised_every_time(tmp_path):
    odd = [("Name", "a description", "my type", "body text")]  # a type with a space is one term
    assert _tokens(token_cache.tokenised(tmp_path, odd)) == _tokens(_fresh(None, odd))
    assert not (tmp_path / CACHE).exists()


def test_a_read_only_folder_still_ranks(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(token_cache.safefs_write, "write_bytes", refuse)
    assert _tokens(token_cache.tokenised(tmp_path, FIELDS)) == _tokens(_fresh(None, FIELDS))


def test_gram_scores_are_bm25_over_the_gram_lists():
    """GramBM25 counts n-grams from the words (overlapping ones, short words, non-ASCII) as the lists did."""
    rng = random.Random(26)
    alphabet = ["a", "aa", "aaaa", "aaaaaa", "ab", "b", "abab", "abababab", "résumé", "naïve", "日本語", "データ", "x1", "1234", "ç"]
    for _ in range(40):
        fields = [tuple(" ".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(3)) + ("",)
                  for _ in range(rng.randint(1, 8))]
        docs = [document_tokens(name, desc, kind, body) for name, desc, body, kind in fields]
        gram_lists = [[g for word, times in d.written.items() for g in _word_grams(word, 4) * times] for d in docs]
        assert [d.gram_length for d in docs] == [len(grams) for grams in gram_lists]
        lists, lazy = BM25(gram_lists), GramBM25([d.written for d in docs], [d.gram_length for d in docs])
        for query in ("aaaaa ab", "résumé naïve", "日本語 データ", "abab x1 1234", "b a ç", "zzz"):
            assert lazy.scores(char_grams(query)) == lists.scores(char_grams(query)), query


def test_a_ranker_asked_while_its_word_index_is_built_scores_every_document():
    """The warm server ranks on several threads with one cached ranker. Its second query builds the word ->
    documents index; a query from another thread at that moment (simulated here at the 3rd of 6 documents)
    saw the index half built and scored only the documents indexed so far."""
    docs = [document_tokens(f"deploy note {i}", "release train deploys", "project", "") for i in range(6)]
    query = char_grams("deploys release")
    expected = BM25([[g for word, times in d.written.items() for g in _word_grams(word, 4) * times]
                     for d in docs]).scores(query)
    meanwhile: list[list[float]] = []

    class Counts(dict):
        def items(self):  # what building the index reads of each document, and only that
            if self is written[2] and not meanwhile:
                meanwhile.append([])  # once: the query below builds an index of its own
                meanwhile[0] = lazy.scores(query)
            return super().items()

    written = [Counts(d.written) for d in docs]
    lazy = GramBM25(written, [d.gram_length for d in docs])
    assert lazy.scores(query) == expected  # the first query: a pass over the documents, no index
    assert lazy.scores(query) == expected  # the second: builds the index, with the other thread's query inside
    assert meanwhile == [expected] and all(score > 0 for score in expected)


def test_the_prompt_hook_prints_the_same_with_no_cache_a_warm_one_or_a_planted_one(folders, monkeypatch, tmp_path):
    real, _ = folders
    monkeypatch.setenv("MEMDIR_PATH", str(real))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    # A prompt that recalls without the model (issue 21: most labelled prompts do not).
    hook = prompt_hook(tmp_path, "what did we decide about using Gemini for this repo?")

    first = hook()  # cold: writes the cache
    assert "additionalContext" in first and (real / CACHE).exists()
    assert hook() == first  # warm
    for planted in (os.urandom(20000), _file(), b"\n".join([_header(), b"a b c", b"x" * 32 + b"\t" * 7])):
        _planted(real, planted)
        assert hook() == first
    assert not (real / ".memdir" / "hook.log").exists() or "token" not in (real / ".memdir" / "hook.log").read_text()


def test_a_planted_vocabulary_of_millions_of_words_is_refused_before_it_is_split(tmp_path, monkeypatch):
    """Found by a hostile review: a well-formed file with a 4 M-word vocabulary cost every hook 378 MB."""
    from memdir import constants as C
    from memdir.stages.recall import token_cache

    monkeypatch.setattr(C, "TOKEN_CACHE_MAX_WORDS", 1000)
    path = tmp_path / token_cache.CACHE_FILE
    path.parent.mkdir(parents=True)
    path.write_bytes(token_cache._header("t") + b"\n" + b" ".join(b"w%d" % i for i in range(1001)) + b"\n")
    assert token_cache._load(tmp_path, "t") == ([], {})
