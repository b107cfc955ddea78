"""Property-based fuzzing (hypothesis) of the three places untrusted text enters memdir: the
frontmatter reader, the transcript reader, and every tool the extraction agent can call.

Bounded so the suite stays fast on two shared cores: a fixed number of examples, derandomized (the
same inputs on every run, so CI is stable and the counts are reproducible), no example database.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memdir.errors import MemdirError
from tests.hostile.conftest import CANARY, count_lost, record_escape, snapshot

BOUNDED = settings(max_examples=int(os.environ.get("MEMDIR_FUZZ_EXAMPLES", "60")), deadline=None,
                   derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


_SCRATCH: list = []


def _scratch(tmp_path_factory):
    """One folder reused by every example (a fresh temp folder per example is most of the cost)."""
    if not _SCRATCH:
        _SCRATCH.append(tmp_path_factory.mktemp("fuzz"))
    return _SCRATCH[0]


text_blocks = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": json_values}), max_size=3)


def _count_crash(tally, where: str, exc: BaseException) -> None:
    tally.tracebacks += 1
    tally.notes.append(f"traceback: {where}: {type(exc).__name__}: {exc}"[:200])


# --- frontmatter --------------------------------------------------------------------------------
header_lines = st.lists(
    st.sampled_from(["name: x", "description: d", "type: user", "type: [a", "- item", "  nested: 1", "key: |",
                     "key: 'q", 'key: "q', "key: &a 1", "*a", "!!python/object:os.system", ": :", "---", "...",
                     "\ufeff", "\x00", "name: " + "x" * 300]) | st.text(max_size=60),
    max_size=12,
)


@BOUNDED
@given(lines=header_lines, body=st.text(max_size=200), opened=st.booleans())
def test_frontmatter_reader(tally, lines, body, opened):
    from memdir.frontmatter_io import parse_document, parse_header

    text = ("---\n" if opened else "") + "\n".join(lines) + "\n---\n" + body
    for reader in (parse_header, parse_document):
        tally.tried += 1
        try:
            parsed = reader(text)
        except Exception as exc:  # noqa: BLE001
            _count_crash(tally, reader.__name__, exc)
            raise
        assert isinstance(parsed.fields, dict)


@BOUNDED
@given(data=st.binary(max_size=3000))
def test_header_scan_of_arbitrary_bytes(tally, tmp_path_factory, data):
    from memdir.scan import scan

    folder = _scratch(tmp_path_factory) / "scan"
    folder.mkdir(exist_ok=True)
    (folder / "user_x.md").write_bytes(data)
    tally.tried += 1
    try:
        result = scan(folder)
    except Exception as exc:  # noqa: BLE001
        _count_crash(tally, "scan", exc)
        raise
    assert len(result.headers) + len(result.unreadable) == 1


# --- transcripts --------------------------------------------------------------------------------
line_objects = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "summary", "system", "attachment"]) | json_values},
    optional={"uuid": st.sampled_from(["u1", "u2", "u3"]) | json_values,
              "parentUuid": st.sampled_from(["u1", "u2", None]) | json_values,
              "sessionId": json_values, "cwd": json_values, "timestamp": json_values,
              "isMeta": json_values, "isSidechain": st.booleans(), "isCompactSummary": json_values,
              "origin": json_values | st.fixed_dictionaries({"kind": json_values}),
              "attachment": json_values | st.fixed_dictionaries(
                  {"type": st.sampled_from(["queued_command", "hook_additional_context"]) | json_values},
                  optional={"prompt": json_values | text_blocks, "content": json_values | text_blocks,
                            "commandMode": json_values}),
              "message": st.fixed_dictionaries({}, optional={
                  "role": st.sampled_from(["user", "assistant"]) | json_values, "id": json_values,
                  "content": json_values | st.lists(st.fixed_dictionaries(
                      {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking"]) | json_values},
                      optional={"text": json_values, "name": json_values, "input": json_values,
                                "content": json_values | text_blocks, "id": json_values,
                                "is_error": json_values}), max_size=4)})},
)


@BOUNDED
@given(lines=st.lists(line_objects.map(json.dumps) | st.text(max_size=30), max_size=12),
       last_n=st.none() | st.integers(1, 5), cursor=st.none() | st.text(max_size=5))
def test_transcript_reader(tally, tmp_path_factory, lines, last_n, cursor):
    from memdir.stages.extractor import offline
    from memdir.stages.extractor.excerpt import excerpt_messages
    from memdir.stages.extractor.run import main_agent_wrote_memory
    from memdir.transcript import read_transcript, recent_tool_names

    path = _scratch(tmp_path_factory) / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    tally.tried += 1
    try:
        read = read_transcript(path, last_n=last_n, after_uuid=cursor)
        messages = read.messages
        offline.detect(messages)
        excerpt_messages(messages)
        recent_tool_names(messages)
        main_agent_wrote_memory(messages, path.parent / "memory")
        for m in messages:
            m.text(), m.user_text(), m.tool_uses()
    except MemdirError:
        pass
    except Exception as exc:  # noqa: BLE001
        _count_crash(tally, "transcript reader", exc)
        raise


# --- every tool ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fuzz_folder(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzztools")
    outside = base / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text(CANARY + "\n")
    memory = base / "memory"
    memory.mkdir()
    (memory / "user_real.md").write_text("---\nname: Real\ndescription: vim\ntype: user\n---\nvim user\n")
    (memory / "MEMORY.md").write_text("- [Real](user_real.md) — vim\n")
    (memory / "reference_key.md").symlink_to(outside / "id_rsa")
    (memory / "keys").symlink_to(outside, target_is_directory=True)
    os.mkfifo(memory / "pipe.md")
    return memory, outside


FRAGMENTS = ["..", ".", "", "~", "MEMORY.md", ".memdir", "team", "user_real.md", "reference_key.md", "keys",
             "id_rsa", "pipe.md", "x.md", "%2e%2e", "\x00", "etc", "passwd", "*", "**", "\\", "\uff0e\uff0e"]


@st.composite
def paths(draw, memory, outside):
    parts = draw(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=5))
    anchor = draw(st.sampled_from(["", str(memory) + "/", str(outside) + "/", "/", "~/"]))
    return anchor + "/".join(parts)


@BOUNDED
@given(data=st.data())
def test_every_tool(tally, fuzz_folder, data):
    from memdir.stages.extractor.tools import Toolbox

    memory, outside = fuzz_folder
    before_outside = snapshot(outside)
    real = (memory / "user_real.md").read_bytes()
    name = data.draw(st.sampled_from(["Read", "Grep", "Glob", "Write", "Edit", "Bash"]) | st.text(max_size=8))
    keys = ["file_path", "path", "pattern", "glob", "content", "old_string", "new_string", "replace_all", "offset",
            "limit", "command"]
    value = paths(memory, outside) | json_values | st.text(max_size=40)
    tool_input = data.draw(st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), value, max_size=4)
                           | json_values)
    box = Toolbox(memory)
    box.run("Read", {"file_path": "user_real.md"})  # so a Write/Edit to it may go through the store
    tally.tried += 1
    try:
        result = box.run(name, tool_input)
    except Exception as exc:  # noqa: BLE001
        _count_crash(tally, f"Toolbox.run({name!r}, {str(tool_input)[:80]})", exc)
        raise
    assert not record_escape(tally, f"{name} {str(tool_input)[:80]}", result.content)
    assert count_lost(tally, before_outside, snapshot(outside)) == 0
    current = (memory / "user_real.md").read_bytes() if (memory / "user_real.md").exists() else None
    if current != real:  # a legitimate update or forget (forget keeps it in .memdir/history/): reset for the next example
        (memory / "user_real.md").write_bytes(real)
    assert os.path.islink(memory / "reference_key.md") and os.path.islink(memory / "keys")
