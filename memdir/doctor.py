"""Health of a memory folder: everything a scan skips quietly is reported here, loudly."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from memdir import constants as C
from memdir import index as index_text
from memdir.fsio import atomic_write_text, is_temp_file, locked, read_text
from memdir.secrets import find_secrets
from memdir.store import MemoryStore

STALE_TEMP_SECONDS = 3600


@dataclass
class Finding:
    severity: str  # "error" makes the folder unhealthy; "warning" does not
    code: str
    path: str
    message: str
    fixable: bool = False
    fixed: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def _temp_files(root: Path) -> list[Path]:
    out = []
    for folder in (root, root / C.TEAM_DIRNAME):
        if folder.is_dir():
            out.extend(p for p in folder.iterdir() if is_temp_file(p))
    return out


def check(store: MemoryStore, fix: bool = False) -> list[Finding]:
    findings: list[Finding] = []
    if not store.root.exists():
        return [Finding("warning", "missing-folder", str(store.root), "memory folder does not exist yet")]
    result = store.scan()
    for rel, reason in result.unreadable:
        findings.append(Finding("error", "unreadable", rel, f"cannot be read ({reason}); fix its permissions"))
    for h in result.headers:
        if h.problem:
            findings.append(Finding("error", "frontmatter", h.rel_path, h.problem))
        missing = [k for k in ("name", "description", "type") if getattr(h, k) is None]
        if missing and h.problem is None:
            findings.append(
                Finding("error", "frontmatter", h.rel_path, f"frontmatter lacks {', '.join(missing)}")
            )
        try:
            text = read_text(h.path)
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding("error", "unreadable", h.rel_path, f"cannot be read ({exc})"))
            continue
        for secret in find_secrets(text):
            findings.append(
                Finding("error", "secret", h.rel_path, f"line {secret.line} looks like {secret.kind}; remove it")
            )
        if h.type in C.NEEDS_WHY_HOW and (C.WHY_PREFIX not in text or C.HOW_PREFIX not in text):
            findings.append(
                Finding("warning", "why-how", h.rel_path, f"{h.type} memory lacks **Why:** / **How to apply:** lines")
            )

    index = store.index()
    linked = index_text.linked_files(index)
    on_disk = {h.rel_path: h for h in result.headers}
    orphans = [f for f in linked if f not in on_disk and not (store.root / f).exists()]
    unlisted = [rel for rel in on_disk if rel not in linked]
    for rel in orphans:
        findings.append(Finding("error", "orphan-index-line", C.INDEX_NAME, f"links to missing {rel}", fixable=True))
    for rel in unlisted:
        findings.append(Finding("error", "index-drift", rel, f"not listed in {C.INDEX_NAME}", fixable=True))
    capped = index_text.cap(index)
    if capped.truncated:
        which = " and ".join(w for w, hit in (("lines", capped.by_lines), ("size", capped.by_size)) if hit)
        findings.append(
            Finding(
                "error",
                "index-over-cap",
                C.INDEX_NAME,
                f"over the load cap ({which}: {capped.lines} lines, {capped.chars:,} chars; "
                f"limits {C.INDEX_MAX_LINES} / {C.INDEX_MAX_CHARS:,}); shorten entries or prune memories",
            )
        )
    for secret in find_secrets(index):
        findings.append(Finding("error", "secret", C.INDEX_NAME, f"line {secret.line} looks like {secret.kind}"))
    now = time.time()
    for temp in _temp_files(store.root):
        stale = now - temp.stat().st_mtime > STALE_TEMP_SECONDS
        findings.append(
            Finding("warning", "temp-file", temp.relative_to(store.root).as_posix(), "leftover from an interrupted write", fixable=stale)
        )

    if fix:
        _fix(store, findings, orphans, unlisted, on_disk)
    return findings


def _fix(store: MemoryStore, findings: list[Finding], orphans: list[str], unlisted: list[str], on_disk: dict) -> None:
    """Only what is safe: index lines added/removed to match the files, stale temp files removed."""
    with locked(store.lock_path):
        text = store.index()
        for rel in orphans:
            text = index_text.remove(text, rel)
        for rel in unlisted:
            h = on_disk[rel]
            text = index_text.upsert(text, rel, index_text.entry_line(h.name or h.path.stem, rel, h.description or ""))
        if orphans or unlisted:
            atomic_write_text(store.index_path, text)
    for f in findings:
        if f.code in ("orphan-index-line", "index-drift"):
            f.fixed = True
        elif f.code == "temp-file" and f.fixable:
            (store.root / f.path).unlink(missing_ok=True)
            f.fixed = True


def healthy(findings: list[Finding]) -> bool:
    return not any(f.severity == "error" and not f.fixed for f in findings)
