"""A small memory folder for the `memdir ui` tests: linked memories, one edited (so it has history), one
hostile (markup and script in its description and body), a runs.jsonl with spend on two days."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

from memdir.model import Memory
from memdir.store import MemoryStore

HOSTILE_DESCRIPTION = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
HOSTILE_BODY = ("Click [here](javascript:window.pwned=3) or <a href=\"javascript:window.pwned=4\">here</a>.\n"
                "<svg onload=\"window.pwned=5\"></svg> and [[<script>window.pwned=6</script>]]")


def build(root: Path) -> MemoryStore:
    store = MemoryStore(root)
    store.save(Memory(name="Use pnpm, not npm", type="feedback", description="The repo installs with pnpm",
                      body="Always pnpm.\nIts lockfile is `pnpm-lock.yaml`.\n\n**Why:** the lockfile is pnpm's.\n"
                           "**How to apply:** run pnpm install.\n"
                           "See [[deploy-checklist]]."))
    store.save(Memory(name="deploy-checklist", type="project", description="Steps before a release",
                      body="Run the tests, tag, push.\n\n**Why:** releases broke.\n**How to apply:** every release."))
    store.save(Memory(name="Hostile note", type="reference", description=HOSTILE_DESCRIPTION, body=HOSTILE_BODY))
    store.save(Memory(name="deploy-checklist", type="project", description="Steps before a release",
                      body="Run the tests, tag, push, announce.\n\n**Why:** releases broke.\n"
                           "**How to apply:** every release."), rel_path="project_deploy_checklist.md")
    today = date.today()
    runs = [{"at": f"{today - timedelta(days=1)}T10:00:00", "engine": "llm", "cost_usd": 0.0123,
             "usage": {"input_tokens": 1000, "output_tokens": 200}},
            {"at": f"{today}T09:00:00", "engine": "llm", "cost_usd": 0.5,
             "usage": {"input_tokens": 40000, "output_tokens": 800}}]
    (root / ".memdir").mkdir(exist_ok=True)
    (root / ".memdir" / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return store
