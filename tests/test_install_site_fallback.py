"""The hook command without `site` (memdir.entry.install.hook_argv) when the folders it names are gone, and when
they hold quotes, spaces and non-ASCII letters."""

from __future__ import annotations

import json
import shlex
import subprocess

import memdir
from memdir.entry import install as inst


def test_a_command_whose_folders_are_gone_still_finds_memdir(tmp_path):
    """The environment made again for another Python (lib/python3.11 -> 3.12) or the project moved: the folders
    written into the command are gone, the interpreter is still there. Without `site` every event failed on
    `import memdir` (a traceback per prompt) until `memdir install` ran again; it falls back to `site` now."""
    argv = inst.hook_argv("stop")
    paths = inst.import_paths()
    gone = [str(tmp_path / "moved-project"), str(tmp_path / "lib" / "python3.99" / "site-packages")]
    code = argv[argv.index("-c") + 1]
    assert repr(paths) in code
    code = code.replace(repr(paths), repr(gone)).replace(inst.LAUNCH, "import memdir; print(memdir.__file__)")
    done = subprocess.run([argv[0], "-S", "-P", "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [memdir.__file__]


def test_a_command_whose_folders_are_there_does_not_load_site(tmp_path):
    argv = inst.hook_argv("stop")
    code = argv[argv.index("-c") + 1].replace(inst.LAUNCH, "print('site' in sys.modules)")
    done = subprocess.run([argv[0], "-S", "-P", "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.stdout.split() == ["False"], done.stderr


def test_folders_with_quotes_spaces_and_accents_round_trip_and_are_recognised(isolated_home, monkeypatch):
    odd = ["/opt/o'brien's \"tools\"/memdir src", "/home/zoë/.venv/lib/python3.11/site-packages", "/tmp/a; b"]
    monkeypatch.setattr(inst, "import_paths", lambda: odd)
    inst.install("user")
    path = isolated_home / ".claude" / "settings.json"
    commands = [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]
    assert len(commands) == 1 and shlex.split(commands[0]) == inst.hook_argv("stop")
    assert inst.older_hooks() == []  # the current form, not an older one
    inst.install("user")  # again: recognised as ours, not added twice
    assert len(json.loads(path.read_text())["hooks"]["Stop"]) == 1
    inst.uninstall("user")
    assert not path.exists()  # memdir created the file: removed whole, its hook with it
