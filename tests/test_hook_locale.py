"""Claude Code (Node) writes the hook payload, and names files, in UTF-8 whatever the locale says. Under a locale whose
encoding is not UTF-8 (Latin-1, GB18030, EUC-JP) Python read a Chinese prompt as other letters and a project folder
`projé` as another name; the user's PYTHONUTF8=1 had set it right, and the hook command now runs with -E, which ignores
it. So the hook and the processes it starts run in UTF-8 mode (memdir.constants.PYTHON_UTF8_MODE)."""

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

_DEPLOY = ("---\nname: 部署流程\ndescription: 部署到生产服务器前先运行数据库迁移\ntype: project\n---\n"
           "部署到生产服务器前先运行数据库迁移。\n\n**Why:** 用户说的。\n**How to apply:** 每次部署。\n")
_PROMPT = "怎么部署到生产服务器？ 先做数据库迁移吗"


@pytest.fixture
def latin1(tmp_path) -> dict[str, str]:
    """A Latin-1 locale, built here (the test machine may have none): the environment that selects it."""
    folder = tmp_path / "locales"
    folder.mkdir()
    if not shutil.which("localedef"):
        pytest.skip("no localedef to build a Latin-1 locale with")
    made = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
                          capture_output=True, timeout=60)
    env = {"LOCPATH": str(folder), "LC_ALL": "en_US.ISO-8859-1"}
    probe = subprocess.run([sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
                           capture_output=True, text=True, env={"PATH": os.environ["PATH"], **env}, timeout=60)
    if made.returncode not in (0, 1) or probe.stdout.strip() != "iso8859-1":  # 1: warnings only
        pytest.skip(f"no Latin-1 locale here ({made.stderr!r}, {probe.stdout!r})")
    return env


def _hook(event: str, payload: dict, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    from memdir.entry.install import _command

    command = _command(None, {"prompt": "UserPromptSubmit", "stop": "Stop"}[event], "")
    return subprocess.run(["sh", "-c", command], cwd=cwd, input=json.dumps(payload, ensure_ascii=False).encode(),
                          capture_output=True, env=env, timeout=60)


def test_a_chinese_prompt_in_a_project_named_with_an_accent_under_a_latin1_locale(latin1, isolated_home, tmp_path):
    from memdir.prompt_scope import memory_dir_for

    project = tmp_path / "projé"
    project.mkdir()
    memory = Path(memory_dir_for(str(project)) or "")
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text(_DEPLOY, encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "HOME": str(isolated_home), **latin1, "MEMDIR_ENGINE": "offline",
           "MEMDIR_RECALL_SERVER": "0", "MEMDIR_TOKEN_STORE_FILL": "0", "PYTHONUTF8": "1"}  # -E: ignored
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": _PROMPT}
    done = _hook("prompt", payload, env, project)
    assert done.returncode == 0 and not done.stderr, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "部署到生产服务器前先运行数据库迁移" in context
    assert sorted(p.name for p in memory.parent.parent.iterdir()) == [memory.parent.name]  # no second folder


def test_the_stop_hooks_worker_saves_into_the_projects_folder_under_a_latin1_locale(latin1, isolated_home, tmp_path):
    from memdir.prompt_scope import memory_dir_for

    project = tmp_path / "projé"
    project.mkdir()
    transcript = project / "session.jsonl"
    said = "Don't mock the database in integration tests, because mocks hid a broken migration."
    lines = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z",
              "cwd": str(project), "message": {"role": "user", "content": said}},
             {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:05Z",
              "cwd": str(project), "message": {"id": "m1", "role": "assistant",
                                               "content": [{"type": "text", "text": "Understood."}]}}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    memory = Path(memory_dir_for(str(project)) or "")
    env = {"PATH": os.environ["PATH"], "HOME": str(isolated_home), **latin1, "MEMDIR_ENGINE": "offline",
           "MEMDIR_RECALL_SERVER": "0", "MEMDIR_TOKEN_STORE_FILL": "0"}
    payload = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
               "hook_event_name": "Stop", "stop_hook_active": False}
    done = _hook("stop", payload, env, project)
    assert done.returncode == 0 and not done.stderr, done.stderr
    deadline = time.monotonic() + 30
    while not list(memory.glob("feedback_*.md")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(memory.glob("feedback_*.md")), sorted(str(p) for p in isolated_home.rglob("*"))
    assert sorted(p.name for p in memory.parent.parent.iterdir()) == [memory.parent.name]


@pytest.mark.parametrize("locale_encoding", ["utf-8", "latin-1", "cp1252"])
def test_the_console_scripts_hook_reads_the_payload_as_utf8(tmp_path, monkeypatch, locale_encoding):
    """The form Windows registers (pip's `memdir.exe hook prompt`) runs in no UTF-8 mode; its file names are UTF-8
    anyway, and its stdin, cp1252, read a Chinese prompt as other letters: it is read as UTF-8 there."""
    from memdir.entry.main import main

    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "deploy.md").write_text(_DEPLOY, encoding="utf-8")
    monkeypatch.setenv("MEMDIR_PATH", str(memory))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    payload = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit", "prompt": _PROMPT}
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload, ensure_ascii=False).encode("utf-8")),
                             encoding=locale_encoding)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "argv", ["memdir", "hook", "prompt"])
    assert main() == 0
    assert "部署到生产服务器前先运行数据库迁移" in json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]


def test_doctor_names_a_hook_registered_without_utf8_mode_until_install_runs_again(cli, isolated_home, tmp_path):
    import shlex

    from memdir.entry.install import LAUNCH, install, locale_hooks

    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = shlex.join([sys.executable, "-S", "-E", "-P", "-c", LAUNCH]) + " hook stop"  # registered on 2026-11-27
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": before}]}]}}))
    memory = tmp_path / "memory"
    memory.mkdir()
    assert locale_hooks() == [(str(path), before)]
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert f"`{before}` reads Claude Code's UTF-8 in your locale's encoding" in out and "with -X utf8" in out
    install("user")
    assert locale_hooks() == []
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert "locale's encoding" not in out
    hooks = json.loads(path.read_text())["hooks"]["Stop"]
    assert [h["command"] for group in hooks for h in group["hooks"]] == [hooks[-1]["hooks"][0]["command"]]  # once
    assert " -X utf8 -E -P -c " in hooks[-1]["hooks"][0]["command"]
