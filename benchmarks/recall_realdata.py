"""Selectivity on a real memory folder: what recall injects for real-looking prompts.

    .venv/bin/python -m benchmarks.recall_realdata [--folder PATH]

The folder is the real, hand-curated 55-file `shared/realdata/memory-folders/application-pipeline`,
read in place (recall with record=False writes nothing there but its own `.memdir/` cache, so the
run works on a temporary copy). The prompts below were written before any result was looked at and
were never tuned against (held out). Each line prints what was selected and how many characters
would be injected; whether a pick is relevant is judged by a reader (see the closing note of issue 13).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from evals.realdata_path import locate_realdata
from memdir.config import Settings
from memdir.scan import scan
from recall.api import recall

# Written down before looking at any result. None: nothing in the folder should help.
PROMPTS = [
    "rebuild the resumes for batch-03 and make sure each one is exactly one page",
    "draft a follow-up message to the recruiter I contacted last week",
    "what's the minimum score an entry needs before I apply?",
    "fix the failing test in tests/test_network_graph.py",
    "write a cover letter for the Grafana Labs role",
    "what is the capital of Portugal?",  # None
    "thanks, that's it for today",  # None
    "rename the loop variable i to index in this small bash script",  # None
]
# A second set, written after the first set's results were seen and before the bar was changed for them.
PROMPTS += [
    "what did we decide about using Gemini for this repo?",
    "add a new source to the market intelligence JSON",
    "how do I log a LinkedIn DM I just sent?",
    "explain what a Python decorator is",  # None
    "what's the weather like in Lisbon tomorrow?",  # None
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path,
                        default=(locate_realdata() or Path("shared/realdata")) / "memory-folders" / "application-pipeline")
    args = parser.parse_args(argv)
    if args.folder is None or not args.folder.is_dir():
        print("recall_realdata: the real memory folder was not found (../shared/realdata); pass --folder", file=sys.stderr)
        return 2
    from memdir.embeddings import shared_model

    dense = shared_model()
    settings = Settings.from_env().with_overrides(engine="offline")
    with tempfile.TemporaryDirectory(prefix="memdir-realdata-") as tmp:
        folder = Path(tmp) / "memory"
        shutil.copytree(args.folder, folder)
        if dense is not None:
            dense.embed_missing(folder, scan(folder).headers)
        for mode, model in (("lexical", None), ("lexical+dense", dense)):
            if mode != "lexical" and model is None:
                print("(dense model not installed: pip install 'memdir[dense]')")
                continue
            print(f"== {mode}")
            total = 0
            for prompt in PROMPTS:
                result = recall(folder, prompt, settings=settings, record=False, dense=model)
                total += len(result.selected)
                print(f"{prompt!r}: {len(result.selected)} memories, {len(result.context):,} chars")
                for h in result.selected:
                    print(f"    {h.rel_path}: {(h.description or '')[:110]}")
            print(f"   {total} picks over {len(PROMPTS)} prompts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
