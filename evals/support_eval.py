"""False refusals of the support check (extractor/support.py) on the real transcripts' annotated items.

Every item a careful reader would save from ../shared/realdata (evals/cases/realdata.yaml for
claude-code-log, sessions2/items.json for sessions2) is written as the extraction model writes a
memory: the item's text as description and rule, then **Why:** and **How to apply:** lines in generic
words (the worst case for the check: such words are found in any long tool output, never in what the
user said). It is judged against the chunk of its session the extractor would show with it (the chunk
whose user words support it best). A true positive refused is a false refusal: the count must be 0.

    python -m memdir.evals.support_eval [REALDATA]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from memdir.config import Settings
from memdir.evals.realdata_path import locate_realdata
from memdir.evals.realdata_specs import CASES
from memdir.stages.extractor.support import NOWHERE_WEIGHT, judge_memory, sources_of
from memdir.stages.extractor.window import chunks
from memdir.transcript import read_transcript

WHY_HOW = ("\n\n**Why:** the user said so in this session.\n"
           "**How to apply:** keep to it in later sessions and changes on this project.")


def memory_text(item_text: str, kind: str) -> str:
    body = item_text + (WHY_HOW if kind in ("feedback", "project") else "")
    return f"{item_text}\n{body}"  # what the check reads of a memory: description and body


def annotated_items(root: Path) -> list[tuple[Path, str, str]]:
    """(transcript, item text, type) for every expected item of both sets."""
    out = []
    suite = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    for key, spec in (suite.get("sessions") or {}).items():
        folder, prefix = key.rsplit("/", 1)
        found = sorted((root / "claude-code-log" / folder).glob(f"{prefix}*.jsonl"))
        for item in (spec or {}).get("expect") or []:
            kind = item["type"] if isinstance(item["type"], str) else item["type"][0]
            out += [(found[0], item["what"], kind)] if found else []
    for item in json.loads((root / "sessions2" / "items.json").read_text(encoding="utf-8")):
        if item.get("text") and item.get("type"):
            out.append((root / "sessions2" / item["file"], item["text"], item["type"]))
    return out


def judge_items(root: Path, budget: int | None = None) -> list[dict]:
    """One row per item: session, text, the best chunk's counts and refusal (empty when kept)."""
    budget = budget or Settings().extract_chunk_tokens
    windows: dict[Path, list] = {}
    rows = []
    for transcript, text, kind in annotated_items(root):
        if transcript not in windows:
            messages = read_transcript(transcript).messages
            windows[transcript] = [sources_of(chunk) for chunk in chunks(messages, budget)]
        verdicts = [judge_memory(text, memory_text(text, kind), "", "", sources) for sources in windows[transcript]]
        best = max(verdicts, key=lambda v: (v.counts["user"], not v.refused))
        margin = best.counts["user"] - best.weight - NOWHERE_WEIGHT * best.counts["neither"]
        rows.append({"session": transcript.name, "type": kind, "text": text, "counts": best.counts, "margin": margin,
                     "weight": best.weight, "refused": best.refused})
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    paths = [a for a in argv if not a.startswith("-")]
    root = Path(paths[0]) if paths else locate_realdata()
    if root is None:
        print("memdir: error: real data not found; pass its folder", file=sys.stderr)
        return 2
    rows = judge_items(root)
    refused = [r for r in rows if r["refused"]]
    if "-v" in sys.argv:
        for row in rows:
            print(row["counts"], row["weight"], row["text"][:60])
    for row in refused:
        print(f"REFUSED {row['session']}: {row['text'][:70]!r}: {row['refused']}")
    closest = min(rows, key=lambda r: r["margin"]) if rows else None
    print(f"support check on real annotated items: {len(rows)} true positives, {len(refused)} refused"
          + (f"; closest call (whole memory) {closest['margin']:.2f} terms from refusal ({closest['text'][:50]!r})" if closest else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
