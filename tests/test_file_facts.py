"""The per-file cache behind `list` and `doctor` (memdir/file_facts.py): right answers, fewer reads."""

from __future__ import annotations

import json
import os

import pytest

from memdir import file_facts
from memdir.doctor import check
from memdir.store import MemoryStore

AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # split so this file itself does not look like it holds a key


@pytest.fixture(autouse=True)
def small_folders_cached(monkeypatch):
    monkeypatch.setattr(file_facts, "MIN_FILES", 1)


def _memory(root, n: int, body: str = "Body.\n\n**Why:** w\n**How to apply:** h") -> None:
    (root / f"feedback_{n}.md").write_text(
        f"---\nname: rule {n}\ndescription: rule number {n}\ntype: feedback\n---\n\n{body}\n", encoding="utf-8")


def _folder(tmp_path, count: int = 5):
    root = tmp_path / "memory"
    root.mkdir()
    for n in range(count):
        _memory(root, n)
    return MemoryStore(root)


def _findings(store: MemoryStore) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.path, f.message) for f in check(store))


def _count_reads(monkeypatch, store: MemoryStore) -> list[str]:
    reads: list[str] = []
    real = MemoryStore.read_file
    monkeypatch.setattr(MemoryStore, "read_file", lambda self, rel: reads.append(rel) or real(self, rel))
    return reads


def test_doctor_reads_only_files_changed_since_its_last_run(tmp_path, monkeypatch):
    store = _folder(tmp_path)
    first = _findings(store)
    reads = _count_reads(monkeypatch, store)
    assert _findings(store) == first and reads == []
    _memory(store.root, 3, body=f"the key is {AWS_KEY}")  # an edit: a secret, and no why/how lines any more
    after_edit = _findings(store)
    assert reads == ["feedback_3.md"]
    assert ("secret", "feedback_3.md") in {(code, path) for code, path, _ in after_edit}
    assert ("why-how", "feedback_3.md") in {(code, path) for code, path, _ in after_edit}


def test_a_rewrite_that_puts_the_old_mtime_back_is_still_read_again(tmp_path, monkeypatch):
    store = _folder(tmp_path)
    path = store.root / "feedback_1.md"
    before = path.stat()
    _findings(store)
    reads = _count_reads(monkeypatch, store)
    text = path.read_text(encoding="utf-8").replace("**Why:** w\n", "")  # same size? no: but mtime restored
    path.write_text(text + "x" * (before.st_size - len(text.encode())), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert ("why-how", "feedback_1.md") in {(code, p) for code, p, _ in _findings(store)}
    assert reads == ["feedback_1.md"]


def test_list_is_the_same_with_and_without_the_cache(tmp_path, cli):
    store = _folder(tmp_path)
    _, uncached, _ = cli("--dir", str(store.root), "list", "--json")
    assert (store.root / ".memdir" / "file-facts.json").is_file()
    _, cached, _ = cli("--dir", str(store.root), "list", "--json")
    assert cached == uncached and len(json.loads(cached)) == 5


def test_no_secret_is_copied_into_the_cache(tmp_path):
    store = _folder(tmp_path)
    (store.root / "reference_creds.md").write_text(
        f"---\nname: creds\ndescription: the deploy key {AWS_KEY}\ntype: reference\n---\n\nx\n", encoding="utf-8")
    findings = _findings(store)
    assert ("secret", "reference_creds.md") in {(code, path) for code, path, _ in findings}
    cache = (store.root / ".memdir" / "file-facts.json").read_text(encoding="utf-8")
    assert "feedback_0.md" in cache and AWS_KEY not in cache and "reference_creds.md" not in cache


@pytest.mark.parametrize("planted", [b"{not json", b'{"version": "other", "files": {}}',
                                     b'{"version": "V", "files": {"feedback_0.md": [1, 2, 3]}}'])
def test_a_cache_from_elsewhere_or_torn_is_ignored(tmp_path, planted):
    store = _folder(tmp_path)
    (store.root / "feedback_0.md").write_text(
        f"---\nname: r\ndescription: d\ntype: feedback\n---\n\n{AWS_KEY}\n", encoding="utf-8")
    (store.root / ".memdir").mkdir()
    version = file_facts.FileFacts(store.root).version
    (store.root / ".memdir" / "file-facts.json").write_bytes(planted.replace(b'"V"', f'"{version}"'.encode()))
    assert ("secret", "feedback_0.md") in {(code, path) for code, path, _ in _findings(store)}


def test_small_folders_get_no_cache_file(tmp_path, monkeypatch):
    monkeypatch.setattr(file_facts, "MIN_FILES", 200)
    store = _folder(tmp_path)
    _findings(store)
    assert not (store.root / ".memdir" / "file-facts.json").exists()


def test_team_memories_keep_their_own_cache(tmp_path):
    store = _folder(tmp_path)
    (store.root / "team").mkdir()
    _memory(store.root / "team", 9)
    team = MemoryStore.team_store(store.root)
    assert [h.rel_path for h in team.scan(team.facts()).headers] == ["feedback_9.md"]
    _findings(store)
    _findings(team)
    assert sorted(p.name for p in (store.root / ".memdir").glob("file-facts*")) == [
        "file-facts-team.json", "file-facts.json"]
    assert not (store.root / "team" / ".memdir").exists()
