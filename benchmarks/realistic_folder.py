"""Memory folders of any size built from the real 55-file folder, for scale tests and benchmarks.

Synthetic 435-byte ASCII memories hide the costs real ones have: real memory files average about
4.6 KB and hold non-ASCII text (dashes, arrows, accented names), which is what made `str.translate`
and the secret scan slow at 20,000. Each generated memory keeps one real file's type and frontmatter
shape, gets a distinct name and description (a real one plus a serial, so no two collide), and a body
of real paragraphs recombined from the whole folder up to about TARGET_BODY_BYTES. Mtimes are spread
over a year. Deterministic for a given count and seed.

    python -m benchmarks.realistic_folder 20000 /tmp/mem20k   # build one by hand
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

TARGET_BODY_BYTES = 4000
_TYPES = ("user", "feedback", "project", "reference")


def real_folder() -> Path:
    """The real 55-file folder, found by evals/realdata_path.py (the one locator of the real data)."""
    from memdir.evals.realdata_path import locate_realdata, missing_reason

    found = locate_realdata()
    if found is None:
        raise SystemExit(missing_reason())
    return found / "memory-folders" / "application-pipeline"


def _real_memories(folder: Path) -> list[tuple[dict[str, str], list[str]]]:
    """(frontmatter fields, body paragraphs) of every real memory file with a plain header."""
    out = []
    for path in sorted(folder.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n") or "\n---\n" not in text[4:]:
            continue
        head, body = text[4:].split("\n---\n", 1)
        fields = dict(line.split(": ", 1) for line in head.splitlines() if ": " in line and not line.startswith(" "))
        if fields.get("type") not in _TYPES or "name" not in fields or "description" not in fields:
            continue
        paragraphs = [p.strip() for p in body.split("\n\n") if p.strip() and len(p) < 3000]
        if paragraphs:
            out.append((fields, paragraphs))
    return out


def build(root: Path, count: int, seed: int = 26, folder: Path | None = None) -> Path:
    """Write `count` memories into root, and a MEMORY.md listing the first ones (as many as fit in 20,000
    characters, leaving memdir room to add lines below Claude Code's load cap); returns root."""
    sources = _real_memories(folder or real_folder())
    if not sources:
        raise SystemExit(f"no real memories found in {folder or real_folder()}")
    pool = [p for _, paragraphs in sources for p in paragraphs]
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    now = time.time()
    index = ["# Memory index", ""]
    for i in range(count):
        fields, paragraphs = sources[i % len(sources)]
        body = list(paragraphs)
        while sum(len(p.encode()) for p in body) < TARGET_BODY_BYTES:
            body.append(rng.choice(pool))
        name = f"{fields['name']} {i}"
        description = f"{fields['description']} (#{i})"
        stem = f"{fields['type']}_{i:05d}_{'_'.join(fields['name'].lower().split()[:3])}"
        stem = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
        path = root / f"{stem}.md"
        path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: {fields['type']}\n---\n\n"
                        + "\n\n".join(body) + "\n", encoding="utf-8")
        stamp = now - rng.random() * 365 * 86400
        os.utime(path, (stamp, stamp))
        line = f"- [{name}]({path.name}) — {description[:80]}"
        if len(index) < 150 and sum(len(x) + 1 for x in index) + len(line) < 20_000:
            index.append(line)
    (root / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return root


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: python -m benchmarks.realistic_folder COUNT FOLDER", file=sys.stderr)
        return 2
    build(Path(argv[1]), int(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
