"""Runs last (file order): drives every writer with secrets, then reads back every file memdir wrote
during the hostile suite and looks for the planted secrets and the outside canary, in any form a file
name or log line could carry them.

The planted inputs live under `inputs/` and `outside/`; everything memdir writes (memory folders,
`.memdir/` state: the prompt queue, runs.jsonl, hook.log, history, sessions, notices, the decision
journal and graph; ~/.claude/memdir: the endpoint and batch state) lands under `written/`, which is what
is scanned here, names and contents alike. Secrets found count as "secrets on disk" in the summary line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir import constants as C
from tests import api_payloads as P
from tests.fake_api import FakeAPI
from tests.hostile.conftest import (
    ANTHROPIC_KEY,
    FINISHED,
    GITHUB_TOKEN,
    SECRETS,
    TYPED_SECRETS,
    run_cli,
    secret_forms,
)

SENTENCES = [sentence for sentence, _secret in TYPED_SECRETS]
MEMORY = "---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}\n\n**Why:** a\n**How to apply:** b\n"


def _input(hostile_root: Path, name: str) -> Path:
    """Planted inputs live outside `written/`: they hold the secrets on purpose."""
    (hostile_root / "inputs").mkdir(exist_ok=True)
    return hostile_root / "inputs" / name


def _project(home: Path) -> Path:
    project = home / "shop"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    return project


def test_the_prompt_hook_queues_typed_secrets_redacted(memory, hostile_home, tally):
    """Real `memdir hook prompt` processes; the queue is left for the scan (no Stop worker drains it)."""
    project = _project(hostile_home)
    for n, sentence in enumerate(SENTENCES):
        payload = {"session_id": f"q{n}", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": sentence}
        proc = run_cli(tally, "hook", "prompt", stdin=json.dumps(payload),
                       env={"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline"})
        assert proc.returncode == 0, proc.stderr
    queued = (memory / C.STATE_DIRNAME / C.DECISION_INBOX).read_text().splitlines()
    assert len(queued) == len(SENTENCES) and all("[redacted]" in json.loads(line)["prompt"] for line in queued)


def test_the_stop_worker_and_offline_extraction_write_no_typed_secret(memory, hostile_home, hostile_root, tally):
    """The prompt queue drained into the journal, graph and memories; then `memdir extract --engine offline`
    on a transcript saying "remember that <secret>" in every shape."""
    from memdir.stages.extractor.decision_pipeline import stop_step

    project = _project(hostile_home)
    for n, sentence in enumerate([*SENTENCES, "Let's use Vitest over Jest because it shares the Vite config."]):
        payload = {"session_id": f"w{n}", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": sentence}
        run_cli(tally, "hook", "prompt", stdin=json.dumps(payload), env={"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline"})
    stop_step(memory, str(project))
    assert "Vitest" in (memory / C.STATE_DIRNAME / "decisions" / C.DECISIONS_JOURNAL).read_text()
    transcript = _input(hostile_root, "said.jsonl")
    transcript.write_text("".join(json.dumps({
        "type": "user", "uuid": f"u{n}", "sessionId": "s", "cwd": str(project), "timestamp": "2026-03-02T10:00:00Z",
        "message": {"role": "user", "content": f"Please remember that {sentence}."}}) + "\n"
        for n, sentence in enumerate(SENTENCES)))
    proc = run_cli(tally, "--dir", str(memory), "extract", str(transcript), "--engine", "offline")
    assert proc.returncode in (0, 1), proc.stderr
    assert (memory / C.STATE_DIRNAME / C.RUNS_LOG_NAME).is_file()


def test_a_scripted_model_cannot_write_typed_secrets(memory, hostile_home, hostile_root, tally):
    """`memdir extract --engine llm` whose 'model' saves every typed secret as a memory, records it as a
    decision and quotes it in a path: every call is refused, and the refusals are logged redacted."""
    transcript = _input(hostile_root, "typed-e2e.jsonl")
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(hostile_home),
                                      "timestamp": "2026-03-02T10:00:00Z",
                                      "message": {"role": "user", "content": "Remember how we deploy."}}) + "\n")
    calls = []
    for n, sentence in enumerate(SENTENCES):
        calls.append(P.tool_use("Write", {"file_path": str(memory / f"project_infra_{n}.md"), "content": MEMORY.format(
            name=f"Infra {n}", description="how we deploy", body=sentence)}, f"w{n}"))
        calls.append(P.tool_use("RecordDecision", {"kind": "decision", "what": "Use the deploy proxy", "why": sentence,
                                                   "confidence": 0.9}, f"d{n}"))
        calls.append(P.tool_use("Read", {"file_path": f"/etc/{sentence}"}, f"r{n}"))

    def respond(body, n):
        if n == 0:
            return P.message(calls, stop_reason="tool_use", model="claude-sonnet-5-5")
        return P.message([P.text("Done.")], model="claude-sonnet-5-5")

    with FakeAPI(respond) as api:
        proc = run_cli(tally, "--dir", str(memory), "extract", str(transcript), "--engine", "llm",
                       env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key"})
    assert proc.returncode in (0, 1), proc.stderr
    results = [b for b in api.requests[1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert len(results) == len(calls) and all(r.get("is_error") for r in results)
    assert not list(memory.glob("project_infra_*.md"))


def test_logs_records_and_config_home_state_are_redacted(memory, hostile_home, monkeypatch):
    from memdir import llm, runlog
    from memdir.hooklog import log
    from memdir.stages.extractor import batches_api, state

    for sentence in SENTENCES:
        log(memory, "stop", f"worker failed: {sentence}")
        runlog.append_run(memory, {"engine": "offline", "error": sentence})
        state.log_run(memory, {"session": "s", "errors": [sentence]})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy:h0stile/pa55@llm.example.com")
    llm.mark_unreachable(" | ".join(SENTENCES))
    batches_api._save({"version": batches_api.STATE_VERSION,
                       "round_jobs": {"job-0": {"conversation": [{"role": "user", "content": s} for s in SENTENCES]}}})
    assert llm.unreachable() is not None and batches_api.state_path().is_file()


def _seed(hostile_root):
    """Exercise every log path with a secret-bearing input, so the scan has something to find if
    redaction ever breaks (a scan of files that never saw a secret would prove nothing)."""
    from memdir.errors import MemdirError
    from memdir.hooklog import log
    from memdir.stages.extractor import state
    from memdir.stages.extractor.tools import Toolbox
    from memdir.store import MemoryStore

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


def test_no_secret_in_any_file_memdir_wrote(hostile_root, tally, memory, hostile_root_seeded, request):
    # Every hostile test collected before this one ran in this process, so its files are under hostile_root:
    # a run that split the folder between xdist workers (tests/xdist_plugin.py) would scan only a part.
    items = request.session.items
    earlier = {item.nodeid for item in items[:items.index(request.node)] if item.nodeid.startswith("tests/hostile/")}
    elsewhere = sorted(earlier - FINISHED)
    assert not elsewhere, f"{len(elsewhere)} hostile tests ran in another process, e.g. {elsewhere[:3]}"
    written = hostile_root / "written"
    scanned = 0
    leaks = []
    forms = {form for secret in SECRETS for form in secret_forms(secret)}
    forms |= {json.dumps(form)[1:-1] for form in forms}  # as a JSON string holds it (`/` and `&` stay as they are)
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
    tally.secrets += len(leaks)
    tally.notes.extend(leaks[:10])
    assert scanned > 0 and not leaks, leaks
