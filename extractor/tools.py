"""The extraction agent's tools, each validated here and never trusted to the model.

Read, Grep and Glob see only the project root and the memory folder. Bash runs a short allowlist
of read-only programs, without a shell, with every path argument confined the same way. Write and
Edit reach only `*.md` files directly inside the memory folder, go through the store (atomic,
secret guard, index kept in sync) and refuse lost updates: a file must have been read in this run
and be unchanged since. Every refusal is a tool error that says what is allowed.
"""

from __future__ import annotations

import fnmatch
import os
from datetime import date
import re
import shlex
import subprocess
from pathlib import Path

from memdir import constants as C
from memdir.errors import MemdirError
from memdir.frontmatter_io import parse_document
from memdir.fsio import read_text
from memdir.model import memory_from_fields
from memdir.record import Record
from memdir.store import MemoryStore

MAX_OUTPUT = 30_000
BASH_TIMEOUT = 10
READ_DEFAULT_LINES = 2000
READ_ONLY_PROGRAMS = frozenset({"ls", "find", "cat", "head", "tail", "wc", "stat", "grep", "file", "pwd", "tree"})
FIND_FORBIDDEN = ("-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls")
SHELL_SYNTAX = re.compile(r"[|;&<>`$\n\r(){}]|\\\s")
WRITE_TOOLS = ("Write", "Edit")
# Files whose content is credentials: never sent to the model (the secret guard only stops writes).
SECRET_FILES = re.compile(
    r"^(?:\.env(?:\..*)?|.*\.(?:pem|key|p12|pfx|keystore|jks)|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|\.netrc|"
    r"\.npmrc|\.pypirc|credentials(?:\.json)?|secrets?\.(?:ya?ml|json|toml)|\.htpasswd)$",
    re.I,
)

TOOL_SCHEMAS: list[dict] = [
    {
        "name": "Read",
        "description": "Read a text file in the memory folder or the project. Returns numbered lines.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "absolute path"},
                "offset": {"type": "integer", "description": "first line (1-based)"},
                "limit": {"type": "integer", "description": "number of lines"},
            },
            "required": ["file_path"],
        },
    },
    {
        "name": "Grep",
        "description": "Search file contents with a regular expression under the memory folder or the project.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "folder or file (default: the memory folder)"},
                "glob": {"type": "string", "description": "only files matching this name pattern, e.g. *.md"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List files matching a glob pattern (e.g. **/*.md) under the memory folder or the project.",
        "input_schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
    {
        "name": "Bash",
        "description": "Run one read-only command: "
        + ", ".join(sorted(READ_ONLY_PROGRAMS))
        + ". No pipes, redirects, ;, &&, $() or backticks; find without -exec/-delete/-ok/-fprint.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "Write",
        "description": "Create or replace a memory file (a .md file directly inside the memory folder) with "
        "frontmatter (name, description, type) and a body. Writing empty content deletes the memory. "
        "Replacing an existing file requires reading it first in this run.",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
    {
        "name": "Edit",
        "description": "Replace old_string with new_string in a memory file you have read in this run. "
        "old_string must occur exactly once unless replace_all is true.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
]


class ToolResult(Record):
    __slots__ = ("content", "is_error")
    _defaults = {"is_error": False}


class Refused(Exception):
    """A tool call the rules do not allow; its message is shown to the model."""


class Toolbox:
    """Executes one run's tool calls against one memory folder and project root."""

    def __init__(
        self, memory_dir: Path, project_root: Path | None, *, dry_run: bool = False, daily_log: Path | None = None
    ) -> None:
        self.daily_log = daily_log  # daily-log mode: the only writable file, append-only
        self.store = MemoryStore(memory_dir)
        self.memory_dir = memory_dir.resolve() if memory_dir.exists() else memory_dir.absolute()
        self.project_root = project_root.resolve() if project_root else None
        self.dry_run = dry_run
        self.snapshots: dict[str, str] = {}  # rel path -> text as last read by the agent ("" = absent)
        self.written: list[str] = []  # rel paths saved (or that would be, in a dry run)
        self.deleted: list[str] = []
        self.errors: list[str] = []

    # --- confinement ---------------------------------------------------------
    @property
    def roots(self) -> list[Path]:
        return [r for r in (self.memory_dir, self.project_root) if r is not None]

    def _inside(self, path: Path, root: Path) -> bool:
        return path == root or root in path.parents

    def _readable(self, raw: str) -> Path:
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = (self.project_root or self.memory_dir) / path
        resolved = path.resolve()
        if not any(self._inside(resolved, root) for root in self.roots):
            allowed = " or ".join(str(r) for r in self.roots)
            raise Refused(f"{raw} is outside what this agent may read ({allowed})")
        if SECRET_FILES.search(resolved.name) or ".git" in resolved.parts:
            raise Refused(f"{raw} may hold credentials or git internals; this agent does not read it")
        return resolved

    def _memory_rel(self, raw: str) -> str:
        """The memory-folder-relative name for a write target, or a refusal."""
        path = Path(raw)
        if not path.is_absolute():
            path = self.memory_dir / path
        resolved = path.resolve()
        if not self._inside(resolved, self.memory_dir) or resolved == self.memory_dir:
            raise Refused(f"{raw}: writes are only allowed to .md files directly inside {self.memory_dir}")
        rel = resolved.relative_to(self.memory_dir).as_posix()
        if "/" in rel or not rel.endswith(".md") or rel.startswith("."):
            raise Refused(f"{raw}: write memory files as <type>_<topic>.md directly inside {self.memory_dir}")
        if rel == C.INDEX_NAME:
            raise Refused(f"{C.INDEX_NAME} is kept in sync automatically when you write memory files; do not write it")
        if path.is_symlink():
            raise Refused(f"{raw} is a symlink; write a regular memory file instead")
        return rel

    # --- dispatch --------------------------------------------------------------
    def run(self, name: str, tool_input: dict) -> ToolResult:
        handler = getattr(self, f"_tool_{name.lower()}", None) if name in {s["name"] for s in TOOL_SCHEMAS} else None
        if handler is None:
            allowed = ", ".join(s["name"] for s in TOOL_SCHEMAS)
            return self._refuse(f"tool {name!r} is not available; use one of {allowed}")
        if not isinstance(tool_input, dict):
            return self._refuse(f"{name}: input must be an object")
        try:
            return ToolResult(handler(**tool_input))
        except Refused as exc:
            return self._refuse(str(exc))
        except MemdirError as exc:
            return self._refuse(str(exc))
        except TypeError as exc:
            return self._refuse(f"{name}: bad arguments ({exc})")
        except OSError as exc:
            return self._refuse(f"{name}: {exc.strerror or exc}")

    def _refuse(self, message: str) -> ToolResult:
        self.errors.append(message)
        return ToolResult(message, is_error=True)

    # --- read-only tools ----------------------------------------------------------
    def _tool_read(self, file_path: str, offset: int | None = None, limit: int | None = None) -> str:
        path = self._readable(file_path)
        if path.is_dir():
            raise Refused(f"{file_path} is a folder; use Glob or Bash ls")
        text = read_text(path) if path.exists() else None
        if text is None:
            raise Refused(f"{file_path} does not exist")
        if self._inside(path, self.memory_dir):
            self.snapshots[path.relative_to(self.memory_dir).as_posix()] = text
        lines = text.splitlines()
        start = max(1, offset or 1)
        chosen = lines[start - 1 : start - 1 + (limit or READ_DEFAULT_LINES)]
        out = "\n".join(f"{start + i:6}\t{line}" for i, line in enumerate(chosen))
        return _cap(out or "(empty file)")

    def _tool_grep(self, pattern: str, path: str | None = None, glob: str | None = None) -> str:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise Refused(f"invalid regular expression: {exc}") from None
        base = self._readable(path) if path else self.memory_dir
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
        hits: list[str] = []
        for file in sorted(files):
            if glob and not fnmatch.fnmatch(file.name, glob):
                continue
            if any(part.startswith(".") for part in file.relative_to(base).parts[:-1]) if base.is_dir() else False:
                continue
            if SECRET_FILES.search(file.name):
                continue
            try:
                text = read_text(file)
            except (OSError, UnicodeDecodeError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{file}:{n}:{line}")
                    if len(hits) >= 500:
                        return _cap("\n".join(hits) + "\n(stopped at 500 matches)")
        return _cap("\n".join(hits) or "no matches")

    def _tool_glob(self, pattern: str, path: str | None = None) -> str:
        base = self._readable(path) if path else self.memory_dir
        if ".." in Path(pattern).parts or Path(pattern).is_absolute():
            raise Refused("glob patterns are relative to the folder and may not contain '..'")
        found = sorted(str(p) for p in base.glob(pattern) if p.is_file())
        return _cap("\n".join(found[:1000]) or "no files")

    def _tool_bash(self, command: str) -> str:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise Refused(f"cannot parse the command ({exc})") from None
        if not argv:
            raise Refused("empty command")
        program = argv[0]
        if program not in READ_ONLY_PROGRAMS:
            raise Refused(f"{program!r} is not allowed; read-only commands only: {', '.join(sorted(READ_ONLY_PROGRAMS))}")
        if SHELL_SYNTAX.search(command):
            raise Refused(
                "only a single read-only command is allowed: no pipes, redirects, ;, &&, $(), "
                "backticks, braces or subshells"
            )
        if program == "grep" and any(
            a in ("--recursive", "--dereference-recursive") or (a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("rR"))
            for a in argv[1:]
        ):
            raise Refused("recursive grep is not allowed in Bash; use the Grep tool, which skips credential files")
        if program == "find":
            bad = [a for a in argv[1:] if a in FIND_FORBIDDEN or a.startswith("-fprint")]
            if bad:
                raise Refused(f"find {bad[0]} is not allowed (it runs or writes things); plain find only")
        for arg in argv[1:]:
            if arg.startswith("-"):
                continue
            looks_like_path = "/" in arg or arg.startswith(("~", ".")) or Path(arg).suffix
            if looks_like_path or (self.project_root and (self.project_root / arg).exists()):
                self._readable(arg)
        cwd = self.project_root or self.memory_dir
        try:
            proc = subprocess.run(
                argv, cwd=cwd, capture_output=True, text=True, timeout=BASH_TIMEOUT, stdin=subprocess.DEVNULL,
                errors="replace",
            )
        except subprocess.TimeoutExpired:
            raise Refused(f"command timed out after {BASH_TIMEOUT}s") from None
        except FileNotFoundError:
            raise Refused(f"{program} is not installed here") from None
        out = proc.stdout + (f"\n[stderr]\n{proc.stderr}" if proc.stderr else "")
        if proc.returncode:
            out += f"\n[exit code {proc.returncode}]"
        return _cap(out.strip() or "(no output)")

    # --- writes -----------------------------------------------------------------------
    def _check_fresh(self, rel: str) -> str:
        """The file's current text; refuses when the agent never read it or it changed since."""
        path = self.memory_dir / rel
        current = read_text(path) if path.exists() else ""
        if path.exists() and rel not in self.snapshots:
            raise Refused(f"{rel} already exists; Read it first, then write the updated version")
        if rel in self.snapshots and self.snapshots[rel] != current:
            raise Refused(f"{rel} changed since you read it; Read it again before writing")
        return current

    def _save_text(self, rel: str, text: str, current: str) -> str:
        parsed = parse_document(text)
        if parsed.problem or not parsed.has_header:
            raise Refused(
                f"{rel}: needs YAML frontmatter between '---' lines with name, description and type "
                f"({parsed.problem or 'none found'})"
            )
        memory = memory_from_fields(parsed.fields, parsed.body, rel)
        missing = memory.missing_why_how()
        if missing:
            raise Refused(f"{rel}: {memory.type.value} memories need {' and '.join(missing)} lines in the body")
        if self.dry_run:
            from memdir.secrets import guard

            guard(text, rel)
        else:
            self.store.save(memory, rel_path=rel, expected_text=current, authored=True)
        self.snapshots[rel] = (self.memory_dir / rel).read_text(encoding="utf-8") if not self.dry_run else text
        self.written.append(rel)
        return f"saved {self.memory_dir / rel}" + (" (dry run: not written)" if self.dry_run else "")

    def _append_log(self, file_path: str, content: str) -> str:
        from memdir.daylog import ENTRY
        from memdir.secrets import guard

        target = self.daily_log.resolve() if self.daily_log.exists() else self.daily_log.absolute()
        path = Path(file_path) if Path(file_path).is_absolute() else self.memory_dir / file_path
        if path.resolve() != target:
            raise Refused(f"in daily-log mode only today's log can be written: {self.daily_log}")
        rel = target.relative_to(self.memory_dir).as_posix()
        current = self._check_fresh(rel)
        if not content.startswith(current):
            raise Refused(f"{rel} is append-only: keep its current content unchanged and add lines at the end")
        added = [line for line in content[len(current):].splitlines() if line.strip()]
        bad = [line for line in added if not ENTRY.match(line.strip())]
        if bad:
            raise Refused(f"log lines must look like '- HH:MM [type] text — why: reason'; not: {bad[0][:80]}")
        guard("\n".join(added), rel)
        if not self.dry_run and added:
            from memdir.daylog import append

            day = date.fromisoformat(self.daily_log.stem)
            append(self.memory_dir, day, [line.strip() for line in added])
            self.snapshots[rel] = read_text(self.daily_log)
        self.written.append(rel)
        return f"appended {len(added)} entr{'y' if len(added) == 1 else 'ies'} to {rel}"

    def _tool_write(self, file_path: str, content: str) -> str:
        if self.daily_log is not None:
            return self._append_log(file_path, content)
        rel = self._memory_rel(file_path)
        current = self._check_fresh(rel)
        if not content.strip():
            if not current:
                raise Refused(f"{rel} does not exist; nothing to delete")
            if not self.dry_run:
                self.store.delete(rel)
            self.deleted.append(rel)
            return f"deleted {rel}"
        return self._save_text(rel, content, current)

    def _tool_edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        if self.daily_log is not None:
            raise Refused("in daily-log mode the log is append-only: use Write with the current content plus new lines")
        rel = self._memory_rel(file_path)
        if rel not in self.snapshots:
            raise Refused(f"Read {rel} before editing it")
        current = self._check_fresh(rel)
        count = current.count(old_string) if old_string else 0
        if count == 0:
            raise Refused(f"old_string does not occur in {rel} (the file may have changed); Read it again")
        if count > 1 and not replace_all:
            raise Refused(f"old_string occurs {count} times in {rel}; add context or set replace_all")
        updated = current.replace(old_string, new_string) if replace_all else current.replace(old_string, new_string, 1)
        return self._save_text(rel, updated, current)


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n[output cut at {MAX_OUTPUT} characters]"
