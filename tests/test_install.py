from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

import memdir
from memdir.entry.install import hook_argv, install, uninstall
from memdir.errors import MemdirError

PY = "/opt/memdir/bin/python3"
RUN = "-X utf8 -E -P -c 'from memdir.entry.main import launch; launch()'"  # what runs memdir in PY
FOREIGN = {
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}],
    },
}


@pytest.fixture
def settings(isolated_home):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    text = json.dumps(FOREIGN, indent=4) + "\n"  # the user's own formatting
    path.write_text(text)
    return path, text


def _commands(path, event: str) -> list[str]:
    """The commands of `event`'s hooks in the settings file, in order."""
    return [h["command"] for g in json.loads(path.read_text())["hooks"][event] for h in g["hooks"]]


def _add_hook(path, event: str, command: str, replace: bool = False) -> None:
    """A hook group with `command` added to `event` in the settings file (`replace`: instead of its groups)."""
    data = json.loads(path.read_text())
    group = {"hooks": [{"type": "command", "command": command}]}
    data["hooks"][event] = [group] if replace else [*data["hooks"][event], group]
    path.write_text(json.dumps(data))


def test_install_merges_with_foreign_hooks(settings):
    path, _ = settings
    result = install("user", python=PY)
    assert result.added == ["Stop", "UserPromptSubmit", "SessionStart"] and result.backup
    data = json.loads(path.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert _commands(path, "Stop") == ["notify-send done", f"{PY} {RUN} hook stop"]
    assert data["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": f"{PY} {RUN} hook prompt", "timeout": 15}]}]
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"] == f"{PY} {RUN} hook session-start"


def test_install_twice_changes_nothing(settings):
    path, _ = settings
    install("user", python=PY)
    after_first = path.read_bytes()
    backups = sorted(path.parent.glob("settings.json.bak-*"))
    result = install("user", python=PY)
    assert not result.changed and path.read_bytes() == after_first
    assert sorted(path.parent.glob("settings.json.bak-*")) == backups


def test_reinstall_from_another_path_replaces_instead_of_duplicating(settings):
    path, _ = settings
    install("user", python=PY)
    install("user", python="/new/venv/bin/python")
    assert _commands(path, "UserPromptSubmit") == [f"/new/venv/bin/python {RUN} hook prompt"]


def test_uninstall_restores_the_file_byte_for_byte(settings):
    path, original = settings
    install("user", python=PY)
    result = uninstall("user")
    assert sorted(set(result.removed)) == ["SessionStart", "Stop", "UserPromptSubmit"]
    assert path.read_text() == original


def test_uninstall_keeps_foreign_hooks_added_after_install(settings):
    path, _ = settings
    install("user", python=PY)
    _add_hook(path, "Stop", "say bye")
    uninstall("user")
    hooks = json.loads(path.read_text())["hooks"]
    assert _commands(path, "Stop") == ["notify-send done", "say bye"]
    assert hooks["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert "UserPromptSubmit" not in hooks and "SessionStart" not in hooks


def test_invalid_json_is_refused_and_untouched(settings):
    path, _ = settings
    path.write_text('{"hooks": {')
    with pytest.raises(MemdirError, match="not valid JSON"):
        install("user", python=PY)
    assert path.read_text() == '{"hooks": {'


@pytest.mark.parametrize("number", ["1e999", "-1e400", "NaN", "Infinity", "-Infinity"])
def test_a_number_json_cannot_write_back_is_refused_and_untouched(settings, number):
    """`1e999` is valid JSON, but Python reads it as inf and wrote it back as `Infinity`, which is not: Claude Code
    could no longer read the settings file at all (every setting and hook of the user's ignored). NaN and
    Infinity are not JSON either, and were read as if they were."""
    path, _ = settings
    text = '{"hooks": {}, "limit": ' + number + "}\n"
    path.write_text(text)
    with pytest.raises(MemdirError, match=rf"{path}: .*{number.lstrip('-')}.*fix it by hand"):
        install("user", python=PY)
    assert path.read_text() == text


def test_dry_run_writes_nothing(settings):
    path, original = settings
    result = install("user", python=PY, dry_run=True)
    assert result.changed and f"{PY} {RUN} hook stop" in result.text and path.read_text() == original


def test_project_scope_and_missing_file(tmp_path):
    (tmp_path / ".git").mkdir()
    install("project", cwd=tmp_path, python=PY, no_index=True)
    path = tmp_path / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"] == f"{PY} {RUN} hook session-start --no-index"
    uninstall("project", cwd=tmp_path)
    assert not path.exists()  # memdir created it, memdir removed it


def test_cli_install_uses_the_installed_executable(cli, isolated_home):
    code, out, _ = cli("install")
    data = json.loads((isolated_home / ".claude" / "settings.json").read_text())
    command = data["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert code == 0 and command == shlex.join(hook_argv("stop")) and command.startswith(f"{sys.executable} -S -X utf8 -E -P -c ")
    # Without `site`, the command itself puts memdir's folder and its dependencies' on sys.path.
    assert repr(os.path.dirname(os.path.dirname(memdir.__file__))) in command and "site-packages" in command


def test_the_registered_command_runs_without_site_and_finds_the_same_memdir(tmp_path):
    argv = hook_argv("stop")
    assert argv[1] == "-S"
    code = argv[argv.index("-c") + 1].replace("from memdir.entry.main import launch; launch()",
                                               "import memdir; print(memdir.__file__); print('site' in sys.modules)")
    done = subprocess.run([argv[0], "-S", "-P", "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.split() == [memdir.__file__, "False"]


def test_an_older_install_through_the_console_script_is_replaced_not_duplicated(settings):
    path, _ = settings
    _add_hook(path, "UserPromptSubmit", "/old/bin/memdir hook prompt", replace=True)
    install("user", python=PY)
    assert _commands(path, "UserPromptSubmit") == [f"{PY} {RUN} hook prompt"]
    uninstall("user")
    assert "UserPromptSubmit" not in json.loads(path.read_text()).get("hooks", {})


def test_a_stale_memdir_hook_beside_the_current_one_is_removed(settings):
    """Two memdir entries for one event would recall (and extract) twice per event."""
    path, _ = settings
    install("user", python=PY)
    _add_hook(path, "UserPromptSubmit", "/old/bin/memdir hook prompt")
    assert install("user", python=PY).added == ["UserPromptSubmit"]
    assert _commands(path, "UserPromptSubmit") == [f"{PY} {RUN} hook prompt"]
    assert not install("user", python=PY).changed


def test_the_registered_command_runs_memdir_and_never_a_project_s_own_memdir(tmp_path):
    """Run as Claude Code runs it (a shell, in the session's project), in a project that has a `memdir/`
    package of its own: the installed memdir answers, and pip's console script (which imports re) is not used."""
    import subprocess

    from memdir.entry.install import _command

    planted = tmp_path / "memdir" / "entry"
    planted.mkdir(parents=True)
    (tmp_path / "memdir" / "__init__.py").write_text("")
    (planted / "__init__.py").write_text("")
    (planted / "main.py").write_text("def main():\n    print('the project ran')\n    return 7\n")
    command = _command(None, "Stop", "")
    done = subprocess.run(["sh", "-c", command + " --help"], cwd=tmp_path, input="", capture_output=True, text=True,
                          timeout=60)
    assert "the project ran" not in done.stdout and done.returncode != 7
    probe = subprocess.run(["sh", "-c", command.replace("launch()", "import sys; print(sorted(sys.modules))")],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "'memdir.entry.main'" in probe.stdout and "'re'" not in probe.stdout


def test_changes_within_one_second_keep_every_backup(settings):
    """Each change to settings.json keeps the bytes it replaced; a second change in the same second
    must not overwrite the first one's backup (that backup is the only copy of those bytes)."""
    path, original = settings
    replaced = []
    for exe in (PY, "/second/bin/python", "/third/bin/python"):
        replaced.append(path.read_text())
        assert install("user", python=exe).backup
    replaced.append(path.read_text())
    assert uninstall("user").backup
    backups = sorted(path.parent.glob("settings.json.bak-*"))
    assert len(backups) == 4
    assert sorted(b.read_text() for b in backups) == sorted(replaced) and original in replaced


def test_a_backup_name_already_taken_is_never_overwritten(settings, monkeypatch):
    import memdir.entry.settings_file as settings_file

    path, _ = settings
    monkeypatch.setattr(settings_file, "_backup_stamp", lambda: "20260101-000000-000000")  # a frozen clock
    taken = path.with_name("settings.json.bak-20260101-000000-000000")
    taken.write_text("someone else's backup")
    first = install("user", python=PY).backup
    second = install("user", python="/second/bin/python").backup
    assert taken.read_text() == "someone else's backup"
    assert len({first, second, str(taken)}) == 3


def test_with_no_interpreter_path_the_console_script_is_registered(settings, tmp_path, monkeypatch):
    """sys.executable is "" where Python cannot tell its own path (an embedding host): no `<python> -P -c`
    command can be written, and memdir falls back to pip's `memdir` on PATH, or says in one line it cannot."""
    path, _ = settings
    monkeypatch.setattr(sys, "executable", "")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(MemdirError, match="cannot find the installed `memdir`"):
        install("user")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "memdir").write_text("#!/bin/sh\n")
    (bin_dir / "memdir").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    install("user")
    assert _commands(path, "Stop") == ["notify-send done", f"{bin_dir / 'memdir'} hook stop"]


def test_doctor_says_when_a_hook_still_goes_through_the_older_console_script(cli, isolated_home, tmp_path):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/venv/bin/memdir hook stop"}]}],
                     "PreToolUse": [{"hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}]}}
    path.write_text(json.dumps(old))
    memory = tmp_path / "memory"
    memory.mkdir()
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert "[warning]" in out and "`/opt/venv/bin/memdir hook stop` goes through pip's `memdir` script" in out
    assert "run `memdir install` to register the faster command" in out and "guard" not in out
    install("user", python=PY)
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert "pip's `memdir` script" not in out


def test_doctor_says_when_a_hook_still_runs_site_and_install_drops_it(cli, isolated_home, tmp_path):
    from memdir.entry.install import LAUNCH, site_hooks

    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = shlex.join([sys.executable, "-P", "-c", LAUNCH]) + " hook stop"  # what memdir registered until today
    other = f"{PY} {RUN} hook prompt"  # registered for another Python: keeps site on purpose
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": before}]}],
                                          "UserPromptSubmit": [{"hooks": [{"type": "command", "command": other}]}]}}))
    assert site_hooks() == [(str(path), before)]
    memory = tmp_path / "memory"
    memory.mkdir()
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert f"`{before}` runs Python's `site` on every event" in out and "run `memdir install` to register" in out
    assert other not in out
    install("user")
    assert site_hooks() == []
    _, out, _ = cli("--dir", str(memory), "--cwd", str(tmp_path), "doctor")
    assert "runs Python's `site`" not in out


def test_project_scope_in_a_subfolder_registers_where_claude_code_reads_it_and_says_so(cli, tmp_path, monkeypatch):
    """Claude Code started in a subfolder reads that folder's `.claude/settings.json`, not the repository root's: the
    hooks go where it will read them, and install says they apply only when Claude Code starts there."""
    repo, sub = tmp_path / "repo", tmp_path / "repo" / "sub"
    (repo / ".git").mkdir(parents=True)
    sub.mkdir()
    monkeypatch.chdir(sub)
    code, out, _ = cli("install", "--scope", "project")
    assert code == 0 and (sub / ".claude" / "settings.json").is_file() and not (repo / ".claude").exists()
    assert f"starts in {sub}, not in {repo.resolve()}" in " ".join(out.split())
    monkeypatch.chdir(repo)
    code, out, _ = cli("install", "--scope", "project")
    assert code == 0 and (repo / ".claude" / "settings.json").is_file() and "note:" not in out
