"""The extraction agent's memory folder as its tools see it: one run's state, confinement, and the read-only tools.

Read, Grep and Glob keep the names and input shapes the model knows but see only the markdown files of the
memory folder (never `.memdir/`, hidden names, or anything outside). They are plain Python over `memdir.safefs`:
no subprocess, no symlink followed at any path component, FIFOs/devices/folders refused, every read capped.
`Toolbox` (extractor/tools.py) adds the dispatch and the writes.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from memdir import constants as C, safefs, write_mode
from memdir.secrets import redact
from memdir.stages.extractor.platform_paths import shown_path
from memdir.stages.extractor.tool_input import Refused, glob_regex
from memdir.store import MemoryStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.stages.extractor.support import Source

MAX_OUTPUT = 30_000
READ_DEFAULT_LINES = 2000
MAX_PATTERN_CHARS = 1000
MAX_MATCHES = 500
MAX_LISTED = 1000


class ReadTools:
    """One run's state over one memory folder, the confinement every tool goes through, and Read, Grep, Glob."""

    def __init__(self, memory_dir: Path, *, dry_run: bool = False, daily_log: Path | None = None,
                 source: str = "extraction") -> None:
        self.daily_log = daily_log  # daily-log mode: the only writable file, append-only
        # The write mode decides what a write does (memdir/write_mode.py): it is saved, proposed for
        # `memdir review` (confirm), or refused (manual, read-only: nothing is saved on the model's judgement).
        self.writers = write_mode.Writers(Path(memory_dir), source)
        self.store = self.writers.store(write_mode.AUTO) or MemoryStore(memory_dir)
        self.proposing = self.writers.action(write_mode.AUTO) == write_mode.PROPOSE
        self.memory_dir = Path(os.path.abspath(memory_dir))
        # The folder may sit below a symlink (macOS /var, a dotfiles ~/.claude): both spellings name it.
        self._aliases = {str(self.memory_dir), os.path.realpath(self.memory_dir)}
        self.shown_dir = shown_path(self.memory_dir)  # as the model is told it: `~/...` under the home folder
        self.dry_run = dry_run
        self.snapshots: dict[str, str] = {}  # rel path -> text as last read by the agent ("" = absent)
        self.as_written: dict[str, str] = {}  # rel path -> the text the agent wrote, before the store's form
        self.written: list[str] = []  # rel paths saved (or that would be, in a dry run)
        self.deleted: list[str] = []
        self.proposed: list[str] = []  # rel paths proposed for review instead (write mode confirm)
        self.errors: list[str] = []
        self.busy = ""  # set when a write found the folder locked by another process: the run must fail
        self.said_days: list[str] = []  # ISO days of the window's messages: what RecordDecision dates by
        # The excerpt's messages as sources of words: every write is weighed against them. None when
        # there is no conversation (dream distils log entries already weighed when they were written).
        self.sources: list[Source] | None = None
        self.session_id: str | None = None  # provenance: the session the excerpt is from
        self.writer = "extractor"

    # --- confinement ---------------------------------------------------------
    def _rel(self, raw: str, what: str = "path") -> str:
        """The memory-folder-relative form of a path the model gave, or a refusal saying what is allowed."""
        if not raw.strip():
            raise Refused(f"empty {what}; give a path inside {self.shown_dir}")
        expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
        if os.path.isabs(expanded):
            normal = os.path.normpath(expanded)
            for root in sorted(self._aliases, key=len, reverse=True):
                if normal == root:
                    return ""
                if normal.startswith(root.rstrip("/") + "/"):
                    rel = normal[len(root.rstrip("/")) + 1 :]
                    break
            else:
                raise Refused(f"{_shown(raw)} is outside the memory folder; this agent may only read and write "
                              f"markdown files inside {self.shown_dir}")
        else:
            rel = expanded
        parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
        if ".." in parts:
            raise Refused(f"{_shown(raw)}: '..' is not allowed; paths stay inside {self.shown_dir}")
        if any(p.startswith(".") for p in parts):
            raise Refused(f"{_shown(raw)}: hidden files and memdir's own state (.memdir/) are not readable by this agent")
        return "/".join(parts)

    def _readable_file(self, raw: str) -> str:
        rel = self._rel(raw, "file_path")
        if not rel:
            raise Refused(f"{_shown(raw)} is the memory folder itself; use Glob to list it")
        if not rel.endswith(".md"):
            raise Refused(f"{_shown(raw)}: this agent reads only the markdown files of the memory folder")
        return rel

    def _memory_rel(self, raw: str) -> str:
        """The memory-folder-relative name for a write target, or a refusal."""
        try:
            rel = self._rel(raw, "file_path")
        except Refused:
            raise Refused(f"{_shown(raw)}: writes are only allowed to .md files directly inside {self.shown_dir}") from None
        if not rel or "/" in rel or not rel.endswith(".md"):
            raise Refused(f"{_shown(raw)}: write memory files as <type>_<topic>.md directly inside {self.shown_dir}")
        if rel == C.INDEX_NAME:
            raise Refused(f"{C.INDEX_NAME} is kept in sync automatically when you write memory files; do not write it")
        st = safefs.lstat(self.memory_dir, rel) if self.memory_dir.is_dir() else None
        if st is not None and not safefs.is_regular_file(self.memory_dir, rel):
            raise Refused(f"{rel} is not a regular file (a symlink, FIFO or folder); write a regular memory file "
                          "under another name")
        return rel

    def _read_file_text(self, rel: str) -> str | None:
        """The file's text, None when absent; refusals for what is not a small regular UTF-8 file.
        In write mode confirm, a file this run proposed reads as proposed (None: proposed for deletion)."""
        overlay = getattr(self.store, "overlay", {})
        if rel in overlay:
            return overlay[rel]
        try:
            return safefs.read_text(self.memory_dir, rel, C.TOOL_READ_MAX_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return None

    # --- read-only tools ----------------------------------------------------------
    def _tool_read(self, file_path: str, offset: int | None = None, limit: int | None = None) -> str:
        rel = self._readable_file(file_path)
        proposed = rel in getattr(self.store, "overlay", {})
        st = safefs.lstat(self.memory_dir, rel) if self.memory_dir.is_dir() and not proposed else None
        if st is None and not proposed:
            raise Refused(f"{rel} does not exist; use Glob to list the memory files")
        text = self._read_file_text(rel)
        if text is None:
            raise Refused(f"{rel} does not exist; use Glob to list the memory files")
        if "/" not in rel or rel == self._daily_rel():
            self.snapshots[rel] = text
        lines = text.splitlines()
        start = max(1, offset or 1)
        count = max(1, limit) if limit else READ_DEFAULT_LINES
        chosen = lines[start - 1 : start - 1 + count]
        out = "\n".join(f"{start + i:6}\t{line}" for i, line in enumerate(chosen))
        return _cap(out or "(empty file)")

    def _files_under(self, raw_path: str | None) -> tuple[str, list[str]]:
        """(base rel, markdown files below it) without following symlinks or entering hidden folders."""
        base = self._rel(raw_path, "path") if raw_path else ""
        if base:
            st = safefs.lstat(self.memory_dir, base)
            if st is None:
                raise Refused(f"{base} does not exist in the memory folder")
            if safefs.is_regular_file(self.memory_dir, base):
                if not base.endswith(".md"):
                    raise Refused(f"{base}: this agent reads only the markdown files of the memory folder")
                return base, [base]
            if not stat.S_ISDIR(st.st_mode):
                raise Refused(f"{base} is a symlink or special file; this agent never follows or reads those")
        if not self.memory_dir.is_dir():
            return base, []
        files = [rel for rel, kind in safefs.walk(self.memory_dir, base, hidden=False)
                 if kind == "file" and rel.endswith(".md")]
        return base, sorted(files)

    def _tool_grep(self, pattern: str, path: str | None = None, glob: str | None = None) -> str:
        if len(pattern) > MAX_PATTERN_CHARS:
            raise Refused(f"the pattern is over {MAX_PATTERN_CHARS} characters")
        try:
            regex = re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            raise Refused(f"invalid regular expression: {exc}") from None
        name_filter = glob_regex(glob) if glob else None
        base, files = self._files_under(path)
        hits: list[str] = []
        for rel in files:
            if name_filter and not (name_filter.match(rel.rsplit("/", 1)[-1]) or name_filter.match(rel)):
                continue
            try:
                text = safefs.read_text(self.memory_dir, rel, C.TOOL_READ_MAX_BYTES)
            except OSError:
                continue  # symlinks, FIFOs, huge or non-UTF-8 files are skipped, never followed
            for n, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{shown_path(self.memory_dir / rel)}:{n}:{line}")
                    if len(hits) >= MAX_MATCHES:
                        return _cap("\n".join(hits) + f"\n(stopped at {MAX_MATCHES} matches)")
        return _cap("\n".join(hits) or "no matches")

    def _tool_glob(self, pattern: str, path: str | None = None) -> str:
        if not pattern.strip():
            raise Refused("empty glob pattern; try **/*.md")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise Refused(f"the pattern is over {MAX_PATTERN_CHARS} characters")
        if os.path.isabs(pattern) or pattern.startswith("~"):
            pattern = self._rel(pattern, "pattern") or "*"
        if ".." in pattern.split("/"):
            raise Refused("glob patterns are relative to the memory folder and may not contain '..'")
        regex = glob_regex(pattern)
        base, files = self._files_under(path)
        prefix = f"{base}/" if base and not base.endswith(".md") else ""
        found = [shown_path(self.memory_dir / rel) for rel in files
                 if regex.match(rel[len(prefix):] if rel.startswith(prefix) else rel)]
        return _cap("\n".join(found[:MAX_LISTED]) or "no files")

    def _daily_rel(self) -> str | None:
        if self.daily_log is None:
            return None
        try:
            return safefs.rel_to(self.memory_dir, Path(os.path.abspath(self.daily_log)))
        except safefs.UnsafePath:
            return None


def _shown(raw: str) -> str:
    """A path the model gave, as a refusal quotes it: redacted before the cut, so no cut-off secret
    slips past the redaction of the message (refusals reach runs.jsonl)."""
    return shown_path(redact(raw))[:200]


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n[output cut at {MAX_OUTPUT} characters]"
