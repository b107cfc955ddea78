"""Where the decision tiers live (issue 19): the memory folder by default, nothing in the user's repository;
OrchestKit's `.claude/memory/` only when the user opts in; an existing repo journal is named, never moved."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.decisions import Decision, append, journal_path, read_journal
from memdir.entry.hooks import main as hook_main
from memdir.paths import decisions_dir, orchestkit_compat, resolve_memory_dir
from memdir.stages.extractor.decision_pipeline import stop_step

DECISION_PROMPT = "We chose Vitest over Jest since it shares the Vite config."


def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    return repo


def prompt_hook(repo: Path, prompt: str, session: str = "s1") -> dict:
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out = io.StringIO()
    assert hook_main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else {}


@pytest.fixture
def config_home(tmp_path, monkeypatch) -> Path:
    """Claude Code's config home outside the repository, so the default memory folder is too."""
    home = tmp_path / "config"
    monkeypatch.setenv(C.CONFIG_HOME_ENV, str(home))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    return home


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_decision_prompt_and_a_stop_leave_the_repository_clean(tmp_path, config_home):
    """The real hook processes, as Claude Code runs them: the journal and graph land in the memory folder."""
    repo = git_repo(tmp_path)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(repo),
                                      "message": {"role": "user", "content": "hello there"}}) + "\n")
    env = {**os.environ, "MEMDIR_DENSE": "0"}
    argv = [sys.executable, "-m", "memdir.entry.main", "hook"]
    for event, extra in (("prompt", {"hook_event_name": "UserPromptSubmit", "prompt": DECISION_PROMPT}),
                         ("stop", {"hook_event_name": "Stop"})):
        payload = {"session_id": "s1", "cwd": str(repo), "transcript_path": str(transcript), **extra}
        done = subprocess.run([*argv, event], input=json.dumps(payload), capture_output=True, text=True, env=env,
                              timeout=60)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    memory = resolve_memory_dir(repo).path
    folder = decisions_dir(memory, repo, compat=False)
    deadline = time.monotonic() + 60
    while not ((folder / C.GRAPH_FILE).exists() and "Vitest" in (folder / C.GRAPH_FILE).read_text()):
        log = memory / C.STATE_DIRNAME / "hook.log"
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no hook log"
        time.sleep(0.1)
    assert [d.what for d in read_journal(folder).decisions] == ["We chose Vitest over Jest"]
    assert folder == memory / ".memdir" / "decisions" and not memory.is_relative_to(repo)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored"], cwd=repo,
                            capture_output=True, text=True, check=True, timeout=30)
    assert status.stdout == ""


def test_orchestkit_compat_keeps_writing_the_repositorys_claude_memory(tmp_path, config_home, monkeypatch):
    repo = git_repo(tmp_path)
    monkeypatch.setenv(C.ORCHESTKIT_COMPAT_ENV, "1")
    prompt_hook(repo, DECISION_PROMPT)
    memory = resolve_memory_dir(repo).path
    stop_step(memory, str(repo))
    old_layout = repo / ".claude" / "memory"
    assert [d.what for d in read_journal(old_layout).decisions] == ["We chose Vitest over Jest"]
    assert "Vitest" in (old_layout / "graph.jsonl").read_text()
    assert not decisions_dir(memory, repo, compat=False).exists()
    assert "## Recent Project Decisions" in (memory / C.INDEX_NAME).read_text()  # OrchestKit's MEMORY.md section
    shown = prompt_hook(repo, "what did we decide about tests", session="s2")
    assert "We chose Vitest over Jest" in shown["hookSpecificOutput"]["additionalContext"]


def test_the_config_key_opts_in_for_this_folder_but_a_repository_cannot_opt_itself_in(tmp_path, monkeypatch):
    repo, memory = tmp_path / "repo", tmp_path / "memory"
    (memory / C.STATE_DIRNAME).mkdir(parents=True)
    assert not orchestkit_compat(memory, repo).enabled  # the default
    (memory / C.STATE_DIRNAME / C.MEMDIR_CONFIG_NAME).write_text(json.dumps({C.ORCHESTKIT_COMPAT_KEY: True}))
    assert orchestkit_compat(memory, repo).enabled
    monkeypatch.setenv(C.ORCHESTKIT_COMPAT_ENV, "0")
    assert not orchestkit_compat(memory, repo).enabled  # the environment decides when set
    monkeypatch.delenv(C.ORCHESTKIT_COMPAT_ENV)
    inside = repo / ".claude" / "agent-memory" / "reviewer"  # a memory folder the repository ships
    (inside / C.STATE_DIRNAME).mkdir(parents=True)
    (inside / C.STATE_DIRNAME / C.MEMDIR_CONFIG_NAME).write_text(json.dumps({C.ORCHESTKIT_COMPAT_KEY: True}))
    assert not orchestkit_compat(inside, repo).enabled
    user_wide = tmp_path / "home" / ".claude" / "memdir" / C.MEMDIR_CONFIG_NAME
    user_wide.parent.mkdir(parents=True)
    user_wide.write_text(json.dumps({C.ORCHESTKIT_COMPAT_KEY: True}))
    monkeypatch.setenv(C.CONFIG_HOME_ENV, str(tmp_path / "home" / ".claude"))
    assert orchestkit_compat(inside, repo).enabled  # the user's own config opts in every project


def test_a_journal_already_in_the_repository_is_named_once_and_never_moved(tmp_path, config_home, cli):
    repo = git_repo(tmp_path)
    old_layout = repo / ".claude" / "memory"
    append(old_layout, [Decision(kind="decision", what="Use Postgres for the job queue", confidence=0.9)])
    before = journal_path(old_layout).read_bytes()
    first = prompt_hook(repo, "what were we doing here")
    assert "Postgres" not in json.dumps(first.get("hookSpecificOutput", {}))  # not read while compat is off
    notice = first["systemMessage"]
    assert str(journal_path(old_layout)) in notice and f"{C.ORCHESTKIT_COMPAT_ENV}=1" in notice
    assert C.ORCHESTKIT_COMPAT_KEY in notice
    assert "systemMessage" not in prompt_hook(repo, "a new session starts here", session="s2")  # said once
    code, out, _ = cli("--cwd", str(repo), "status")
    assert str(journal_path(old_layout)) in out and "is not read" in out
    code, out, _ = cli("--cwd", str(repo), "doctor")
    assert f"[warning] {journal_path(old_layout)}: is not read" in out
    code, out, _ = cli("--cwd", str(repo), "status", "--orchestkit-compat")
    assert "1 decision(s)" in out and "is not read" not in out
    assert journal_path(old_layout).read_bytes() == before and sorted(os.listdir(old_layout)) == [
        ".decisions.jsonl.lock", "decisions.jsonl"]


def test_a_choice_in_the_config_quiets_the_notice_and_a_bad_value_is_named(tmp_path, config_home, cli):
    repo = git_repo(tmp_path)
    append(repo / ".claude" / "memory", [Decision(kind="decision", what="Use Postgres", confidence=0.9)])
    config = resolve_memory_dir(repo).path / C.STATE_DIRNAME / C.MEMDIR_CONFIG_NAME
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({C.ORCHESTKIT_COMPAT_KEY: "yes"}))
    code, out, _ = cli("--cwd", str(repo), "doctor")
    assert f"[warning] {config}: {C.ORCHESTKIT_COMPAT_KEY} is 'yes', which is ignored" in out
    assert "is not read" in out  # an ignored value is no choice
    config.write_text(json.dumps({C.ORCHESTKIT_COMPAT_KEY: False}))  # the user chose memdir's layout
    code, out, _ = cli("--cwd", str(repo), "doctor")
    assert "is not read" not in out and "ignored" not in out
    assert "systemMessage" not in prompt_hook(repo, "what were we doing here")
    code, out, _ = cli("--cwd", str(repo), "status")
    assert "is not read" not in out
