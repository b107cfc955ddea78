"""Health of a memory folder: everything a scan skips quietly is reported here, loudly.

That includes whatever memdir refuses to touch: a symlink anywhere inside the folder (memdir never
follows one), a FIFO, device or socket, and memory files or MEMORY.md that are huge or not UTF-8.
`--fix` repairs only the index and stale temp files, never through a symlink.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import asdict, dataclass

from memdir import constants as C, index as index_text, safefs, safefs_write
from memdir.file_facts import Checks, FileFacts
from memdir.frontmatter_io import COLON_READ_AS_WRITTEN
from memdir.fsio import is_temp_file
from memdir.scan import Header
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


def _temp_files(store: MemoryStore) -> list[str]:
    """Leftover temp files (store-root-relative), listed without following symlinks."""
    out: list[str] = []
    for folder in ("", C.TEAM_DIRNAME) if not store.prefix else ("",):
        try:
            names = safefs.listdir(store.base, store.prefix + folder)
        except OSError:
            continue
        out.extend(f"{folder}/{n}" if folder else n for n, kind in names if kind == "file" and is_temp_file(n))
    return out


def _entries_memdir_refuses(store: MemoryStore) -> list[Finding]:
    """Every symlink, FIFO, device or socket inside the folder: memdir never follows or reads them."""
    findings = []
    for rel, kind in safefs.walk(store.base, store.prefix.rstrip("/")):
        if kind == "symlink":
            parent, _, name = rel.rpartition("/")
            try:
                with safefs.open_dir(store.base, parent) as dfd:
                    target = os.readlink(name, dir_fd=dfd)
            except OSError:
                target = "?"
            findings.append(Finding("error", "symlink", rel, f"is a symlink (to {target}); memdir never follows "
                                    "symlinks inside the memory folder: replace it with a regular file or remove it"))
        elif kind == "other":
            try:
                parent, _, name = rel.rpartition("/")
                with safefs.open_dir(store.base, parent) as dfd:
                    mode = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode
                what = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
            except OSError:
                what = "not a regular file"
            findings.append(Finding("error", "not-a-file", rel, f"is {what}; memdir never reads it: remove it"))
    if store.prefix:
        for finding in findings:
            finding.path = finding.path[len(store.prefix):] if finding.path.startswith(store.prefix) else finding.path
    return findings


def _logs() -> list[str]:
    """The logs memdir appends to in `.memdir/`, the `.1` each of the rotated ones is moved aside to, and the decision
    inbox and journal (appended to as well: the prompt hook refuses a second name there without a word)."""
    from memdir.provenance import NAME as PROVENANCE

    rotated = [C.HOOK_LOG_NAME, C.RUNS_LOG_NAME]
    journal = f"{C.DECISIONS_DIRNAME}/{C.DECISIONS_JOURNAL}"
    return [f"{C.STATE_DIRNAME}/{name}"
            for name in (*rotated, *(f"{n}.1" for n in rotated), PROVENANCE, C.DECISION_INBOX, journal)]


def _log_findings(store: MemoryStore) -> list[Finding]:
    """A folder where a log goes (the walk names links, FIFOs, devices and sockets; a folder is a folder to it), and a
    log with a second name (a hard link, which memdir never appends through). Only lstat: nothing opened, so no FIFO
    can hang this."""
    findings = []
    for rel in _logs():
        try:
            st = safefs.lstat(store.base, rel)
        except OSError:
            continue  # .memdir itself a link or not a folder: the walk names it
        if st is None:
            continue
        if stat.S_ISDIR(st.st_mode):
            findings.append(Finding("error", "not-a-file", rel, "is a folder where memdir keeps a log; memdir cannot "
                                    "write or move the log aside while it is there: remove it"))
        elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            findings.append(Finding("error", "hard-link", rel, safefs.hard_links(st.st_nlink)))
    return findings


def check(store: MemoryStore, fix: bool = False) -> list[Finding]:
    findings: list[Finding] = []
    if not store.root.exists():
        return [Finding("warning", "missing-folder", str(store.root), "memory folder does not exist yet")]
    findings.extend(_entries_memdir_refuses(store))
    if not store.prefix:  # the personal folder's check: its .memdir/ is where the logs are
        findings.extend(_log_findings(store))
    facts = store.facts()  # per-file results of earlier runs, for files unchanged since (file_facts.py)
    result = store.scan(facts)
    for rel, reason in result.unreadable:
        findings.append(Finding("error", "unreadable", rel, f"cannot be read ({reason}); fix its permissions"))
    for h in result.headers:
        findings.extend(_file_findings(store, facts, h))
    facts.save()

    index_findings, orphans, unlisted = _index_findings(store, {h.rel_path: h for h in result.headers})
    findings.extend(index_findings)
    for temp in _temp_files(store):
        st = safefs.lstat(store.base, store.prefix + temp)
        stale = st is not None and _age(store, temp, st, on_disk_clock=fix) > STALE_TEMP_SECONDS
        findings.append(Finding("warning", "temp-file", temp, "leftover from an interrupted write", fixable=stale))

    if fix:
        _fix(store, findings, orphans, unlisted, {h.rel_path: h for h in result.headers})
    return findings


def _age(store: MemoryStore, temp: str, st: os.stat_result, on_disk_clock: bool) -> float:
    """How long ago the temp file was last written. Before --fix removes it, on the clock that stamped it, the file
    system's (memdir.fsio.folder_now, as the sweeps read it): on a network disk whose server runs an hour behind this
    machine, a temp file another writer had just made looked stale, and --fix removed it under that writer. A plain
    doctor run writes nothing, not even the folder's time: this machine's clock, for the report alone."""
    if not on_disk_clock:
        return time.time() - st.st_mtime
    try:
        return safefs_write.folder_now(store.base, (store.prefix + temp).rpartition("/")[0]) - st.st_mtime
    except OSError:
        return 0.0  # a folder it may not touch: not removed


def _file_findings(store: MemoryStore, facts: FileFacts, h: Header) -> list[Finding]:
    """Frontmatter, secrets and why/how lines of one memory; the text is read only when it changed."""
    findings = []
    if h.problem:
        as_written = h.problem.endswith(COLON_READ_AS_WRITTEN)
        findings.append(Finding("warning" if as_written else "error", "frontmatter", h.rel_path, h.problem))
    missing = [k for k in ("name", "description", "type") if getattr(h, k) is None]
    if missing and h.problem is None:
        findings.append(Finding("error", "frontmatter", h.rel_path, f"frontmatter lacks {', '.join(missing)}"))
    checks = facts.checks(h.rel_path)
    if checks is None:
        try:
            text = store.read_file(h.rel_path)  # bounded: huge, non-UTF-8 or swapped-in symlinks are refused
        except OSError as exc:
            return [*findings, Finding("error", "unreadable", h.rel_path, f"cannot be read ({exc})")]
        checks = Checks([(s.line, s.kind) for s in find_secrets(text)], C.WHY_PREFIX in text and C.HOW_PREFIX in text)
        facts.remember_checks(h.rel_path, checks)
    for line, kind in checks.secrets:
        findings.append(Finding("error", "secret", h.rel_path, f"line {line} looks like {kind}; remove it"))
    if h.type in C.NEEDS_WHY_HOW and not checks.has_why_how:
        findings.append(Finding("warning", "why-how", h.rel_path, f"{h.type} memory lacks **Why:** / **How to apply:** "
                                "lines: add the reason and when it applies to its body"))
    return findings


def _index_findings(store: MemoryStore, on_disk: dict) -> tuple[list[Finding], list[str], list[str]]:
    """MEMORY.md against the files: (findings, index lines whose file is gone, files --fix may list)."""
    findings: list[Finding] = []
    try:
        index = store.index()
        index_ok = True
    except OSError as exc:  # huge, not UTF-8, a symlink or a FIFO: reported, never rewritten
        findings.append(Finding("error", "index-unreadable", C.INDEX_NAME, f"cannot be read ({exc})"))
        index, index_ok = "", False
    linked = index_text.linked_files(index)
    orphans = [f for f in linked if f not in on_disk and not _exists(store, f)]
    listed = set(linked)
    unlisted = [rel for rel in on_disk if rel not in listed and index_text.linkable(rel)] if index_ok else []
    for rel in (rel for rel in on_disk if not index_text.linkable(rel)):
        findings.append(Finding("error", "file-name", rel, f"its name cannot be linked from {C.INDEX_NAME} (a space, "
                                "a ')', a control character or bytes that are not UTF-8); rename it"))
    capped = index_text.cap(index)
    if unlisted and (index_text.is_full(index) or capped.truncated):  # where Claude Code stops loading
        findings.append(Finding("warning", "index-full", C.INDEX_NAME,
                                f"{len(unlisted)} memories are not listed: it stays within what Claude Code loads "
                                f"({C.INDEX_MAX_LINES} lines, {C.INDEX_MAX_CHARS:,} characters); recall still finds them"))
        unlisted = []
    for rel in orphans:
        findings.append(Finding("error", "orphan-index-line", C.INDEX_NAME, f"links to missing {rel}", fixable=True))
    for rel in unlisted:
        findings.append(Finding("error", "index-drift", rel, f"not listed in {C.INDEX_NAME}", fixable=True))
    if capped.truncated:
        which = " and ".join(w for w, hit in (("lines", capped.by_lines), ("size", capped.by_size)) if hit)
        findings.append(Finding(
            "error", "index-over-cap", C.INDEX_NAME,
            f"over the load cap ({which}: {capped.lines} lines, {capped.chars:,} chars; "
            f"limits {C.INDEX_MAX_LINES} / {C.INDEX_MAX_CHARS:,}); `memdir index --rebuild` brings memdir's "
            "entries within it (the previous MEMORY.md is kept), or shorten what you wrote"))
    for secret in find_secrets(index):
        findings.append(Finding("error", "secret", C.INDEX_NAME, f"line {secret.line} looks like {secret.kind}"))
    return findings, orphans, unlisted


def _fix(store: MemoryStore, findings: list[Finding], orphans: list[str], unlisted: list[str], on_disk: dict) -> None:
    """Only what is safe: index lines added/removed to match the files, stale temp files removed."""
    with store._locked():
        text = store.index()
        for rel in orphans:
            text = index_text.remove(text, rel)
        for rel in unlisted:
            h = on_disk[rel]
            text = index_text.upsert(text, rel, index_text.entry_line(h.name or h.path.stem, rel, h.description or ""))
        kept = store._write_index(text, "doctor-fix") if orphans or unlisted else None
    for f in findings:
        if f.code in ("orphan-index-line", "index-drift"):
            f.fixed = True
            if kept:  # the lines removed may have been hand-written: say where the old index is
                f.message += f" (previous MEMORY.md kept: {kept})"
        elif f.code == "temp-file" and f.fixable:
            # removes the entry itself; a symlink is never followed
            safefs_write.unlink(store.base, store.prefix + f.path)
            f.fixed = True


def _exists(store: MemoryStore, rel: str) -> bool:
    try:
        return safefs.lstat(store.base, store.prefix + rel) is not None
    except OSError:
        return True  # something is there (perhaps behind a symlink): not an orphan line to remove


def healthy(findings: list[Finding]) -> bool:
    return not any(f.severity == "error" and not f.fixed for f in findings)


def config_findings(memory_dir: str | os.PathLike | None, env=None) -> list[Finding]:
    """memdir's config files (the user's, then the folder's) that exist but are not a JSON object: every reader
    (locate.config_value) ignores such a file whole, so `"enabled": false` or a write mode in it does nothing."""
    from memdir import light_json
    from memdir.locate import config_home, read_small_file

    files = [os.path.join(config_home(env), "memdir", C.MEMDIR_CONFIG_NAME)]
    if memory_dir is not None:
        files.append(os.path.join(memory_dir, C.STATE_DIRNAME, C.MEMDIR_CONFIG_NAME))
    findings = []
    for path in files:
        try:
            raw = read_small_file(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problem = f"cannot be read ({exc.strerror or exc})"
        else:
            try:
                parsed = light_json.loads(raw.decode("utf-8-sig"))
                problem = "" if isinstance(parsed, dict) else "is not a JSON object"
            except (UnicodeDecodeError, ValueError) as exc:
                line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
                where = f"line {line} column {column}: " if line else ""
                problem = f"is not valid JSON ({where}{getattr(exc, 'msg', None) or exc})"
        if problem:
            findings.append(Finding("error", "config", path, f"{problem}: memdir ignores the whole file, so none of its "
                                    'settings apply; make it an object such as {"enabled": false}'))
    return findings
