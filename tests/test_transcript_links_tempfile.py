"""The forward read's links spill to a temporary SQLite file (memdir/transcript_links.py): when that file cannot be
written (the temporary folder full, a file size limit), the read fails as an OSError in one line that names the
temporary folder and the fix, as any other disk error is told, not as sqlite3's bare "disk I/O error" (which the
CLI's `batch --api` path does not catch, and the batch printed as a fault of the transcript)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from uuid import uuid4

import pytest


def test_a_temporary_file_that_cannot_grow_is_one_line_naming_the_fix(tmp_path: Path):
    transcript = tmp_path / "s.jsonl"
    with transcript.open("w", encoding="utf-8") as handle:
        parent = None
        for i in range(6000):
            uuid = f"uuid-{i:08d}-{'a' * 40}"
            handle.write(json.dumps({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s",
                                     "message": {"role": "user", "content": f"prompt {i}"}}) + "\n")
            parent = uuid
    script = textwrap.dedent(f"""
        import resource, signal
        from memdir import transcript_links
        from memdir.errors import os_error_line
        from memdir.transcript_stream import iter_messages
        transcript_links.CACHE_KIB = 16  # spill to the temporary file early
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        try:
            sum(1 for _ in iter_messages(__import__("pathlib").Path({str(transcript)!r})))
        except OSError as exc:
            print("OSError:", os_error_line(exc))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.startswith("OSError:") and "TMPDIR" in done.stdout and "\n" not in done.stdout.strip()


PEAK_DISK = """
import os, sys, threading, time
from pathlib import Path
from memdir.transcript_stream import iter_messages
folder, peak, reading = os.environ["TMPDIR"], [0], [True]

def temporary_bytes() -> int:  # the read's open files in the temporary folder: SQLite unlinks them when it opens them
    used = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(folder):
                used += os.stat(f"/proc/self/fd/{fd}").st_blocks * 512
        except OSError:
            pass
    return used

def watch() -> None:
    while reading[0]:
        peak[0] = max(peak[0], temporary_bytes())
        time.sleep(0.005)

watcher = threading.Thread(target=watch)
watcher.start()
try:
    print(sum(1 for _ in iter_messages(Path(sys.argv[1]))), end=" ")
finally:
    reading[0] = False
    watcher.join()
print(peak[0])
"""


@pytest.mark.slow  # writes and reads a million tiny lines (about 30 s); .ci/run runs it with --slow
@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="reads the temporary files' size from /proc (Linux)")
def test_the_temporary_file_of_a_million_tiny_lines_stays_under_the_transcripts_size(tmp_path: Path):
    # mend22: with uuids stored as their text, 1.5 million tiny lines (207 MB) took 305 MB of the temporary folder at
    # the read's peak, 3 million (415 MB) 614 MB. Half the lines are prompts and the first one is rewound, so that
    # every table, the rewind's index and its sort are made.
    path = tmp_path / "tiny.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "user", "uuid": "old", "parentUuid": None,
                              "message": {"role": "user", "content": "rewound"}}) + "\n")
        parent = None
        for i in range(1_000_000):
            uuid = f"{uuid4()}"
            if i % 2:
                out.write(json.dumps({"type": "progress", "uuid": uuid, "parentUuid": parent}) + "\n")
            else:
                out.write(json.dumps({"type": "user", "uuid": uuid, "parentUuid": parent,
                                      "message": {"role": "user", "content": "x"}}) + "\n")
            parent = uuid
    size = path.stat().st_size
    folder = tmp_path / "tmp"
    folder.mkdir()
    done = subprocess.run([sys.executable, "-c", PEAK_DISK, str(path)], capture_output=True, text=True, timeout=600,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "TMPDIR": str(folder),
                               "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr[-2000:]
    read, peak = (int(value) for value in done.stdout.split())
    assert read == 500_000  # every prompt but the rewound one
    assert peak < 0.85 * size, f"the temporary files took {peak >> 20} MB at most for a {size >> 20} MB transcript"


def test_uuids_stored_in_16_bytes_find_the_rewinds_the_whole_read_finds():
    """A uuid in Claude Code's form is stored as its 16 bytes, other text as it is: no two spellings may meet (the
    uuid 61616161-... packs to the bytes of 'a' * 16; its capitals are another parent to the backward read)."""
    from memdir.transcript import rewound
    from memdir.transcript_links import Links

    packed = "61616161-6161-6161-6161-616161616161"
    names = [packed, packed.upper(), "a" * 16, "a" * 15, "a" * 17, "", "\udc80x", str(uuid4()), str(uuid4())]
    rng = __import__("random").Random(22)
    for _ in range(200):
        lines = [(rng.choice(names) + str(rng.randint(0, 1)) * rng.randint(0, 1),
                  rng.choice([None, *names]), rng.random() < 0.5) for _ in range(rng.randint(1, 12))]
        links = Links()
        try:
            for line in lines:
                links.add(line, {})
            links.settle()
            assert {uuid for uuid, _, _ in lines if links.is_dead(uuid)} == rewound(lines), lines
        finally:
            links.close()
