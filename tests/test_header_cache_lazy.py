"""The header cache decodes per memory only what a prompt uses (memdir.header_cache, issue 26): every
entry's offer flag and number, the fields and excerpt of the memories recall ranks; entries that are
out of place or do not decode still give exactly what reading the files gives."""

from __future__ import annotations

import os
import shutil
from array import array
from pathlib import Path

import pytest

from memdir import header_cache, scan as one_file
from memdir.header_cache import CachedHeader, HeaderCache
from memdir.scan import iter_memory_files, memory_files_by_folder, scan
from memdir.stages.recall import manifest
from memdir.stages.recall.older_words import WordIndex
from tests.test_header_cache import HEADERS, WORDS, _answers, _joined, _layout, _prompts

FIELDS = ("rel_path", "name", "description", "type", "problem", "excerpt", "mtime")


def _fields(headers) -> list[tuple]:
    return [tuple(getattr(h, f) for f in FIELDS) for h in headers]


@pytest.fixture
def built(realdata, tmp_path, monkeypatch):
    """A realistic 260-memory folder (60 older memories searched through the words on disk), settled at once."""
    from benchmarks import realistic

    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    monkeypatch.setattr(manifest, "WORD_INDEX_MIN_OLDER", 0)
    # A prompt hook's process: none of the warm server's in-memory state, which an earlier test in this worker
    # (an MCP or UI server run in-process) may have switched on. Its word index reads every older header.
    for kept in ("_index", "_tokens", "_packer"):
        monkeypatch.setattr(manifest, kept, None)
    real = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, real)
    return realistic.build(tmp_path / "built", 260, source_folder=real)


def _reads(monkeypatch) -> list[str]:
    """The memory files read from now on (one_file.read_header's calls)."""
    read: list[str] = []
    real = one_file.read_header

    def counted(path, *args, **kwargs):
        read.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(one_file, "read_header", counted)
    return read


def test_a_prompt_decodes_only_the_headers_it_ranks(built):
    prompts = _prompts()[:4]
    _answers(built, prompts, disk=True)  # warm: both files written
    for prompt in prompts:
        cache = HeaderCache(built)
        headers = cache.scan().headers
        pool = manifest.candidates(headers, prompt, words=WordIndex(cache))
        assert all(isinstance(h, CachedHeader) for h in headers)
        assert _fields(pool) == _fields(manifest.candidates(scan(built).headers, prompt))
        touched = {h.rel_path for h in headers if h.parsed is not None or h.text is not None}
        assert touched <= {h.rel_path for h in pool} and len(pool) < len(headers)
        assert cache.entries is not None and cache.entries.blob is None  # no excerpt read but the pool's


def test_what_is_offered_is_the_same_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    memories = {
        "plain.md": "---\nname: plain\ndescription: deploys on Tuesdays\ntype: project\n---\n\nbody\n",
        "old.md": "---\nname: old\ndescription: Superseded by plain.md\ntype: project\n---\n\nbody\n",
        "broken.md": "---\nname: broken\ntype: nonsense\n---\n\nno description\n",
        "broken_described.md": "---\nname: b\ndescription: still useful\ntype: nonsense\n---\n\nbody\n",
        "bare.md": "no frontmatter at all\n",
    }
    for name, text in memories.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    expected = sorted(h.rel_path for h in manifest.offered(scan(tmp_path).headers))
    assert expected == ["broken_described.md", "plain.md"]
    for _ in range(2):  # cold, then warm
        headers = HeaderCache(tmp_path).scan().headers
        assert sorted(h.rel_path for h in manifest.offered(headers)) == expected
    assert all(isinstance(h, CachedHeader) for h in headers)


def test_entries_out_of_place_are_served_and_written_back_in_order(built, monkeypatch):
    _answers(built, _prompts()[:1], disk=True)
    lines, numbers, offer, ends, excerpts = _layout((built / HEADERS).read_bytes())
    starts = [0, *ends[:-1]]
    order = list(reversed(range(len(numbers))))
    ends_out, at, parts = [], 0, []
    for i in order:
        parts.append(excerpts[starts[i] : ends[i]])
        at += ends[i] - starts[i]
        ends_out.append(at)
    shuffled = _joined([lines[0], *(lines[1 + i] for i in order)], array("I", [numbers[i] for i in order]),
                       bytearray(offer[i] for i in order), array("Q", ends_out), b"".join(parts))
    (built / HEADERS).write_bytes(shuffled)
    read = _reads(monkeypatch)
    cache = HeaderCache(built)
    assert _fields(cache.scan().headers) == _fields(scan(built).headers)
    assert cache._places is not None and (built / HEADERS).read_bytes() != shuffled  # found by path, put back
    read.clear()
    cache = HeaderCache(built)
    cache.scan()
    assert cache._places is None and not read  # in place: no entry looked up by path, no file read


def test_an_entry_that_does_not_decode_is_read_from_its_file_and_healed(built, monkeypatch):
    _answers(built, _prompts()[:1], disk=True)
    lines, numbers, offer, ends, excerpts = _layout((built / HEADERS).read_bytes())
    parts = lines[1 + 4].split(b"\t")  # entry 4's line (lines[0] is the first line)
    parts[6] = b"*" + parts[6][1:]  # its description: neither "-" nor "+..."
    lines[1 + 4] = b"\t".join(parts)
    ends[7] = 2**40  # entry 7's excerpt ends past the file (and entry 8's starts there)
    (built / HEADERS).write_bytes(_joined(lines, numbers, offer, ends, excerpts))
    broken = sorted(lines[1 + i].split(b"\t")[0].decode() for i in (4, 7, 8))
    read = _reads(monkeypatch)
    headers = HeaderCache(built).scan().headers
    assert not read  # nothing decoded yet
    got = _fields(headers)
    assert sorted(Path(p).name for p in read) == broken  # each read from its file when asked, and only those
    assert got == _fields(scan(built).headers)
    (built / "new_memory.md").write_text("---\nname: n\ndescription: d\ntype: user\n---\n\nnew\n", encoding="utf-8")
    HeaderCache(built).scan()  # a change: the file is written again, the two entries as their files say
    lines, _, _, ends, _ = _layout((built / HEADERS).read_bytes())
    assert not any(b"\t*" in line for line in lines) and max(ends) < 2**40
    expected = _fields(scan(built).headers)
    read.clear()
    assert _fields(HeaderCache(built).scan().headers) == expected and not read  # healed: nothing read from the files


def test_an_excerpt_asked_for_after_close_comes_from_its_file(built):
    _answers(built, _prompts()[:1], disk=True)
    cache = HeaderCache(built)
    headers = cache.scan().headers
    cache.close()
    assert [h.excerpt for h in headers[:5]] == [h.excerpt for h in scan(built).headers[:5]]


def test_nested_folders_are_scanned_in_the_walks_order_with_their_paths(tmp_path):
    for rel in ("a.md", "team/b.md", "team/deep/c.md", "z/d.md", "team/e.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("---\nname: x\ndescription: y\ntype: user\n---\n\nz\n", encoding="utf-8")
    by_folder = memory_files_by_folder(tmp_path)
    assert [p for _, paths in by_folder for p in paths] == iter_memory_files(tmp_path)
    assert all(Path(p).parent == Path(folder) for folder, paths in by_folder for p in paths)
    assert sorted(h.rel_path for h in scan(tmp_path).headers) == ["a.md", "team/b.md", "team/deep/c.md", "team/e.md",
                                                                  "z/d.md"]


def _pool(headers, prompt: str, words=None) -> list[str]:
    return [h.rel_path for h in manifest.candidates(headers, prompt, words=words)]


@pytest.mark.parametrize("after_open", ["replaced", "truncated"])
def test_the_word_index_reads_only_the_lists_a_prompt_looks_up(built, after_open):
    """Its first three lines are read, the lists from the file left open: a file replaced since is read as it
    was when opened; one cut short in place makes the lookup test the texts instead (the same answers)."""
    prompts = _prompts()[:8]
    _answers(built, prompts[:1], disk=True)  # both files written
    words_file = built / WORDS
    expected = [_pool(scan(built).headers, prompt) for prompt in prompts]
    cache = HeaderCache(built)
    headers = cache.scan().headers
    words = WordIndex(cache)
    assert words._ready(manifest._text_of) and words.fd >= 0
    assert words.base + words.ends[-1] == words_file.stat().st_size  # the lists stay in the file
    if after_open == "replaced":
        spare = words_file.with_name("spare")
        spare.write_bytes(b"\x00" * words_file.stat().st_size)
        os.replace(spare, words_file)
    else:
        os.truncate(words_file, words.base + 8)
    assert [_pool(headers, prompt, words) for prompt in prompts] == expected
    assert words.state == ("ready" if after_open == "replaced" else "unusable")


def test_a_cache_whose_head_is_past_the_limit_is_neither_read_nor_written(tmp_path, monkeypatch):
    """Every prompt reads the first line, the lines and the arrays: at most HEAD_MAX_BYTES of them."""
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    for i in range(5):
        (tmp_path / f"m{i}.md").write_text(f"---\nname: m{i}\ndescription: d{i}\ntype: user\n---\n\nbody {i}\n",
                                           encoding="utf-8")
    HeaderCache(tmp_path).scan()
    data = (tmp_path / HEADERS).read_bytes()
    lines, *_ = _layout(data)
    head = len(data) - len(_layout(data)[4])
    monkeypatch.setattr(header_cache, "HEAD_MAX_BYTES", head - 1)
    cache = HeaderCache(tmp_path)
    assert cache.entries is None and len(lines) == 6
    assert _fields(cache.scan().headers) == _fields(scan(tmp_path).headers)
    assert (tmp_path / HEADERS).read_bytes() == data and cache.token is None  # not written: nothing numbered
    monkeypatch.setattr(header_cache, "HEAD_MAX_BYTES", head)
    assert HeaderCache(tmp_path).entries is not None
