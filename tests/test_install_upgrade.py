"""`memdir install` run again over an older memdir's hooks, as doctor advises: the user's own choices survive."""

from __future__ import annotations

import json
import shlex
import sys

from memdir.entry.install import LAUNCH, install, uninstall

PY = "/opt/memdir/bin/python3"
OLD = shlex.join([PY, "-S", "-E", "-P", "-c", LAUNCH])  # registered before -X utf8
FOREIGN = {"type": "command", "command": "/usr/local/bin/greet"}


def _settings(isolated_home, hooks: dict) -> object:
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2))
    return path


def test_the_rewrite_keeps_a_hand_edited_matcher_and_a_longer_timeout_where_they_were(isolated_home):
    """Found by hostile16: the rewrite dropped the older entry and appended a fresh one, so a SessionStart hook the
    user had limited to `startup` ran on every compaction and clear, and a timeout raised to 40 s fell back to 15."""
    path = _settings(isolated_home, {
        "SessionStart": [{"matcher": "startup", "hooks": [FOREIGN, {"type": "command", "timeout": 30,
                                                                    "command": f"{OLD} hook session-start"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{OLD} hook prompt", "timeout": 40}]}],
        "Stop": [{"hooks": [{"type": "command", "command": f"{OLD} hook stop", "timeout": 2}]}],
    })
    result = install("user", python=PY)
    assert result.added == ["Stop", "UserPromptSubmit", "SessionStart"]
    hooks = json.loads(path.read_text())["hooks"]
    start = hooks["SessionStart"]
    assert len(start) == 1 and start[0]["matcher"] == "startup" and start[0]["hooks"][0] == FOREIGN
    assert start[0]["hooks"][1]["timeout"] == 30 and "-X utf8" in start[0]["hooks"][1]["command"]
    assert [g["hooks"][0]["timeout"] for g in hooks["UserPromptSubmit"]] == [40]
    assert [g["hooks"][0]["timeout"] for g in hooks["Stop"]] == [10]  # never below what the hook needs
    assert not install("user", python=PY).changed
    uninstall("user")
    assert json.loads(path.read_text())["hooks"] == {"SessionStart": [{"matcher": "startup", "hooks": [FOREIGN]}]}


def test_a_second_older_entry_is_still_removed_not_kept_beside_the_rewritten_one(isolated_home):
    path = _settings(isolated_home, {"Stop": [{"hooks": [{"type": "command", "command": f"{OLD} hook stop"}]},
                                              {"hooks": [{"type": "command", "command": "/old/bin/memdir hook stop"}]}]})
    install("user", python=PY)
    stops = [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]
    assert len(stops) == 1 and "-X utf8" in stops[0]


def test_doctor_advises_the_install_that_keeps_no_index(cli, isolated_home, tmp_path):
    """Found by hostile16: doctor told a user who had installed with --no-index to run `memdir install`, which
    registers the SessionStart hook without it: MEMORY.md was injected at every session start again."""
    old = shlex.join([sys.executable, "-S", "-E", "-P", "-c", LAUNCH])
    _settings(isolated_home, {"Stop": [{"hooks": [{"type": "command", "command": f"{old} hook stop"}]}],
                              "SessionStart": [{"hooks": [{"type": "command",
                                                           "command": f"{old} hook session-start --no-index"}]}]})
    memory = tmp_path / "memory"
    memory.mkdir()
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    advice = [line for line in out.splitlines() if "locale's encoding" in line]
    assert len(advice) == 2 and all("run `memdir install --no-index`" in line for line in advice), advice


def test_doctor_names_a_hook_registered_differently_in_both_scopes(cli, isolated_home, tmp_path):
    """Found by hostile16: with memdir's hooks in the user's and the project's settings, upgrading one scope makes
    the two commands differ, and Claude Code (which merges only identical commands) runs both prompt hooks at once:
    each reads the session's state before the other writes it, and the same memories are injected twice."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    old = shlex.join([sys.executable, "-S", "-E", "-P", "-c", LAUNCH])
    project = repo / ".claude" / "settings.json"
    project.parent.mkdir(parents=True)
    project.write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{old} hook prompt"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": f"{old} hook session-start"}]}]}}))
    install("user")
    memory = tmp_path / "memory"
    memory.mkdir()
    _, out, _ = cli("--dir", str(memory), "--cwd", str(repo), "doctor")
    twice = [line for line in out.splitlines() if "registered in both settings files" in line]
    assert len(twice) == 2 and all(str(project) in line for line in twice), out
    prompt = next(line for line in twice if "`prompt` hook" in line)
    assert "only one of them says each memory" in prompt  # the session's lock (memdir.entry.prompt_claim)
    start = next(line for line in twice if "`session-start` hook" in line)
    assert "only one of them gives the session its start" in start  # memdir.entry.start_claim
    install("project", cwd=repo)  # the same command in both: Claude Code runs it once
    _, out, _ = cli("--dir", str(memory), "--cwd", str(repo), "doctor")
    assert "registered in both settings files" not in out
