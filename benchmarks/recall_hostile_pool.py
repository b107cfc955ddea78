"""Offline recall on hostile21's pool: 250 memories, each one 64 KB line of distinct words, and a 10,000-character prompt.

    .venv/bin/python -m benchmarks.recall_hostile_pool [--prompt held|unknown] [--memories 250] [--kb 64]

`held`: the prompt's words are the memories' own (each in one memory); `unknown`: no memory holds them, so every word
of five letters or more is also looked up as a misspelling (recall.lexical.Ranker.corrections). Prints the seconds
of one `recall` with the prompt hook's disk caches (as its process runs it), cold, then warm.
On 2026-11-27 (2 cores, shared), `held`: 174 s cold before RECALL_GRAM_SEARCHES_MAX and the rank index's size check,
16.5 s after (14 s warm; most of it tokenising the 16 MB of words); `unknown`: 50 s after, most of it corrections.
With RECALL_TYPO_COMPARISONS_MAX and the typo table stemmed a prefix at a time (mend23, same machine, busy), `unknown`:
56-100 s cold and 56-67 s warm before, 18.6 s cold and 16.4 s warm after (the typo step ~3 s of it, 198,400
comparisons instead of 4.6 M); `held` unchanged (19-30 s cold, 17-20 s warm, with the machine's load).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from memdir.stages.recall.api import recall

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(5, 10)))


def build(folder: Path, memories: int, kb: int, prompt: str, seed: int = 1) -> str:
    """The memory files, and the prompt (of the memories' words, or of words none holds)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    held: list[str] = []
    for k in range(memories):
        words: list[str] = []
        size = 0
        while size < kb * 1024 - 400:
            words.append(_word(rng))
            size += len(words[-1]) + 1
        held += words[:50]
        (folder / f"project_hostile_{k}.md").write_text(
            f"---\nname: note {k}\ndescription: hostile note {k}\ntype: project\n---\n\n{' '.join(words)}\n",
            encoding="utf-8")
    other = random.Random(seed + 99)
    words = other.sample(held, min(1500, len(held))) if prompt == "held" else [_word(other) for _ in range(1500)]
    return " ".join(words)[:10_000]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", choices=["held", "unknown"], default="held")
    parser.add_argument("--memories", type=int, default=250)
    parser.add_argument("--kb", type=int, default=64)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memdir-hostile-pool-") as tmp:
        folder = Path(tmp) / "memory"
        prompt = build(folder, args.memories, args.kb, args.prompt)
        for run in ("cold", "warm"):
            start = time.perf_counter()
            result = recall(folder, prompt, engine="offline", record=False, disk_cache=True)
            print(f"{run}: {time.perf_counter() - start:.1f} s, {len(result.selected)} recalled", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
