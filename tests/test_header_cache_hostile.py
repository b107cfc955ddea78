"""The header cache (memdir.header_cache) as an unlucky user meets it: memories it cannot keep."""

from __future__ import annotations

import pytest

from memdir import header_cache
from memdir.header_cache import HeaderCache
from memdir.scan import scan

FIELDS = ("rel_path", "name", "description", "type", "problem", "excerpt")


def _scan_writes(folder, monkeypatch) -> tuple[list, int]:
    """One hook's scan: its headers as fields, and how many times it wrote the cache file."""
    writes = []
    write = header_cache.safefs_write.write_bytes
    monkeypatch.setattr(header_cache.safefs_write, "write_bytes", lambda *a, **k: writes.append(a[1]) or write(*a, **k))
    cache = HeaderCache(folder)
    try:
        headers = [tuple(getattr(h, f) for f in FIELDS) for h in cache.scan().headers]
    finally:
        cache.close()
    monkeypatch.setattr(header_cache.safefs_write, "write_bytes", write)
    return headers, len(writes)


@pytest.mark.parametrize("odd", ['type: "pro\\tject"', "racy"])
def test_hostile_a_memory_the_cache_cannot_keep_does_not_rewrite_it_every_prompt(tmp_path, monkeypatch, odd):
    """A memory whose type holds a tab (the line format's separator), or one changed within RACY_NS (always, on a
    file server whose clock runs ahead), is read from its file each time, as meant. It also made every prompt write
    the whole cache again (every excerpt read, 25 MB written at 5,000 memories), though nothing in it changed."""
    monkeypatch.setattr(header_cache, "RACY_NS", 0)
    for i in range(5):
        (tmp_path / f"m{i}.md").write_text(f"---\nname: note {i}\ndescription: about {i}\ntype: project\n---\nbody {i}\n",
                                           encoding="utf-8")
    assert _scan_writes(tmp_path, monkeypatch)[1] == 1  # the first scan writes the cache
    kind = odd if odd != "racy" else "type: project"
    (tmp_path / "odd.md").write_text(f"---\nname: odd\ndescription: an odd one\n{kind}\n---\nbody\n", encoding="utf-8")
    if odd == "racy":
        monkeypatch.setattr(header_cache, "RACY_NS", 10**18)  # every file changed "just now": none newly kept
    expected = [tuple(getattr(h, f) for f in FIELDS) for h in scan(tmp_path).headers]
    for _ in range(3):
        headers, writes = _scan_writes(tmp_path, monkeypatch)
        assert headers == expected and writes == 0
