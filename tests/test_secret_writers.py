"""Every path by which memdir writes a file leaves no secret on disk (issue 22, finding 4).

Each test hands one writer a sentence holding a secret in a shape people type, then reads back every
file under the test's folder and HOME (where memdir's config home lives): the secret must be in none
of them, by name or content. Each test also checks that the writer did write (a redacted line, a
refusal logged), so a writer that silently wrote nothing cannot pass for one that redacted.
"""

from __future__ import annotations

import base64
import io
import json
from datetime import date
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.model import Memory
from memdir.store import MemoryStore

# (a sentence as a user or a tool would write it, the secret in it); every secret is unique to this file
TYPED = [
    ("Let's use Postgres for the ledger; SECRET_KEY=9f8e7d6c5b4a3f2eWRT1d0c9b", "9f8e7d6c5b4a3f2eWRT1d0c9b"),
    ("We chose MySQL for reports, DB_PASS=s3cr3tpassWRT", "s3cr3tpassWRT"),
    ("Let's use Redis because it is deployed; the password is Hunter2WRT", "Hunter2WRT"),
    ("We decided to push over https://deploy:pa/ss0rdWRT@git.example.com/shop.git", "pa/ss0rdWRT"),
    ("Let's use Azure blobs: AccountKey=" + "Wr1t+" * 17 + "Ab==", "Wr1t+" * 17 + "Ab=="),
    ("We chose the proxy with Authorization: Basic " + base64.b64encode(b"deploy:passWRT99").decode(),
     base64.b64encode(b"deploy:passWRT99").decode()),
    ("Let's call the API with Authorization: Bearer abcWRT1234567890ghiJKL", "abcWRT1234567890ghiJKL"),
    ("We use the hub with hf_WRTaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDe", "hf_WRTaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDe"),
    ("We chose SendGrid, key 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",
     "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"),
    ("We use S3; our AWS secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYWRTPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYWRTPLEKEY"),
    ("Let's deploy with ghp_WRT0123456789abcdefghijklmnopqrstuvwx", "ghp_WRT0123456789abcdefghijklmnopqrstuvwx"),
]
IDS = [secret[:14] for _sentence, secret in TYPED]


def leaks(secret: str, *roots: Path) -> list[str]:
    """Every file below `roots` whose name or content holds `secret` (or its slug)."""
    forms = {secret, secret.replace("-", "_"), secret.replace("_", "-")}
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if any(form in path.name for form in forms):
                found.append(f"name: {path}")
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes().decode("utf-8", "replace")
                if any(form in data or json.dumps(form)[1:-1] in data for form in forms):
                    found.append(f"content: {path}")
    return found


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def memory(tmp_path) -> Path:
    folder = tmp_path / "memory"
    folder.mkdir()
    return folder


def prompt_hook(project: Path, memory: Path, monkeypatch, prompt: str) -> None:
    from memdir.entry.hooks import main as hook_main

    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    assert hook_main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=io.StringIO()) == 0


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_the_prompt_queue_holds_the_prompt_redacted(sentence, secret, project, memory, monkeypatch, tmp_path):
    prompt_hook(project, memory, monkeypatch, sentence)
    inbox = memory / C.STATE_DIRNAME / C.DECISION_INBOX
    assert "[redacted]" in json.loads(inbox.read_text())["prompt"]
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_the_stop_worker_writes_no_secret_to_journal_graph_or_memories(sentence, secret, project, memory,
                                                                      monkeypatch, tmp_path):
    from memdir.stages.extractor.decision_pipeline import stop_step

    prompt_hook(project, memory, monkeypatch, sentence)
    prompt_hook(project, memory, monkeypatch, "Let's use Vitest over Jest because it shares the Vite config.")
    stop_step(memory, str(project))
    journal = memory / C.STATE_DIRNAME / "decisions" / C.DECISIONS_JOURNAL
    assert "Vitest" in journal.read_text()  # the worker did write: the clean decision went through
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_a_decision_holding_a_secret_is_never_journaled(sentence, secret, project, memory, tmp_path):
    from memdir.decisions import Decision, Relation
    from memdir.stages.extractor.capture import Captured
    from memdir.stages.extractor.decision_pipeline import record

    folder = memory / C.STATE_DIRNAME / "decisions"
    held = [Captured(Decision(kind="decision", what=sentence, confidence=0.9)),
            Captured(Decision(kind="decision", what="Use Vitest", why=sentence, confidence=0.9)),
            Captured(Decision(kind="decision", what="Use Vite", entities=[sentence], confidence=0.9)),
            Captured(Decision(kind="decision", what="Use esbuild", confidence=0.9),
                     [Relation.model_validate({"from": "esbuild", "to": sentence, "relationType": "USES"})])]
    outcome = record(held, folder=folder, memory_dir=memory, flush_graph=True)
    assert len(outcome.errors) == 4 and all("skipped" in e for e in outcome.errors)
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_the_agents_record_decision_refuses_a_secret(sentence, secret, memory, tmp_path):
    from memdir.stages.extractor import decision_tool
    from memdir.stages.extractor.tools import Toolbox

    result = decision_tool.run(Toolbox(memory), {"kind": "decision", "what": "Use Vitest", "why": sentence,
                                                  "confidence": 0.8})
    assert result.is_error and "refusing" in str(result.content)
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_hook_log_and_run_records_are_redacted(sentence, secret, memory, tmp_path):
    from memdir import runlog
    from memdir.hooklog import log
    from memdir.stages.extractor import state

    log(memory, "stop", f"worker failed on: {sentence}")
    log(None, "prompt", f"no memory folder for: {sentence}")  # the config home's hook.log
    runlog.append_run(memory, {"engine": "offline", "error": sentence})
    state.log_run(memory, {"session": "s", "errors": [sentence, {"nested": sentence}]})
    state_dir = memory / C.STATE_DIRNAME
    assert (state_dir / "hook.log").read_text().count("[redacted]") == 1
    assert all(json.loads(line) for line in (state_dir / C.RUNS_LOG_NAME).read_text().splitlines())
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_memory_files_index_and_history_refuse_the_secret(sentence, secret, memory, tmp_path):
    from memdir.entry import api

    store = MemoryStore(memory)
    store.save(Memory(name="Ledger", description="Ledger database choice", type="project",
                      body="Postgres\n\n**Why:** transactions\n**How to apply:** use it"))
    for attempt in (
        lambda: store.save(Memory(name="Ledger", description="Ledger database choice", type="project",
                                  body=f"{sentence}\n\n**Why:** x\n**How to apply:** y")),  # an update: history
        lambda: store.save(Memory(name="Keys", description=sentence, type="reference")),  # MEMORY.md's line
        lambda: api.remember(sentence, type="reference", folder=memory),
    ):
        with pytest.raises(MemdirError, match="refusing to save"):
            attempt()
    assert (memory / "MEMORY.md").is_file() and not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_the_extraction_agent_and_offline_extraction_save_no_secret(sentence, secret, memory, tmp_path):
    from memdir.stages.extractor import state
    from memdir.stages.extractor.offline import apply, log_drafts
    from memdir.stages.extractor.tools import Toolbox
    from memdir.transcript import Message

    box = Toolbox(memory)
    body = f"---\nname: Infra\ndescription: infra notes\ntype: project\n---\n{sentence}\n\n**Why:** a\n**How to apply:** b\n"
    assert box.run("Write", {"file_path": str(memory / "project_infra.md"), "content": body}).is_error
    today = date(2026, 3, 2)
    daily = memory / C.LOGS_DIRNAME / "2026" / "03" / "2026-03-02.md"
    log_box = Toolbox(memory, daily_log=daily)
    assert log_box.run("Write", {"file_path": str(daily), "content": f"- 10:00 [project] {sentence}\n"}).is_error
    state.log_run(memory, {"session": "s", "errors": box.errors + log_box.errors})
    said = [Message("user", [{"type": "text", "text": f"Remember that {sentence}."}], uuid="u1")]
    outcome = apply(MemoryStore(memory), said, today=today)
    logged = log_drafts(memory, said, today=today)
    assert not outcome.saved and not [p for p in logged.saved if (memory / p).exists()]
    assert not leaks(secret, tmp_path, Path.home())


@pytest.mark.parametrize("sentence, secret", TYPED, ids=IDS)
def test_endpoint_and_batch_state_in_the_config_home_are_redacted(sentence, secret, tmp_path, monkeypatch):
    from memdir import llm
    from memdir.stages.extractor import batches_api

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy:pa/ss0rdWRT@llm.example.com")
    llm.mark_unreachable(f"APIConnectionError: {sentence}")
    assert llm.unreachable() is not None  # still recognised as this endpoint's cool-down
    batches_api._save({"version": batches_api.STATE_VERSION, "round_jobs": {"job-0": {"conversation": [
        {"role": "user", "content": sentence}]}}})
    assert json.loads(batches_api.state_path().read_text())["round_jobs"]
    assert not leaks(secret, tmp_path, Path.home()) and not leaks("pa/ss0rdWRT", Path.home())


def test_a_cut_never_leaves_half_a_secret(memory, tmp_path):
    """Log lines and quoted paths are cut to a length: a secret across the cut is redacted first."""
    from memdir.hooklog import log
    from memdir.stages.extractor import state
    from memdir.stages.extractor.tools import Toolbox

    token = "ghp_CUT0123456789abcdefghijklmnopqrstuvwx"
    log(memory, "stop", "x" * 1990 + " " + token)
    box = Toolbox(memory)
    assert box.run("Read", {"file_path": "/etc/" + "y" * 184 + "/" + token}).is_error
    state.log_run(memory, {"session": "s", "errors": box.errors})
    assert not leaks("ghp_CUT", tmp_path, Path.home())
