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
