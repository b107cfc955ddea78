"""Rendering recalled memories for the agent's context (SPEC §4): capped reads, age headers."""

from __future__ import annotations

from pathlib import Path

from memdir.ages import days_old
from memdir.scan import Header

MAX_LINES = 200
MAX_BYTES = 4096


def read_capped(path: Path, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> tuple[str, bool]:
    """The first `max_lines` lines / `max_bytes` bytes (cut at a character boundary), and whether cut."""
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    text = data[:max_bytes].decode("utf-8-sig", errors="ignore")
    lines = text.split("\n")
    if len(lines) > max_lines:
        text, truncated = "\n".join(lines[:max_lines]), True
    return text.rstrip("\n"), truncated


def verification_line(evidence) -> str:
    """What checking the memory against today's code found (memdir.verify.Evidence), for its header."""
    if evidence is None or not evidence.claims:
        return ""
    if evidence.gone:
        return f"{evidence.summary()}. Do not present what this memory says about these as fact; check the code."
    return evidence.summary()


def render_memory(header: Header, now: float | None = None, cache_dir: Path | None = None, evidence=None) -> str:
    from prompts import render_slotted

    content, truncated = read_capped(header.path)
    verification = verification_line(evidence)
    return render_slotted(
        "recall_memory.j2",
        slots={"path": header.abs_path, "content": content, "verification": verification},
        cache_dir=cache_dir,
        days=days_old(header.mtime, now),
        truncated=truncated,
        checked=bool(verification),
        max_lines=MAX_LINES,
        max_bytes=MAX_BYTES,
    )


def render_all(headers: list[Header], now: float | None = None, cache_dir: Path | None = None,
               evidence: dict | None = None) -> str:
    evidence = evidence or {}
    return "\n\n".join(render_memory(h, now, cache_dir, evidence.get(h.rel_path)) for h in headers)
