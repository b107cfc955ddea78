"""`--engine claude-code` end to end: memdir drives the real (pinned) `claude` CLI through the Claude
Agent SDK against the scripted loopback API; the requests show what the CLI sent the model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.realclient import harness as H, loopback_api as A

pytest.importorskip("claude_agent_sdk", reason="the claude-code engine's optional extra (memdir[claude-code])")

MEMORY = ("---\nname: Role\ndescription: The user is the tech lead for payments\ntype: user\n---\n"
          "The user is the tech lead for payments.\n")


def test_extraction_and_recall_through_the_real_cli(sandbox, scripted_api, claude_bin, tmp_path):
    memory = tmp_path / "memory"
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
                                      "message": {"role": "user", "content": "Remember that I'm the tech lead for payments."}}) + "\n")
    calls = {"n": 0}

    def reply(request: A.Request) -> A.Reply:
        names = [t.get("name") for t in (request.body or {}).get("tools") or []]
        if "mcp__memdir__Write" in names:
            calls["n"] += 1
            if calls["n"] == 1:
                return A.tool_use("mcp__memdir__Write", {"file_path": str(memory / "user_role.md"), "content": MEMORY})
            return A.text("Saved.")
        # Recall: the CLI asks for structured output through a tool of its own; answer through it.
        structured = [n for n in names if n and "structured" in n.lower()]
        if structured:
            return A.tool_use(structured[0], {"selected_memories": ["user_role.md"]})
        return A.text("Done.")

    api = scripted_api(A.Script(side_reply=reply, memdir_reply=reply))
    env = {**H.claude_env(sandbox, api), "MEMDIR_CLAUDE_CLI": str(claude_bin), "MEMDIR_ENGINE": "claude-code",
           "MEMDIR_PATH": str(memory)}
    done = subprocess.run([sys.executable, "-m", "memdir.entry.cli", "extract", str(transcript), "--session", "s1",
                           "--engine", "claude-code", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tech lead for payments" in (memory / "user_role.md").read_text()  # written through the store
    assert "user_role.md" in (memory / "MEMORY.md").read_text()
    sent = [r for r in api.messages() if r.body and "mcp__memdir__Write" in
            [t.get("name") for t in r.body.get("tools") or []]]
    assert sent, [r.body.get("tools") for r in api.messages() if r.body]
    for request in sent:  # the session's requests carry memdir's tools and nothing else
        # Claude Code 2.1.328 also sends a capability-free placeholder that only keeps deferred tool
        # loading on ("never call this tool"); nothing the model could use to act.
        placeholder = [t for t in request.body["tools"] if t["name"] == "DeferredToolPlaceholder"]
        assert all(t.get("defer_loading") and not t["input_schema"].get("properties") for t in placeholder)
        assert sorted(t["name"] for t in request.body["tools"] if t not in placeholder) == [
            "mcp__memdir__Edit", "mcp__memdir__Glob", "mcp__memdir__Grep", "mcp__memdir__Read", "mcp__memdir__Write"]
        assert "memory extraction agent" in request.system_text()
    print("extraction requests:", json.dumps([r.body.get("tools") and [t["name"] for t in r.body["tools"]]
                                              for r in api.messages() if r.body], indent=1))
    done = subprocess.run([sys.executable, "-m", "memdir.entry.cli", "recall", "who leads payments", "--engine",
                           "claude-code", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    print("recall requests:", json.dumps([[t["name"] for t in r.body.get("tools") or []] for r in api.messages()
                                          if r.body][-2:]))
    answer = json.loads(done.stdout)
    assert answer["engine"] == "claude-code", answer["debug"]
    assert [s["file"] for s in answer["selected"]] == ["user_role.md"]
