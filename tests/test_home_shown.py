"""The extraction request shows the user's home folder as `~` where it adds nothing (the memory folder, the agent's
tool calls and their output), and the memory tools take a `~/` path back, still confined to the memory folder."""

from __future__ import annotations

from datetime import date

import pytest

from memdir.config import Settings
from memdir.stages.extractor.agent import build_request
from memdir.stages.extractor.tools import Toolbox
from memdir.transcript import Message

GOOD = "---\nname: Role\ndescription: Backend engineer\ntype: user\n---\nBackend engineer.\n"
WHEN = "2026-03-02T10:00:00Z"


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home" / "alice"
    (home / ".claude" / "projects" / "-home-alice-shop" / "memory").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def _session(cwd: str) -> list[Message]:
    read = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": f"{cwd}/src/app.py"}}
    return [
        Message("user", [{"type": "text", "text": "Keep my notes in /home/alice/notes, always."}], uuid="u1",
                timestamp=WHEN, cwd=cwd, kind="prompt"),
        Message("assistant", [{"type": "text", "text": f"Reading {cwd}/src/app.py"}, read], uuid="a1", timestamp=WHEN,
                cwd=cwd),
        Message("user", [{"type": "tool_result", "tool_use_id": "t1", "content": f"{cwd}/src/app.py: 12 lines"}],
                uuid="u2", timestamp=WHEN, cwd=cwd),
    ]


def test_the_request_shows_the_home_folder_as_a_tilde_but_keeps_the_users_words(home):
    memory = home / ".claude" / "projects" / "-home-alice-shop" / "memory"
    request = build_request(_session("/home/alice/shop"), memory, Settings(engine="llm"), date(2026, 3, 2))
    system = request["system"][0]["text"]
    shown = "\n".join(block["text"] for block in request["messages"][0]["content"])
    assert str(home) not in system + shown
    assert "directly inside ~/.claude/projects/-home-alice-shop/memory" in system
    assert "Reading ~/shop/src/app.py" in shown and '{"file_path": "~/shop/src/app.py"}' in shown
    assert "~/shop/src/app.py: 12 lines" in shown
    assert "Keep my notes in /home/alice/notes, always." in shown  # the user's own words, as typed
    assert shown.count("/home/alice") == 1


def test_a_windows_home_in_the_agents_calls_is_shown_as_a_tilde(home):
    request = build_request(_session("C:\\Users\\Alice\\shop"), home / "m", Settings(engine="llm"), date(2026, 3, 2))
    shown = "\n".join(block["text"] for block in request["messages"][0]["content"])
    assert "Alice" not in shown
    assert "Reading ~\\shop/src/app.py" in shown and '{"file_path": "~\\\\shop/src/app.py"}' in shown


def test_the_tools_take_the_tilde_path_they_are_shown_and_show_it_back(home):
    memory = home / ".claude" / "projects" / "-home-alice-shop" / "memory"
    box = Toolbox(memory)
    shown_dir = "~/.claude/projects/-home-alice-shop/memory"
    written = box.run("Write", {"file_path": f"{shown_dir}/user_role.md", "content": GOOD})
    assert not written.is_error, written.content
    assert (memory / "user_role.md").is_file()
    assert box.run("Glob", {"pattern": "user_*.md"}).content.splitlines() == [f"{shown_dir}/user_role.md"]
    assert f"{shown_dir}/user_role.md:7:Backend engineer." in box.run("Grep", {"pattern": "Backend"}).content.splitlines()
    assert not box.run("Read", {"file_path": f"{shown_dir}/user_role.md"}).is_error
    refused = box.run("Write", {"file_path": "/etc/user_x.md", "content": GOOD})
    assert refused.is_error and shown_dir in refused.content and str(home) not in refused.content


@pytest.mark.parametrize("outside", ["~/.claude/projects/-home-alice-shop/memory/../../other/user_x.md",
                                     "~/.ssh/user_x.md", "~/user_x.md", "~root/user_x.md", "~nosuchuser42/user_x.md"])
def test_a_tilde_path_outside_the_memory_folder_is_refused(home, outside):
    box = Toolbox(home / ".claude" / "projects" / "-home-alice-shop" / "memory")
    assert box.run("Write", {"file_path": outside, "content": GOOD}).is_error
    assert not list(home.rglob("user_x.md"))
