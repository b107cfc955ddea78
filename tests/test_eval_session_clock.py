"""An eval replays a past session on its own clock: the extraction request says the session's day ("Today is
2026-04-02"), and what the session writes is stamped then too. relay14, answering as the model, read back a memory
"modified: 2026-11-27" (the clock's day) in a session dated 2026-01-25."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

from tests.relay_files import wait_for, write_answer

SESSION = "sessions2/en-flywheel-askuser"  # its messages were written on 2026-04-02
CASSETTE = Path(__file__).resolve().parent / "cassettes" / "realdata"


def _recorded_write() -> dict:
    """The recorded answer's first Write (a memory of the user's own words, which the support check passes)."""
    recorded = json.loads(next(CASSETTE.glob("sessions2_en-flywheel-askuser.*.json")).read_text(encoding="utf-8"))
    return next(b for b in recorded["response"]["content"] if b.get("name") == "Write")


def test_a_memory_written_in_an_eval_of_a_past_session_is_stamped_on_the_sessions_day(realdata, cli, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setenv("MEMDIR_RELAY_TIMEOUT", "120")
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")  # the form whose frontmatter carries `modified:`
    relay = tmp_path / "relay"
    write = _recorded_write()
    seen: list[str] = []

    def model() -> None:  # writes the memory and reads it back, then is done
        wait_for(relay / "0001.request.md")
        first = (relay / "0001.request.md").read_text(encoding="utf-8")
        folder = re.search(r"(\S*memdir-realdata-[^/\s]+/memory)", first).group(1)
        path = write["input"]["file_path"].replace("<memory-dir>", folder)
        write_answer(relay / "0001.response.json", {"content": [
            {"type": "tool_use", "name": "Write", "input": {**write["input"], "file_path": path}},
            {"type": "tool_use", "name": "Read", "input": {"file_path": path}}]})
        wait_for(relay / "0002.request.md")
        seen.append((relay / "0002.request.md").read_text(encoding="utf-8"))
        write_answer(relay / "0002.response.json", {"content": [{"type": "text", "text": "Saved."}],
                                                    "stop_reason": "end_turn"})

    answering = threading.Thread(target=model, daemon=True)
    answering.start()
    code, _, err = cli("eval", "run", "--suite", "realdata", "--engine", "relay", "--relay-dir", str(relay),
                       "--session", SESSION, "--skip-no-loss", "--out", str(tmp_path / "runs"))
    answering.join(5)
    assert code == 0, err
    shown = seen[0]
    assert "Today is 2026-04-02." in shown
    stamps = re.findall(r"modified: (\S+)", shown)
    assert len(stamps) == 2 and all(s.startswith("2026-04-02T") for s in stamps), stamps  # the Write's, the Read's
    assert time.strftime("%Y-%m-%d", time.gmtime()) not in shown


def test_a_later_chunks_list_of_memories_shows_their_own_saved_time_not_the_files(tmp_path, monkeypatch):
    """mend22 stamped an eval's memories with the session's clock, but the extraction request of a later chunk
    listed them with the file's time (this machine's clock): "saved 2026-11-27" of a memory a March session made.
    The list shows the memory's own stamp (metadata.modified, or a legacy top-level `modified`); a memory with none,
    or one that is no time, keeps its file's."""
    import os
    from datetime import UTC, date, datetime

    from memdir.config import Settings
    from memdir.model import Memory, stamped_at
    from memdir.stages.extractor.agent import build_request
    from memdir.store import MemoryStore

    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")
    memory = tmp_path / "memory"
    store = MemoryStore(memory)
    with stamped_at(datetime(2026, 3, 14, 9, 26, 53, 589000, tzinfo=UTC)):
        store.save(Memory(name="Release day", description="Releases go out on Tuesdays", type="project",
                          body="Releases go out on Tuesdays.\n\n**Why:** said so.\n**How to apply:** plan for it."))
    (memory / "user_legacy.md").write_text("---\nname: Legacy\ndescription: Old form, own stamp\ntype: user\n"
                                           "modified: 2026-02-01T08:00:00+01:00\n---\nBody.\n", encoding="utf-8")
    (memory / "user_unstamped.md").write_text("---\nname: Plain\ndescription: No stamp\ntype: user\n"
                                              "modified: not a time\n---\nBody.\n", encoding="utf-8")
    file_time = datetime(2026, 11, 27, 12, 0, tzinfo=UTC).timestamp()
    for path in memory.glob("*.md"):
        os.utime(path, (file_time, file_time))
    request = build_request([], memory, Settings(engine="llm"), date(2026, 3, 14))
    listed = request["messages"][0]["content"][0]["text"]
    lines = {line.split("] ")[1].split(" (")[0]: line for line in listed.splitlines() if line.startswith("- [")}
    assert "(2026-03-14T09:26:53Z)" in lines["project_release_day.md"], listed
    assert "(2026-02-01T07:00:00Z)" in lines["user_legacy.md"], listed
    assert "(2026-11-27T12:00:00Z)" in lines["user_unstamped.md"], listed
