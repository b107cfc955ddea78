"""install and uninstall read settings.json, change it and write it back: an edit made in between (Claude Code's own,
or a second `memdir install`) is never overwritten. The edit starts again from a fresh read; one clear line when
the file keeps changing."""

from __future__ import annotations

import json
import threading

import pytest

from memdir.entry import install as install_module, settings_file
from memdir.entry.install import install, uninstall
from memdir.errors import MemdirError

PY1, PY2 = "/opt/one/bin/python3", "/opt/two/bin/python3"


@pytest.fixture
def settings(isolated_home):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model": "opus"}) + "\n")
    return path


def _edit_once_between_read_and_write(monkeypatch, path, times: int = 1) -> list[int]:
    """Claude Code sets a key (`theme`: a new value each time) after memdir read the file, before it writes."""
    done: list[int] = []
    real = settings_file._keep_backup

    def edit_then_backup(target, original):
        if len(done) < times:
            data = json.loads(path.read_text())
            data["theme"] = f"dark-{len(done)}"
            path.write_text(json.dumps(data))
            done.append(1)
        return real(target, original)

    monkeypatch.setattr(settings_file, "_keep_backup", edit_then_backup)
    return done


def _stop_commands(path) -> list[str]:
    return [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]


def test_an_edit_between_installs_read_and_write_is_kept(settings, monkeypatch):
    done = _edit_once_between_read_and_write(monkeypatch, settings)

    result = install("user", python=PY1)

    data = json.loads(settings.read_text())
    assert done and data["theme"] == "dark-0" and data["model"] == "opus"  # Claude Code's edit survived
    assert result.changed and len(_stop_commands(settings)) == 1 and PY1 in _stop_commands(settings)[0]


def test_an_edit_between_uninstalls_read_and_write_is_kept(settings, monkeypatch):
    install("user", python=PY1)
    data = json.loads(settings.read_text())
    data["effort"] = "high"  # a change after install: uninstall rewrites rather than restores
    settings.write_text(json.dumps(data))
    _edit_once_between_read_and_write(monkeypatch, settings)

    uninstall("user")

    data = json.loads(settings.read_text())
    assert data["theme"] == "dark-0" and data["effort"] == "high" and "hooks" not in data


def test_a_file_that_keeps_changing_is_one_line_and_the_last_edit_stays(settings, monkeypatch):
    _edit_once_between_read_and_write(monkeypatch, settings, times=100)

    with pytest.raises(MemdirError, match="changed 5 times while memdir was editing it") as raised:
        install("user", python=PY1)

    assert "\n" not in str(raised.value)
    assert json.loads(settings.read_text()) == {"model": "opus", "theme": "dark-4"}  # never overwritten


def test_two_installs_at_once_each_see_the_others_result(settings, monkeypatch):
    """Both read before either writes (on the old code): the second wrote over the first's result, which no
    backup held. Now they take turns: every version the file held is the file or one of its backups."""
    both_read = threading.Barrier(2, timeout=0.5)
    real = install_module.load_settings

    def load_then_wait(path):
        loaded = real(path)
        try:
            both_read.wait()
        except threading.BrokenBarrierError:
            pass  # the other install holds the lock: it waits for this one to finish
        return loaded

    monkeypatch.setattr(install_module, "load_settings", load_then_wait)
    results, errors = {}, []

    def run(python: str) -> None:
        try:
            results[python] = install("user", python=python)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(py,)) for py in (PY1, PY2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)

    assert not errors and len(results) == 2
    kept = {settings.read_text()} | {p.read_text() for p in settings.parent.glob("settings.json.bak-*")}
    assert {results[PY1].text, results[PY2].text} <= kept  # neither install's result was lost
    assert len(_stop_commands(settings)) == 1  # one memdir hook, from whichever ran last


@pytest.mark.parametrize("planted", ["home-link", "lock-link", "lock-folder", "home-file"])
def test_a_planted_settings_lock_or_memdir_folder_is_one_line_and_nothing_is_made_through_a_link(
        settings, tmp_path, planted):
    """The lock was opened by path: a ~/.claude/memdir linked elsewhere, or a lock file that is a dangling link, had
    the lock file made at the link's target (anywhere the link pointed); a folder in its place was 'Is a directory'."""
    outside = tmp_path / "outside"
    outside.mkdir()
    home = settings.parent / "memdir"
    if planted == "home-link":
        home.symlink_to(outside)
    elif planted == "home-file":
        home.write_text("not a folder")
    else:
        home.mkdir()
        lock = home / "settings-edit.lock"
        lock.mkdir() if planted == "lock-folder" else lock.symlink_to(outside / "made-through-the-link")
    before = settings.read_text()

    with pytest.raises(MemdirError) as raised:
        install("user", python=PY1)

    line = str(raised.value)
    assert "\n" not in line and str(home) in line and "nothing was changed" in line
    assert list(outside.iterdir()) == [] and settings.read_text() == before
