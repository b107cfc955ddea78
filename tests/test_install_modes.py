"""install/uninstall keep the settings file's permissions: its `env` may hold an API key."""

from __future__ import annotations

import json
import os
import stat

import pytest

from memdir.entry.install import install, uninstall
from memdir.errors import MemdirError

PY = "/opt/memdir/bin/python3"
SECRET = {"env": {"ANTHROPIC_API_KEY": "sk-ant-not-for-others"}, "model": "opus"}

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


@pytest.fixture
def private_settings(isolated_home):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(SECRET) + "\n")
    path.chmod(0o600)
    return path


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_settings_file_stays_private_through_install_and_uninstall(private_settings):
    install("user", python=PY)
    assert _mode(private_settings) == 0o600
    pristine = private_settings.with_name("settings.json.memdir-original")
    assert _mode(pristine) == 0o600  # the same key, as it was before memdir
    uninstall("user")
    assert json.loads(private_settings.read_text()) == SECRET and _mode(private_settings) == 0o600


def test_a_private_settings_file_stays_private_when_uninstall_keeps_other_changes(private_settings):
    install("user", python=PY)
    data = json.loads(private_settings.read_text())
    data["theme"] = "dark"  # a change after install: uninstall rewrites rather than restores
    private_settings.write_text(json.dumps(data))
    uninstall("user")
    assert json.loads(private_settings.read_text())["theme"] == "dark" and _mode(private_settings) == 0o600


def test_a_read_only_settings_file_is_refused_and_untouched(private_settings):
    private_settings.chmod(0o400)
    before = private_settings.read_bytes()
    with pytest.raises(MemdirError, match="read-only"):
        install("user", python=PY)
    assert private_settings.read_bytes() == before and _mode(private_settings) == 0o400
    assert sorted(p.name for p in private_settings.parent.iterdir()) == ["settings.json"]


def test_a_read_only_settings_file_is_refused_by_uninstall_too(private_settings):
    install("user", python=PY)
    private_settings.chmod(0o444)
    before = private_settings.read_bytes()
    with pytest.raises(MemdirError, match="read-only"):
        uninstall("user")
    assert private_settings.read_bytes() == before and _mode(private_settings) == 0o444
