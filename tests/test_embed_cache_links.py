"""The embedding cache is appended to in place (truncated to whole records first): a cache file with another name
(`ln ~/.bashrc .memdir/embeddings/<model>.bin` by anyone who can write the folder, or a `cp -al` backup) must never
be cut or written through. It is replaced by rename instead, which leaves the other name's file as it was."""

from __future__ import annotations

import os

import pytest

np = pytest.importorskip("numpy", reason="the dense stage is optional: pip install 'memdir[dense]'")

from memdir import constants as C  # noqa: E402
from memdir.embed_cache import EmbeddingCache, content_key  # noqa: E402

DIM = 4


@pytest.fixture(params=["descriptor", "path"])
def backend(request, monkeypatch) -> str:
    """Both ways memdir opens a file in the folder: from the folder's descriptor and by checked path (forced)."""
    from memdir import safefs

    if request.param == "path":
        monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    return request.param


def _cache(memory: os.PathLike) -> EmbeddingCache:
    return EmbeddingCache.for_memory_dir(memory, "toy", DIM)


def test_a_cache_hard_linked_to_a_file_elsewhere_is_never_cut_nor_appended_through(tmp_path, backend):
    memory = tmp_path / "memory"
    (memory / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME).mkdir(parents=True)
    outside = tmp_path / "bashrc"
    kept = b"export PATH=$HOME/bin:$PATH\n" * 100  # 2,800 bytes: past one 32-byte record, not a whole number of them
    outside.write_bytes(kept)
    os.link(outside, memory / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / "toy.bin")
    key = content_key("toy", "a memory")
    _cache(memory).add([key], np.ones((1, DIM), dtype=np.float32))
    assert outside.read_bytes() == kept and outside.stat().st_nlink == 1
    again = _cache(memory)
    again.refresh()
    assert again.get(key) is not None and list(again.get(key)) == [1.0] * DIM  # the vector is kept, in a file of its own


def test_a_cache_with_one_name_is_still_appended_to_in_place(tmp_path, backend):
    memory = tmp_path / "memory"
    cache = _cache(memory)
    first, second = content_key("toy", "one"), content_key("toy", "two")
    cache.add([first], np.ones((1, DIM), dtype=np.float32))
    inode = (memory / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / "toy.bin").stat().st_ino
    cache.add([second], np.zeros((1, DIM), dtype=np.float32))
    path = memory / C.STATE_DIRNAME / C.EMBEDDINGS_DIRNAME / "toy.bin"
    assert path.stat().st_ino == inode and path.stat().st_size == 2 * cache.record.itemsize
    again = _cache(memory)
    again.refresh()
    assert again.get(first) is not None and again.get(second) is not None
