"""memdir.light_json gives json's values and errors through `_json` alone (the Stop hook skips `re`'s import)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from memdir import light_json

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.sampled_from(["", " ", "\n", " \t\r\n "]))
def test_loads_reads_what_json_reads(value, pad):
    text = pad + json.dumps(value) + pad
    assert light_json.loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "[1,]", '{"a" 1}', "nul", "'a'", "{} {}", '"\\x"'])
def test_what_json_refuses_it_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        light_json.loads(text)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), st.none() | st.booleans() | st.integers() | st.text() | st.lists(st.text(), max_size=3),
                       max_size=5))
def test_dumps_writes_what_json_writes(value):
    assert light_json.dumps(value) == json.dumps(value)


def test_the_stop_hook_imports_neither_json_nor_re(tmp_path):
    """The reason this module exists: the Stop hook's budget is two bare starts, and `re` is a third of one."""
    payload = json.dumps({"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
                          "hook_event_name": "Stop", "stop_hook_active": False})
    code = ("import sys; sys.argv = ['memdir', 'hook', 'stop']\n"
            "from memdir.entry.main import main\nmain()\n"
            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules), file=sys.stderr)")
    env = {"MEMDIR_DISABLE": "1", "MEMDIR_PATH": str(tmp_path / "m"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def test_a_broken_object_is_a_value_error_in_a_process_without_json():
    """The C scanner reports a broken object through json.decoder, which it only finds if something imported it:
    in a hook (no `json`) '{"a" 1}' raised SystemError, past every `except ValueError` reading a state file."""
    code = ("import sys\nfrom memdir import light_json\nassert 'json' not in sys.modules\n"
            "for text in ('{\"a\" 1}', '{\"a\": 1,}', '\"abc', '[1, {\"b\" 2}]'):\n"
            "    try:\n        light_json.loads(text)\n    except ValueError:\n        pass\n"
            "    else:\n        raise SystemExit('read: ' + text)\nprint('ok')")
    done = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n{code}"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr[-500:]
