"""Acting as the model through the relay in a test: wait for a request file, write an answer the way the docs ask."""

from __future__ import annotations

import json
import time
from pathlib import Path


def wait_for(path: Path, seconds: float = 110) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def write_answer(path: Path, body: dict) -> None:
    """As the docs ask: written elsewhere, then renamed in."""
    spare = path.with_suffix(".tmp")
    spare.write_text(json.dumps(body), encoding="utf-8")
    spare.replace(path)
