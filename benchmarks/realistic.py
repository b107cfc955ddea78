"""Memory folders built from the real 55-file folder, at any size, cached so reruns are quick (issue 26).

Each generated memory takes its name, description and type from one real file and a body recombined
from the real files' paragraphs to about REAL_SIZE bytes, so the text is real writing (em dashes, curly
quotes and all non-ASCII kept) and the sizes are what a real folder holds, not a synthetic 435 bytes.
Names and descriptions get a number, so no two memories are the same. Modification times are spread
over a year. MEMORY.md lists the first memories, as many as fit under Claude Code's load cap (as memdir's
writers keep it, with room left for memdir to add lines).

Folders are cached under `<tmp>/memdir-bench-realistic/` keyed by generator version and size; a
folder is used only once its `.complete` marker exists, so an interrupted build is rebuilt.

    python -m benchmarks.realistic 20000 /tmp/mem20k   # build one by hand, uncached
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from memdir.evals.realdata_path import locate_realdata, missing_reason

GENERATOR_VERSION = 2  # bump when the folders' content changes: the cache key includes it
REAL_SIZE = 4600  # bytes: the measured size of a real memory file
REAL_FOLDER = "memory-folders/application-pipeline"
# A real transcript for the hook payload: the hook reads its tail for the tools in use.
REAL_TRANSCRIPT = "sessions2/en-flywheel-askuser.jsonl"
# A real prompt on the real folder's subject (benchmarks/realdata_recall.yaml, set 1).
REAL_PROMPT = "rebuild the resumes for batch-03 and make sure each one is exactly one page"
SIZES = (200, 1000, 5000, 20000)
TYPES = ("user", "feedback", "project", "reference")
# MEMORY.md stays under Claude Code's load cap (memdir.constants.INDEX_MAX_*: 200 lines, 25,000 characters)
# with room for memdir to add its own lines, as a folder memdir keeps does.
INDEX_LINES, INDEX_CHARS = 150, 20_000
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


class RealSource:
    """The real folder's memories as (fields, paragraphs), read once."""

    def __init__(self, folder: Path) -> None:
        self.memories: list[dict[str, str]] = []
        self.paragraphs: list[str] = []
        for path in sorted(folder.glob("*.md")):
            if path.name == "MEMORY.md":
                continue
            text = path.read_text(encoding="utf-8")
            match = _FRONT.match(text)
            if not match:
                continue
            # indented lines continue a folded value: they are not fields of their own
            lines = [line for line in match.group(1).splitlines() if ":" in line and not line.startswith(" ")]
            fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
            if fields.get("type") in TYPES and {"name", "description"} <= fields.keys():
                self.memories.append(fields)
            body = text[match.end():]
            self.paragraphs += [p.strip() for p in body.split("\n\n") if p.strip()]


def realdata_root() -> Path:
    root = locate_realdata()
    if root is None:
        raise SystemExit(f"benchmarks.realistic: {missing_reason()}")
    return root


def real_prompts() -> list[str]:
    """The labelled real prompts (benchmarks/realdata_recall.yaml), in file order, each once, REAL_PROMPT
    left out: timed runs rotate through them after a warm-up asking REAL_PROMPT, as a user never asks
    the same prompt twice in a row (a repeated prompt let the warm server reuse its ranker, issue 26)."""
    from benchmarks.realdata_labels import load_labels

    return [p for p in dict.fromkeys(case.prompt for case in load_labels().cases) if p != REAL_PROMPT]


def real_transcript() -> Path:
    return realdata_root() / REAL_TRANSCRIPT


def cache_root() -> Path:
    return Path(tempfile.gettempdir()) / "memdir-bench-realistic"


def folder(count: int) -> Path:
    """A realistic memory folder of `count` memories, built once and reused (the caller must not
    write to it except under `.memdir/`, which is state and is cleared with `clear_state`)."""
    target = cache_root() / f"v{GENERATOR_VERSION}-{count}"
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    build(target, count)
    (target / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + "\n", encoding="ascii")
    return target


def clear_state(root: Path) -> None:
    """Drop memdir's per-session state and logs, keep cached vectors (costly to redo)."""
    state = root / ".memdir"
    if not state.is_dir():
        return
    for child in state.iterdir():
        if child.name != "embeddings":
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


def build(root: Path, count: int, seed: int = 26, source_folder: Path | None = None, now: float | None = None) -> Path:
    """Write `count` memories into root (deterministic for a count and seed) and their MEMORY.md; returns root.
    `source_folder` is the real folder to recombine (default: the one under the located real data); the files'
    ages count back from `now` (default: the clock), so two folders built with one `now` show the same ages."""
    source_folder = source_folder or realdata_root() / REAL_FOLDER
    source = RealSource(source_folder)
    if not source.memories:
        raise SystemExit(f"benchmarks.realistic: no memory with name, description and type in {source_folder}")
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    now = time.time() if now is None else now
    index = ["# Memory index", ""]
    for i in range(count):
        fields = source.memories[i % len(source.memories)]
        kind = fields["type"]
        name = f"{fields['name']} ({i})"
        description = f"{fields['description']} — note {i}"
        body = _body(source.paragraphs, rng, REAL_SIZE - 150 - len(name) - len(description))
        rel = f"{kind}_{_slug(fields['name'])}_{i}.md"
        path = root / rel
        path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n",
                        encoding="utf-8")
        stamp = now - rng.random() * 365 * 86400
        os.utime(path, (stamp, stamp))
        line = f"- [{name}]({rel}) — {description[:100]}"
        if len(index) < INDEX_LINES and sum(len(x) + 1 for x in index) + len(line) < INDEX_CHARS:
            index.append(line)
    (root / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return root


def _body(paragraphs: list[str], rng: random.Random, size: int) -> str:
    """Real paragraphs in a random order until about `size` bytes."""
    out: list[str] = []
    used = 0
    while used < size:
        paragraph = rng.choice(paragraphs)
        out.append(paragraph)
        used += len(paragraph.encode()) + 2
    return "\n\n".join(out)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40] or "memory"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: python -m benchmarks.realistic COUNT FOLDER", file=sys.stderr)
        return 2
    build(Path(argv[1]), int(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
