"""Every real session replayed turn by turn through `memdir hook stop`, the worker run inline:
every prompt the user typed (on the real branch) reaches the extractor, however long the turn."""

from __future__ import annotations

import io
import json
import os

import pytest

from memdir.evals.realdata_path import main_sessions
from memdir.said import queued_prompt, words_of_user_line
from memdir.transcript_lines import as_blocks


def _prompts_in_file(lines: list[dict]) -> tuple[set[str], list[int]]:
    """(uuids of the user's prompts on the real branch, indexes where a new turn starts), read forward
    and independently of the reader: a rewound prompt is one that a later prompt replaced (same parent)."""
    prompts, by_parent, parent_of, starts = [], {}, {}, []
    for i, obj in enumerate(lines):
        uuid = obj.get("uuid")
        if not uuid or obj.get("isSidechain"):
            continue
        parent_of[uuid] = obj.get("parentUuid")
        said = ""
        if obj.get("type") == "user" and isinstance(obj.get("message"), dict):
            said, kind = words_of_user_line(obj, as_blocks(obj["message"].get("content")))
            if kind == "prompt":
                by_parent.setdefault(obj.get("parentUuid"), []).append(uuid)
                starts.append(i)
        elif obj.get("type") == "attachment":
            said = queued_prompt(obj.get("attachment") or {})
        if said:
            prompts.append(uuid)
    dead = {u for siblings in by_parent.values() for u in siblings[:-1]}
    changed = True
    while changed:
        changed = False
        for uuid, parent in parent_of.items():
            if parent in dead and uuid not in dead:
                dead.add(uuid)
                changed = True
    return {u for u in prompts if u not in dead}, starts


@pytest.fixture
def inline_worker(monkeypatch):
    """`memdir hook stop` spawns a detached worker; here the worker runs in this process instead."""
    from memdir.entry import worker

    def spawn(path, argv, env, **kwargs):
        assert argv[1:6] == ["-X", "utf8", "-P", "-m", "memdir.entry.worker"]
        worker.main(argv[6:])

    monkeypatch.setattr(os, "posix_spawn", spawn)


def test_every_prompt_of_every_real_session_is_read(realdata, tmp_path, monkeypatch, inline_worker):
    import memdir.stages.extractor.run as run
    from memdir.entry.hooks import main as hook_main

    seen: set[str] = set()
    original = run.extract_messages

    def recording(messages, *args, **kwargs):
        seen.update(m.uuid for m in messages if m.user_text())
        return original(messages, *args, **kwargs)

    monkeypatch.setattr(run, "extract_messages", recording)
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv("MEMDIR_EXTRACT_CHUNK_TOKENS", "2000")  # small chunks: long turns span several
    totals = {"sessions": 0, "turns": 0, "prompts": 0}
    for number, session in enumerate(main_sessions(realdata)):
        raw = [line for line in session.read_text(encoding="utf-8").splitlines() if line.strip()]
        lines = [json.loads(line) for line in raw]
        expected, starts = _prompts_in_file(lines)
        memory = tmp_path / f"memory-{number}"
        monkeypatch.setenv("MEMDIR_PATH", str(memory))
        transcript = tmp_path / f"{session.stem}.jsonl"
        cuts = [i for i in starts if i > 0] + [len(raw)]
        for cut in cuts:  # the transcript as it stands when each turn ends
            transcript.write_text("\n".join(raw[:cut]) + "\n", encoding="utf-8")
            payload = {"session_id": session.stem, "transcript_path": str(transcript), "cwd": str(tmp_path),
                       "hook_event_name": "Stop", "stop_hook_active": False}
            assert hook_main(["stop"], stdin=io.StringIO(json.dumps(payload)), stdout=io.StringIO()) == 0
        missing = expected - seen
        assert not missing, f"{session.name}: {len(missing)} of {len(expected)} prompts never read"
        totals["sessions"] += 1
        totals["turns"] += len(cuts)
        totals["prompts"] += len(expected)
    print(f"replayed {totals['sessions']} sessions, {totals['turns']} turns: "
          f"{totals['prompts']} of {totals['prompts']} prompts read")
    assert totals["sessions"] == len(main_sessions(realdata)) and totals["prompts"] > 0
