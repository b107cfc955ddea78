"""Runs last (file order): reads back every file memdir wrote during the hostile suite and looks for
the planted secrets and the outside canary, in any form a file name or log line could carry them.

The planted inputs live under `inputs/` and `outside/`; everything memdir writes (memory folders,
`.memdir/` state: runs.jsonl, hook.log, history, sessions, notices; ~/.claude/memdir) lands under
`written/`, which is what is scanned here, names and contents alike.
"""

from __future__ import annotations

import json

import pytest

from tests.hostile.conftest import SECRETS, secret_forms


def test_no_secret_in_any_file_memdir_wrote(hostile_root, tally, memory, hostile_root_seeded):
    written = hostile_root / "written"
    scanned = 0
    leaks = []
    forms = {form for secret in SECRETS for form in secret_forms(secret)}
    for path in sorted(written.rglob("*")):
        rel = path.relative_to(written).as_posix()
        if any(form in rel for form in forms):
            leaks.append(f"name: {rel}")
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 * 1024 * 1024:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        scanned += 1
        for form in forms:
            if form in text:
                leaks.append(f"content: {rel} holds {form[:12]}...")
    tally.tried += scanned
    tally.escapes += len(leaks)
    tally.notes.extend(leaks[:10])
    assert scanned > 0 and not leaks, leaks


def _seed(hostile_root):
    """Exercise every log path with a secret-bearing input, so the scan has something to find if
    redaction ever breaks (a scan of files that never saw a secret would prove nothing)."""
    from memdir.errors import MemdirError
    from memdir.hooklog import log
    from memdir.stages.extractor import state
    from memdir.stages.extractor.tools import Toolbox
    from memdir.store import MemoryStore
    from tests.hostile.conftest import ANTHROPIC_KEY, GITHUB_TOKEN

    memory = hostile_root / "written" / "zz-seeded" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    box = Toolbox(memory)
    slug = ANTHROPIC_KEY.replace("-", "_")
    good = "---\nname: k\ndescription: where the key lives\ntype: reference\n---\nin the vault\n"
    box.run("Write", {"file_path": f"reference_{slug}.md", "content": good})
    box.run("Write", {"file_path": "reference_token.md", "content": good.replace("in the vault", GITHUB_TOKEN)})
    box.run("Read", {"file_path": f"/etc/{ANTHROPIC_KEY}"})
    state.log_run(memory, {"session": "s", "errors": box.errors, "saved": box.written})
    log(memory, "stop", f"worker failed: MemdirError: refusing to save reference_{slug}.md")
    store = MemoryStore(memory)
    (memory / f"reference_{slug}.md").write_text(good)  # planted by hand, then forgotten: history name
    try:
        store.delete(f"reference_{slug}.md")
    except MemdirError:
        pass
    return json.dumps(box.errors)


@pytest.fixture
def hostile_root_seeded(hostile_root):
    return _seed(hostile_root)
