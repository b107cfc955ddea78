"""The second meaning signal (memdir.embed_models): off by default, cached per folder, ranking only."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the dense stage is optional: pip install 'memdir[dense]'")

from memdir import embed_models as M  # noqa: E402
from memdir.embeddings import DenseModel  # noqa: E402
from memdir.scan import scan  # noqa: E402
from memdir.stages.recall.offline import select_offline  # noqa: E402


class WordsEngine:
    """Bag-of-words vectors: a stand-in for a model, with a count of passages embedded."""

    dim = 32

    def __init__(self) -> None:
        self.passages_embedded = 0

    def vector(self, text: str):
        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().split():
            v[sum(map(ord, word.strip(".,:?"))) % self.dim] += 1
        return v / (np.linalg.norm(v) or 1)

    def query(self, text):
        return self.vector(text)

    def passage(self, texts):
        self.passages_embedded += len(texts)
        return np.array([self.vector(t) for t in texts])


def _second(engine: WordsEngine) -> M.SecondEngine:
    return M.SecondEngine("words", engine.query, engine.passage, engine.dim)


def _write(folder, rel, name, description):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{description}\n")


def test_without_the_switch_the_model_is_the_dense_model_itself(monkeypatch):
    monkeypatch.delenv(M.SECOND_ENV, raising=False)
    base = DenseModel(WordsEngine())
    assert M.with_second(base) is base
    assert M.with_second(None) is None
    monkeypatch.setenv(M.SECOND_ENV, "no-such-model")
    with pytest.raises(ValueError, match="no-such-model"):
        M.with_second(base)


def test_second_vectors_are_cached_once_and_e5s_cosines_are_unchanged(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_kafka.md", "Kafka", "Events go through Kafka")
    _write(folder, "project_pnpm.md", "pnpm", "Install dependencies with pnpm")
    headers = scan(folder).headers
    second_engine = WordsEngine()
    model = M.WithSecond(DenseModel(WordsEngine()), _second(second_engine), 0.5)
    model.embed_missing(folder, headers)
    model.embed_missing(folder, headers)
    assert second_engine.passages_embedded == 2  # the second time, every vector was in the cache
    cosines = model.similarities(folder, "install with pnpm", headers)
    assert cosines == model.base.similarities(folder, "install with pnpm", headers)
    assert cosines.weight == 0.5 and cosines.extra is not None
    assert cosines.extra.index(max(cosines.extra)) == [h.rel_path for h in headers].index("project_pnpm.md")


def test_the_second_opinion_reorders_matches_but_never_passes_one_alone(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_retention.md", "Kafka retention", "Kafka topics keep events for seven days")
    _write(folder, "project_partitions.md", "Kafka partitions", "Kafka topics split events into partitions")
    _write(folder, "project_lunch.md", "Lunch", "The team orders lunch on Fridays")
    headers = scan(folder).headers
    names = [h.rel_path for h in headers]
    prompt = "kafka topics events"
    for favoured in ("project_retention.md", "project_partitions.md", "project_lunch.md"):
        cosines = M.Cosines([0.85 if n != "project_lunch.md" else 0.5 for n in names])
        cosines.extra = [0.9 if n == favoured else 0.1 for n in names]
        cosines.weight = 1.0
        picked = [h.rel_path for h in select_offline(prompt, headers, 5, None, cosines)]
        assert "project_lunch.md" not in picked  # shares no word and is far in e5's meaning: the bar is e5's
        if favoured != "project_lunch.md":
            assert picked[0] == favoured


def test_diversity_moves_a_near_copy_of_a_better_match_behind_a_different_one():
    unit = lambda *xs: np.array(xs, dtype=np.float32) / np.linalg.norm(xs)  # noqa: E731
    vectors = [unit(1, 0, 0, 0), unit(1, 0.05, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(0, 0, 0, 1)]
    scores = [1.0, 0.95, 0.9, 0.2, 0.1]
    order = [0, 1, 2, 3, 4]
    assert M.diverse(order, scores, vectors, 0.0) == order
    assert M.diverse(order, scores, vectors, 0.5) == [0, 2, 1, 3, 4]  # 1 nearly repeats 0: 2 adds more
    assert M.diverse(order, scores, vectors, 1.0) == [0, 2, 3, 4, 1]  # ... and, weighed fully, less than anything
    assert M.diverse(order, scores, [*vectors[:1], None, *vectors[2:]], 0.5) == order  # no vector: nothing known


def test_with_the_diversity_switch_the_cosines_carry_e5s_vectors(tmp_path, monkeypatch):
    monkeypatch.delenv(M.SECOND_ENV, raising=False)
    monkeypatch.setenv(M.DIVERSITY_ENV, "0.5")
    folder = tmp_path / "memory"
    _write(folder, "project_kafka.md", "Kafka", "Events go through Kafka")
    headers = scan(folder).headers
    model = M.with_second(DenseModel(WordsEngine()))
    assert isinstance(model, M.WithSecond) and model.second is None
    model.embed_missing(folder, headers)
    cosines = model.similarities(folder, "kafka events", headers)
    assert cosines.diversity == 0.5 and cosines.extra is None
    assert cosines.vectors is not None and len(cosines.vectors) == 1 and cosines.vectors[0] is not None
