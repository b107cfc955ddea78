"""The forward read's links spill to a temporary SQLite file (memdir/transcript_links.py): when that file cannot be
written (the temporary folder full, a file size limit), the read fails as an OSError in one line that names the
temporary folder and the fix, as any other disk error is told, not as sqlite3's bare "disk I/O error" (which the
CLI's `batch --api` path does not catch, and the batch printed as a fault of the transcript)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


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
