"""The prompt hook says each thing once (issue 21): "Never use npm in this repo, use pnpm" reached the model
four times for one prompt (Claude Code's MEMORY.md line, a decision line, the memory's description, its body)."""

from __future__ import annotations

import io
import json

from memdir import constants as C
from memdir.decisions import Decision, append
from memdir.entry.hooks import main as hook_main
from memdir.model import Memory
from memdir.paths import decisions_dir, resolve_memory_dir
from memdir.scan import scan
from memdir.stages.recall.inject import memory_blocks, render_all, render_memory
from memdir.store import MemoryStore

RULE = "Never use npm in this repo, use pnpm"
PNPM = Memory(name="use-pnpm-not-npm", description=RULE, type="feedback",
              body=f"{RULE}; the reason is the lockfile.\n\n**Why:** npm rewrote the lockfile\n**How to apply:** "
                   "every install")


def _header(store, rel):
    return next(h for h in scan(store.root).headers if h.rel_path == rel)


def test_a_description_the_body_already_says_is_left_out(store):
    store.save(PNPM, rel_path="feedback_pnpm.md")
    block = render_memory(_header(store, "feedback_pnpm.md"))
    assert "Description:" not in block and block.count(RULE) == 1
    store.save(Memory(name="Alice", description="Alice owns payments", type="user", body="Ask her about refunds."),
               rel_path="user_alice.md")
    assert "Description: Alice owns payments" in render_memory(_header(store, "user_alice.md"))  # says more


def test_a_description_while_the_body_is_not_shown_yet_is_kept(store):
    store.save(PNPM, rel_path="feedback_pnpm.md")
    assert f"Description: {RULE}" in render_memory(_header(store, "feedback_pnpm.md"), max_body_lines=0)


def test_a_description_claude_codes_index_line_already_says_is_left_out(store):
    store.save(Memory(name="Alice", description="Alice owns payments", type="user", body="Ask her about refunds."),
               rel_path="user_alice.md")
    known = {"user_alice.md": "- [Alice](user_alice.md) — Alice owns payments"}
    text = render_all([_header(store, "user_alice.md")], known=known)
    assert "Alice owns payments" not in text and "Ask her about refunds." in text


def _project(tmp_path, monkeypatch):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    return project


def _prompt(project, prompt, session="s1") -> str:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out = io.StringIO()
    assert hook_main(["prompt"], stdin=io.StringIO(json.dumps(payload)), stdout=out) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"] if out.getvalue() else ""


def test_the_hook_says_the_rule_once_with_claude_codes_index_loaded(tmp_path, monkeypatch):
    """Native auto memory on, in Claude Code's own folder: MEMORY.md has the rule; memdir adds it once."""
    project = _project(tmp_path, monkeypatch)
    memory = resolve_memory_dir(project).path
    MemoryStore(memory).save(PNPM, rel_path="feedback_pnpm.md")
    append(decisions_dir(memory, project, compat=False),
           [Decision(kind="preference", what=RULE, why="the lockfile", entities=["npm", "pnpm"], confidence=0.9)])
    assert RULE in (memory / C.INDEX_NAME).read_text()  # what Claude Code loads itself
    context = _prompt(project, "how do I install dependencies with pnpm")
    assert context.count(RULE) == 1, context  # the body; no description, no decision line repeating it
    assert "Recent Project Decisions" not in context
    assert len(memory_blocks(context)) == 1


def test_a_decision_no_recalled_memory_states_is_still_shown(tmp_path, monkeypatch):
    project = _project(tmp_path, monkeypatch)
    memory = resolve_memory_dir(project).path
    MemoryStore(memory).save(PNPM, rel_path="feedback_pnpm.md")
    append(decisions_dir(memory, project, compat=False),
           [Decision(kind="decision", what="Renovate bumps pnpm weekly", why="fewer surprise upgrades",
                     entities=["pnpm", "Renovate"], confidence=0.9)])
    context = _prompt(project, "how do I install dependencies with pnpm")
    assert context.startswith(C.RECENT_DECISIONS_HEADING) and "Renovate bumps pnpm weekly" in context
    assert context.count(RULE) == 1


def test_an_unrelated_prompt_gets_no_decisions(tmp_path, monkeypatch):
    project = _project(tmp_path, monkeypatch)
    memory = resolve_memory_dir(project).path
    memory.mkdir(parents=True)
    append(decisions_dir(memory, project, compat=False),
           [Decision(kind="preference", what=RULE, why="the lockfile", entities=["npm", "pnpm"], confidence=0.9)])
    assert _prompt(project, "write a short haiku about autumn leaves") == ""


def test_the_hook_leaves_out_what_claude_codes_index_line_says_only_when_claude_code_loaded_it(tmp_path,
                                                                                               monkeypatch):
    project = _project(tmp_path, monkeypatch)
    memory = resolve_memory_dir(project).path
    MemoryStore(memory).save(Memory(name="Payments owner", description="Alice owns the payments service",
                                    type="user", body="Ask her before changing refunds."), rel_path="user_alice.md")
    native = _prompt(project, "who owns the payments service?")
    assert "Ask her before changing refunds." in native and "Alice owns the payments service" not in native
    monkeypatch.setenv(C.DISABLE_ENV, "1")  # native auto memory off: nobody loaded MEMORY.md's line
    assert "Description: Alice owns the payments service" in _prompt(project, "who owns the payments service?", "s2")
    monkeypatch.delenv(C.DISABLE_ENV)
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path / "elsewhere"))  # memdir's own folder, not the one Claude Code loads
    MemoryStore(tmp_path / "elsewhere").save(Memory(name="Payments owner", description="Alice owns the payments service",
                                                    type="user", body="Ask her first."), rel_path="user_alice.md")
    assert "Description: Alice owns the payments service" in _prompt(project, "who owns the payments service?", "s3")
