"""The prompt hook's headers and older memories' words kept on disk (memdir.header_cache,
recall.older_words, issue 26): recall answers exactly as when every file is read and searched, cold or
warm, after edits, renames and deletes, and whatever is planted in either file; planted text is never
injected."""

from __future__ import annotations

import os
import shutil
import time
from array import array
from pathlib import Path

import pytest

from memdir import header_cache
from memdir.header_cache import HeaderCache
from memdir.scan import scan
from memdir.stages.recall import api, manifest, older_words, rank_index
from memdir.stages.recall.older_words import WordIndex
from tests.hook_runs import prompt_hook, same_size_same_mtime_edit
from tests.realdata_prompts import SIZES, sampled_prompts

NOW = time.time()
HEADERS = Path(header_cache.CACHE_FILE)
WORDS = Path(older_words.CACHE_FILE)


def _prompts(size: int | None = None) -> list[str]:
    return sampled_prompts(size) if size else sampled_prompts()


def _answers(folder: Path, prompts: list[str], disk: bool) -> list[tuple[list[str], str, list[str]]]:
    """(selected files, rendered context, the candidate pool) per prompt."""
    out = []
    for prompt in prompts:
        manifest._rankers.clear()
        result = api.recall(folder, prompt, engine="offline", record=False, now=NOW, disk_cache=disk)
        if disk:
            cache = HeaderCache(folder)
            pool = manifest.candidates(cache.scan().headers, prompt, words=WordIndex(cache))
        else:
            pool = manifest.candidates(scan(folder).headers, prompt)
        out.append(([h.rel_path for h in result.selected], result.context, [h.rel_path for h in pool]))
    manifest._rankers.clear()
    return out


_UNCACHED: dict[tuple[str, tuple[str, ...]], list[tuple[list[str], str, list[str]]]] = {}


def _uncached_answers(built: Path, prompts: list[str]) -> list[tuple[list[str], str, list[str]]]:
    """_answers(built, prompts, disk=False) of the freshly built folder, computed once per folder path and prompts:
    23 planted-cache cases each computed the same answers again (a sixth of the suite's test time). The path is
    part of the key, and `folders` builds every test's folder at one path: each memory's block names its path, so a
    folder one letter longer (pytest's `heade15` against `heade0`) took the context past its 8,000-character budget
    and a memory was cut differently when answers were once shared across paths."""
    key = (str(built), tuple(prompts))
    if key not in _UNCACHED:
        _UNCACHED[key] = _answers(built, prompts, disk=False)
    return _UNCACHED[key]


@pytest.fixture
def folders(realdata, tmp_path_factory, monkeypatch):
    """The real 55-file folder, and a realistic 260-memory one built from it (60 older memories), with
    files just written counted as settled (they are kept in the cache at once). Built afresh for each test, always
    at the same path in this process (_uncached_answers keys on it)."""
    from benchmarks import realistic

    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    monkeypatch.setattr(manifest, "WORD_INDEX_MIN_OLDER", 0)  # the 60 older memories through the words on disk
    place = tmp_path_factory.getbasetemp() / "header-cache-folders"
    shutil.rmtree(place, ignore_errors=True)
    place.mkdir()
    real = place / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, real)
    # Ages from NOW, as recall counts them: a test may build its folder minutes after another test of this module,
    # and files aged from the clock crossed a day ("saved 364 days ago") in a slow full run.
    built = realistic.build(place / "built", 260, source_folder=real, now=NOW)
    return real, built


@pytest.fixture
def no_rank_index(monkeypatch):
    """The planted and broken cache cases, without writing the ranking's own index (recall.rank_index): each case
    recalls cold, so each wrote one (half a second for 260 memories) that nothing then read. Its answers are the
    same with it or without it (tests/test_rank_index.py); the cold-and-warm test here keeps every cache on."""
    monkeypatch.setattr(rank_index, "save", lambda *args, **kwargs: None)


@pytest.mark.parametrize("size", SIZES)
def test_recall_is_the_same_with_the_disk_caches_cold_and_warm(folders, size):
    real, built = folders
    every = _prompts(size)
    assert len(every) == size
    for folder in (real, built):
        expected = _uncached_answers(folder, every)
        assert any(selected for selected, _, _ in expected)
        assert not (folder / HEADERS).exists()
        assert _answers(folder, every[:1], disk=True) == expected[:1]  # cold: writes them
        assert (folder / WORDS).exists() == (folder is built)  # 55 memories: none is older than the newest 200
        written = [(folder / f).stat().st_mtime_ns for f in (HEADERS, WORDS) if (folder / f).exists()]
        assert _answers(folder, every, disk=True) == expected  # warm
        assert [(folder / f).stat().st_mtime_ns for f in (HEADERS, WORDS) if (folder / f).exists()] == written
    assert any(len(pool) > manifest.NEWEST for _, _, pool in _answers(built, every, disk=False))  # older matches


@pytest.mark.parametrize("size", SIZES)
def test_a_few_older_memories_are_searched_without_the_words_on_disk(folders, monkeypatch, size):
    _, built = folders
    every = _prompts(size)
    expected = _uncached_answers(built, every)
    monkeypatch.setattr(manifest, "WORD_INDEX_MIN_OLDER", 200)  # as shipped: 60 older memories are searched directly
    assert _answers(built, every, disk=True) == expected
    assert not (built / WORDS).exists()


def test_edits_renames_and_deletes_are_never_served_from_the_cache(folders):
    _, built = folders
    prompts = _prompts()[:6]
    _answers(built, prompts, disk=True)  # warm
    older = scan(built).headers[manifest.NEWEST + 5:]
    target = Path(older[0].abs_path)
    # An older memory's longest word becomes one no memory has, at the same size and mtime: only its
    # new text puts it among the candidates for a prompt naming that word.
    body = target.read_text(encoding="utf-8").split("---", 2)[2]
    word = max((w for w in body.split()[:80] if w.isascii() and w.isalpha()), key=len)
    replacement = "zq" + "k" * (len(word) - 2)
    same_size_same_mtime_edit(target, word, replacement)
    os.rename(older[3].abs_path, built / "renamed_memory.md")
    Path(older[4].abs_path).unlink()
    prompts.append(f"and the {replacement}?")
    before = (built / WORDS).read_bytes().split(b"\n")[0].split(b" ")
    expected = _answers(built, prompts, disk=False)
    assert target.name in expected[-1][2]
    assert _answers(built, prompts, disk=True) == expected
    after = (built / WORDS).read_bytes().split(b"\n")[0].split(b" ")
    assert after[3].startswith(before[3] + b",") and int(after[4]) == int(before[4]) + 2  # extended: edited, renamed


def _new_word(path: Path, tag: str) -> tuple[str, str, str]:
    """(the file's text, its longest early word, a word of that length no memory has)."""
    text = path.read_text(encoding="utf-8")
    word = max((w for w in text.split("---", 2)[2].split()[:80] if w.isascii() and w.isalpha()), key=len)
    return text, word, (tag + "k" * len(word))[: len(word)]


def test_numbers_two_hooks_gave_out_at_once_are_never_mixed_up(folders):
    """Two hooks that both saw a change number memories from the same file: the word index one wrote
    is not used with the header cache the other wrote."""
    _, built = folders
    _answers(built, _prompts()[:1], disk=True)  # warm
    parent = (built / HEADERS).read_bytes()
    older = scan(built).headers[manifest.NEWEST + 5:]
    x, y = Path(older[0].abs_path), Path(older[1].abs_path)
    x_text, x_word, x_new = _new_word(x, "zqx")
    same_size_same_mtime_edit(x, x_word, x_new)
    _answers(built, [f"and the {x_new}?"], disk=True)  # hook A: numbers the edited x, indexes its words
    before = x.stat()
    x.write_text(x_text, encoding="utf-8")  # x as it was, another stamp
    os.utime(x, ns=(before.st_atime_ns, before.st_mtime_ns))
    (built / HEADERS).write_bytes(parent)  # hook B wrote its header cache from the same parent, after A
    _, y_word, y_new = _new_word(y, "zqy")
    same_size_same_mtime_edit(y, y_word, y_new)
    prompts = [f"and the {x_new}?", f"and the {y_new}?"]
    expected = _answers(built, prompts, disk=False)
    assert y.name in expected[1][2] and x.name not in expected[0][2]
    assert _answers(built, prompts, disk=True) == expected


def test_a_file_changed_within_its_stamps_tick_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(header_cache, "RACY_NS", 60 * 10**9)
    (tmp_path / "a.md").write_text("---\nname: a\ndescription: deploys\ntype: project\n---\n\nbody\n")
    HeaderCache(tmp_path).scan()
    assert _entries(tmp_path / HEADERS) == 0
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    HeaderCache(tmp_path).scan()
    assert _entries(tmp_path / HEADERS) == 1


def _entries(path: Path) -> int:
    """The count of entries a header-cache file says it holds."""
    return int(path.read_bytes().split(b"\n", 1)[0].split(b" ")[6])


def test_headers_read_back_exactly_and_what_the_format_cannot_hold_is_read_each_time(tmp_path, monkeypatch):
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    (tmp_path / "a.md").write_text("---\nname: a\ndescription: 'with: colon'\ntype: project\n---\n\nx\ty\n\nz é\n")
    (tmp_path / "b\tc.md").write_text("---\nname: b\ndescription: d\ntype: user\n---\n\na tab in its path\n")
    (tmp_path / "c.md").write_text("---\nname: c\ndescription: a: b\ntype: user\n---\n\nread leniently\n")
    expected = [(h.rel_path, h.name, h.description, h.type, h.problem, h.excerpt, h.mtime)
                for h in scan(tmp_path).headers]
    for _ in range(2):
        cache = HeaderCache(tmp_path)
        got = cache.scan().headers
        assert [(h.rel_path, h.name, h.description, h.type, h.problem, h.excerpt, h.mtime) for h in got] == expected
    assert {type(h).__name__ for h in got} == {"CachedHeader", "Header"}  # b\tc.md is read every time
    assert sorted(h.rel_path for h in cache.doc) == ["a.md", "c.md"]
    assert any(h.problem for h in got)


def _first(body: bytes, token: bytes = b"0123456789abcdef") -> bytes:
    """A header-cache file, valid as far as its first line and arrays go, whose entry lines are `body`
    (each ending with a newline): numbers from 0, each offered, excerpts empty."""
    count = body.count(b"\n")
    first = b"%s %s %s lineage %d %d %d\n" % (header_cache.FORMAT, header_cache.fingerprint(), token, count, count,
                                               len(body))
    return first + body + array("I", range(count)).tobytes() + b"\x01" * count + array("Q", [0] * count).tobytes()


def _layout(data: bytes) -> tuple[list[bytes], array, bytearray, array, bytes]:
    """A header-cache file's parts: first line and entry lines, numbers, offer flags, excerpt ends, excerpts."""
    first = data[: data.find(b"\n")]
    count, length = int(first.split(b" ")[6]), int(first.split(b" ")[7])
    at = len(first) + 1 + length
    lines = [first, *data[len(first) + 1 : at].split(b"\n")[:-1]]
    numbers, ends = array("I"), array("Q")
    numbers.frombytes(data[at : at + 4 * count])
    offer = bytearray(data[at + 4 * count : at + 5 * count])
    ends.frombytes(data[at + 5 * count : at + 13 * count])
    return lines, numbers, offer, ends, data[at + 13 * count :]


def _joined(lines: list[bytes], numbers: array, offer: bytearray, ends: array, excerpts: bytes) -> bytes:
    return b"\n".join(lines) + b"\n" + numbers.tobytes() + bytes(offer) + ends.tobytes() + excerpts


def test_a_planted_header_is_never_injected(folders):
    real, _ = folders
    # The first labelled prompt that recalls something without the model (most recall nothing: issue 21).
    prompt, (selected, context, _) = next((p, a) for p in _prompts() if (a := _answers(real, [p], disk=False)[0])[0])
    _answers(real, [prompt], disk=True)
    data = (real / HEADERS).read_bytes()
    target = next(h for h in scan(real).headers if h.rel_path == selected[0])
    real_description = target.description.encode()
    planted = (b"PLANTED " * 100)[: len(real_description)]
    assert data.count(b"\t+" + real_description + b"\t") == 1
    (real / HEADERS).write_bytes(data.replace(b"\t+" + real_description + b"\t", b"\t+" + planted + b"\t"))
    cache = HeaderCache(real)
    served = next(h for h in cache.scan().headers if h.rel_path == target.rel_path)
    assert served.description == planted.decode()  # ranked on what the cache says
    assert [h.description for h in cache.refreshed([served])] == [target.description]  # rendered from the file
    got_selected, got_context, _ = _answers(real, [prompt], disk=True)[0]
    assert "PLANTED" not in got_context
    if got_selected == selected:
        assert got_context == context


@pytest.mark.parametrize("content", [
    b"", b"\x00" * 1000, os.urandom(5000),
    b"memdir-headers 1 0000000000000000 t l 1 1 000000000060\nx.md\t1\t2\t3\t4\t-\t-\t-\t-\t0\t0\t0\n",  # another reader's
    b"FIRST",  # first line only, no newline
    _first(b"not\ta\tline\n"),
    _first(b"\t".join([b"x"] * 9) + b"\n"),
    _first(b"\t".join([b"user_a.md", b"1", b"2", b"3", b"4", b"*a", b"-", b"-", b"-"]) + b"\n"),
    _first(b"\xff\xfe\tbroken\n"),
    _first(b"a.md\n") + b"x" * 10,
    _first(b"a.md\n")[:-14],  # the arrays cut short
    _first(b"a.md\n").replace(b" 1 1 5\n", b" 1 1 99999\n"),  # the lines run past the end
    _first(b"a.md\nb.md\n").replace(b" 2 2 10\n", b" 2 1 10\n"),  # fewer numbers given out than used
    _first(b"a.md\n").replace(b" 1 1 5\n", b" 1 99999999 5\n"),  # more entries than it could hold
    _first(b"a.md\n" * 3)[:-1],  # a line short
    _first(b"a.md\n" * 3).replace(b" 3 3 15\n", b" 3 1 15\n"),  # more lines than entries
])
def test_a_planted_or_broken_header_cache_is_never_used_and_never_fails(folders, no_rank_index, content):
    """One prompt: its recall reads the planted file and writes it anew, and its pool is then read from the new
    one (_answers), so a second prompt only read the new file once more. On the real 55-file folder: the header cache
    is read the same way whatever the folder's size, and the 260-memory one took 16 cases 8 s of the suite."""
    real, _ = folders
    prompts = _prompts()[:1]
    expected = _uncached_answers(real, prompts)
    (real / HEADERS).parent.mkdir(parents=True, exist_ok=True)
    (real / HEADERS).write_bytes(content.replace(b"FIRST", _first(b"")))
    assert _answers(real, prompts, disk=True) == expected
    assert b"0123456789abcdef" not in (real / HEADERS).read_bytes().split(b"\n")[0]  # rewritten


def test_planted_stamps_and_offsets_of_real_files_only_change_what_is_ranked(folders):
    """Entries that match real files' stamps but point their excerpts anywhere in the file: no failure."""
    _, built = folders
    prompts = _prompts()[:3]
    _answers(built, prompts, disk=True)
    lines, numbers, offer, ends, excerpts = _layout((built / HEADERS).read_bytes())
    for i in range(len(numbers)):
        numbers[i], offer[i], ends[i] = i % 3, i % 2, i * 13 % 5000 if i % 5 else 2**63
    (built / HEADERS).write_bytes(_joined(lines, numbers, offer, ends, excerpts))
    for selected, context, _ in _answers(built, prompts, disk=True):
        for rel in selected:
            assert rel in context


def _words_file(built: Path) -> bytes:
    _answers(built, _prompts()[:1], disk=True)
    return (built / WORDS).read_bytes()


def _blob_start(data: bytes) -> int:
    return data.find(b"\n", data.find(b"\n", data.find(b"\n") + 1) + 1) + 1


@pytest.mark.parametrize("damage", [
    lambda data: os.urandom(3000),
    lambda data: data[:-100],  # numbers missing
    lambda data: data + b"\x00" * 4,  # numbers past the last end
    lambda data: b"\n".join([data.split(b"\n")[0], b" ".join(reversed(data.split(b"\n")[1].split(b" "))),
                             *data.split(b"\n")[2:]]),  # vocabulary not sorted
    lambda data: data[: data.find(b"\n", data.find(b"\n") + 1) + 1] + b"!!" + data[_blob_start(data) - 1 :],  # ends
    lambda data: data[: _blob_start(data)] + b"\xff" * (len(data) - _blob_start(data)),  # numbers never given out
    lambda data: data.replace(b"older-words 1", b"older-words 0", 1),
])
def test_a_planted_or_broken_word_index_gives_the_same_answers(folders, no_rank_index, damage):
    _, built = folders
    prompts = _prompts()[:2]
    expected = _uncached_answers(built, prompts)
    assert all(len(pool) > manifest.NEWEST for _, _, pool in expected)  # older memories: the word index is asked
    (built / WORDS).write_bytes(damage(_words_file(built)))
    assert _answers(built, prompts, disk=True) == expected


def test_a_folder_or_symlink_at_the_cache_paths_is_neither_read_nor_replaced(folders, tmp_path):
    _, built = folders
    prompts = _prompts()[:3]
    expected = _uncached_answers(built, prompts)
    (built / HEADERS).parent.mkdir(parents=True, exist_ok=True)
    (built / HEADERS).mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"kept")
    (built / WORDS).symlink_to(elsewhere)
    assert _answers(built, prompts, disk=True) == expected
    assert (built / HEADERS).is_dir() and (built / WORDS).is_symlink() and elsewhere.read_bytes() == b"kept"


def test_the_prompt_hook_uses_them(folders, monkeypatch, tmp_path):
    _, built = folders
    monkeypatch.setenv("MEMDIR_PATH", str(built))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv("MEMDIR_RECALL_SERVER", "0")
    # A prompt that recalls without the model (issue 21: most labelled prompts do not).
    hook = prompt_hook(tmp_path, "what did we decide about using Gemini for this repo?")

    first = hook()
    assert "additionalContext" in first and (built / HEADERS).exists() and (built / WORDS).exists()
    assert hook() == first


def test_the_cache_file_is_closed_when_no_memory_is_a_candidate(tmp_path, monkeypatch):
    """The prompt hook's disk cache holds its file open until the chosen memories are refreshed from it; a prompt
    with no candidate (every memory already shown this session) returned before that and left it open (tidy19)."""
    (tmp_path / "user_pnpm.md").write_text("---\nname: pnpm\ndescription: Prefers pnpm over npm for installs\n"
                                            "type: user\n---\nPrefers pnpm over npm.\n", encoding="utf-8")
    api.recall(tmp_path, "pnpm installs", engine="offline", session_id="s1", disk_cache=True)  # shown once
    closed: list[bool] = []
    opened = HeaderCache.close
    monkeypatch.setattr(HeaderCache, "close", lambda self: (closed.append(True), opened(self))[1])
    result = api.recall(tmp_path, "pnpm installs", engine="offline", session_id="s1", disk_cache=True)
    assert result.selected == [] and result.candidates == 0 and closed == [True]
