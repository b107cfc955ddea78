"""A memdir folder as the backend of Anthropic's memory tool (`memory_20250818`).

`MemdirMemoryTool` subclasses the SDK's `BetaAbstractMemoryTool`, so it plugs into
`client.beta.messages.tool_runner(tools=[...])`. The model sees `/memories`; memdir maps it onto
one memory folder with these rules:
- every write goes through `MemoryStore`: atomic, locked, secret guard, MEMORY.md kept in sync,
  removed bytes kept under `.memdir/`; edits are refused if the file changed since it was read;
- memories are `.md` files; a file written without frontmatter gets memdir's (name, description,
  type) so recall can find it, and the reply says so;
- nothing follows a symlink below the folder (every access goes through `memdir.safefs`, which
  opens each path component with O_NOFOLLOW), hidden names are refused, and `.memdir/` (memdir's
  own state) is never readable or writable;
  MEMORY.md is readable but written only by memdir; team/ and logs/ are read-only here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memdir import constants as C
from memdir import safefs
from memdir.errors import MemdirError
from memdir.frontmatter_io import dump_document, parse_document
from memdir.model import Memory, memory_from_fields
from memdir.store import MemoryStore

ROOT = C.MEMORY_TOOL_ROOT
LINE_WIDTH = 6  # line numbers as the SDK's own backend prints them


def _lines(content: str) -> list[str]:
    """Split on LF only, without the empty tail a trailing newline leaves (as the SDK does)."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _size(n: int) -> str:
    for unit in ("B", "K", "M"):
        if n < 1024:
            return f"{n}{unit}" if unit == "B" or n == int(n) else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}G"


@contextlib.contextmanager
def _one_line_validation(where: str):
    from pydantic import ValidationError

    try:
        yield
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ToolError(f"{where}: {'.'.join(map(str, err['loc'])) or 'frontmatter'}: {err['msg']}") from None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def _kept(stored: object, written: object) -> bool:
    """`written` survives as `stored` (a mapping may gain keys, e.g. the `modified` stamp memdir adds)."""
    if isinstance(written, dict) and isinstance(stored, dict):
        return all(_kept(stored.get(key), value) for key, value in written.items())
    return stored == written


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool, stored in a memdir folder. `folder` is created on first write."""

    def __init__(self, folder: str | os.PathLike[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.store = MemoryStore(Path(folder).expanduser())

    @property
    def root(self) -> Path:
        return self.store.root

    # --- dispatch: every failure becomes one ToolError line for the model -------------------
    def execute(self, command: BetaMemoryTool20250818Command):
        try:
            return super().execute(command)
        except ToolError:
            raise
        except MemdirError as exc:
            raise ToolError(" ".join(str(exc).split())) from None
        except OSError as exc:
            raise ToolError(self._os_error(exc, getattr(command, "path", None) or command.old_path)) from None

    @staticmethod
    def _os_error(exc: OSError, path: str) -> str:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            return f"{path} is a symlink; memdir never follows symlinks inside the memory folder"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"The path {path} does not exist. Please provide a valid path."
        return f"{path}: {exc.strerror}"

    # --- paths ----------------------------------------------------------------------------
    def _rel(self, path: str, *, write: bool = False) -> str:
        """`/memories/a/b.md` -> `a/b.md`, refusing anything that is not a plain in-folder name."""
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        parts = [p for p in path[len(ROOT):].split("/") if p]
        for part in parts:
            if part in (".", "..") or "\x00" in part or "\\" in part:
                raise ToolError(f"{path}: use plain names inside {ROOT}; '.', '..' and backslashes are refused")
        if parts and parts[0] == C.STATE_DIRNAME:
            raise ToolError(f"{path}: {C.STATE_DIRNAME}/ holds memdir's own state (history, locks) and is off limits")
        if any(p.startswith(".") for p in parts):
            raise ToolError(f"{path}: hidden names are reserved for memdir's own state")
        if write:
            if not parts:
                raise ToolError(f"{ROOT} itself cannot be changed; name a file inside it")
            if parts[-1] == C.INDEX_NAME:
                raise ToolError(f"{path}: {C.INDEX_NAME} is the index memdir keeps in sync itself; edit the memories")
            if parts[0] in (C.TEAM_DIRNAME, C.LOGS_DIRNAME):
                raise ToolError(f"{path}: {parts[0]}/ is read-only here (team memory and daily logs have their own commands)")
        return "/".join(parts)

    def _kind(self, rel: str) -> str | None:
        """'dir', 'file' or None (absent). Symlinks and special files are refused, never followed."""
        if not rel:
            return "dir" if self.root.is_dir() else None
        if not self.root.is_dir():
            return None
        st = safefs.lstat(self.root, rel)  # a symlinked folder on the way raises UnsafePath
        if st is None:
            return None
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISREG(st.st_mode):
            return "file"
        if stat.S_ISLNK(st.st_mode):
            raise ToolError(f"{ROOT}/{rel} is a symlink; memdir never follows symlinks inside the memory folder")
        raise ToolError(f"{ROOT}/{rel}: not a regular file or folder; refusing")

    def _read(self, rel: str) -> str:
        return safefs.read_text(self.root, rel)  # bounded, UTF-8, regular files only: one-line refusals

    def _memory_files(self, rel_dir: str) -> list[str]:
        """Every memory file below a folder (as the store's scan sees them)."""
        prefix = rel_dir.rstrip("/") + "/"
        return [h.rel_path for h in self.store.scan().headers if h.rel_path.startswith(prefix)]

    # --- turning text into a memdir memory -------------------------------------------------
    def _as_memory(self, rel: str, text: str) -> tuple[Memory, str]:
        """The memory to store for `text` at `rel`, and a note when memdir filled in frontmatter."""
        if not rel.endswith(".md"):
            raise ToolError(f"{ROOT}/{rel}: memdir keeps memories as markdown; use a name ending in .md")
        parsed = parse_document(text)
        fields = dict(parsed.fields) if parsed.has_header else {}
        filled = []
        stem = Path(rel).stem
        if not fields.get("name"):
            fields["name"] = (_first_line(parsed.body) or stem.replace("_", " "))[: C.NAME_MAX_CHARS]
            filled.append("name from the first line")
        if not fields.get("description"):
            line = _first_line(parsed.body) or stem.replace("_", " ")
            fields["description"] = line if len(line) <= C.INDEX_LINE_TARGET else line[: C.INDEX_LINE_TARGET - 1] + "…"
            filled.append("description from the first line")
        metadata = fields.get("metadata")
        if not fields.get("type") and not (isinstance(metadata, dict) and metadata.get("type")):
            prefix = re.split(r"[_\-]", stem, maxsplit=1)[0].lower()
            mtype = prefix if prefix in C.MEMORY_TYPES else C.MEMORY_TOOL_DEFAULT_TYPE
            fields["type"] = mtype
            filled.append(f"type: {mtype}")
        if parsed.has_header:  # the writer's own frontmatter keeps its form and its other keys
            memory = memory_from_fields(fields, parsed.body, f"{ROOT}/{rel}")
        else:  # none at all: the store writes the form the installed Claude Code reads
            with _one_line_validation(f"{ROOT}/{rel}"):
                memory = Memory(name=fields["name"], description=fields["description"], type=fields["type"],
                                body=parsed.body)
        note = ""
        if filled:
            note = (
                f" memdir added frontmatter ({', '.join(filled)}); edit it if wrong. "
                f"Types: {', '.join(C.MEMORY_TYPES)}."
            )
        return memory, note

    def _checked(self, rel: str, text: str, baseline: str, added: str = "") -> tuple[Memory, str]:
        """`_as_memory`, refused when storing it would silently drop text the model wrote.

        A frontmatter block that no longer parses is read leniently (raw `key: value` lines), so a
        sentence or a list inside it would vanish while the tool reported success. `baseline` is the
        text before the edit: a header that was already malformed there is not the edit's doing, but
        the `added` text must still come through it.
        """
        memory, note = self._as_memory(rel, text)
        parsed = parse_document(text)
        if parsed.problem and not parse_document(baseline).problem:
            reason = parsed.problem.split(";")[0]
            raise ToolError(
                f"Nothing was written: this edit puts text into the frontmatter of {ROOT}/{rel} ({reason}), "
                f"where memdir would drop it; put notes below the closing `---`, or keep the frontmatter valid YAML"
            )
        rendered = dump_document(memory.frontmatter(), memory.body)
        stored = parse_document(rendered)
        metadata = stored.fields.get("metadata")
        lost = [
            key for key, value in parsed.fields.items()
            if not _kept(stored.fields.get(key), value) and not (isinstance(metadata, dict) and _kept(metadata.get(key), value))
        ]
        what = f"frontmatter key(s) {', '.join(lost)}" if lost else ""
        if parsed.problem and any(line.strip() not in rendered for line in added.splitlines()):
            what = "the text you added"  # read leniently, the malformed header keeps only `key: value` lines
        elif not what and stored.body != parsed.body:
            what = "part of the body"
        if what:
            raise ToolError(f"Nothing was written: memdir would not keep {what} in {ROOT}/{rel}; "
                            "write it as plain `key: value` frontmatter or as body text below the closing `---`")
        return memory, note

    def _save(self, rel: str, text: str, expected: str, baseline: str | None = None, added: str = "") -> str:
        memory, note = self._checked(rel, text, expected if baseline is None else baseline, added)
        self.store.save(memory, rel_path=rel, expected_text=expected)
        return note

    # --- the six commands ------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        rel = self._rel(command.path)
        if not self.root.exists() and not rel:
            return f"Here're the files and directories up to 2 levels deep in {command.path}, excluding hidden items:\n0B\t{command.path}"
        kind = self._kind(rel)
        if kind is None:
            raise ToolError(f"The path {command.path} does not exist. Please provide a valid path.")
        if kind == "dir":
            return self._view_dir(command.path, rel)
        lines = self._read(rel).split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : len(lines) if last == -1 else last]
        numbered = "\n".join(f"{str(i + start).rjust(LINE_WIDTH)}\t{line}" for i, line in enumerate(lines))
        return f"Here's the content of {command.path} with line numbers:\n{numbered}"

    def _view_dir(self, shown: str, rel: str) -> str:
        rows: list[str] = []

        def walk(rel_dir: str, label: str, depth: int) -> None:
            for name, kind in safefs.listdir(self.root, rel_dir):  # symlinks are listed as such, not followed
                if name.startswith(".") or kind not in ("dir", "file"):
                    continue
                child = f"{rel_dir}/{name}" if rel_dir else name
                st = safefs.lstat(self.root, child)
                if st is None:
                    continue  # removed meanwhile
                shown_child = f"{label}/{name}"
                if kind == "dir":
                    rows.append(f"{_size(st.st_size)}\t{shown_child}/")
                    if depth < 2:
                        walk(child, shown_child, depth + 1)
                else:
                    rows.append(f"{_size(st.st_size)}\t{shown_child}")

        walk(rel, shown.rstrip("/"), 1)
        own = _size((safefs.lstat(self.root, rel) if rel else self.root.stat()).st_size)
        header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        return "\n".join([header, f"{own}\t{shown}", *rows])

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        rel = self._rel(command.path, write=True)
        self._check_parents(rel)
        if self.root.exists() and self._kind(rel) is not None:
            raise ToolError(f"File {command.path} already exists")
        note = self._save(rel, command.file_text, expected="")
        return f"File created successfully at: {command.path}.{note}"

    def _check_parents(self, rel: str) -> None:
        """Existing parent folders must be real folders (no links); missing ones are created later."""
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            if not self.root.exists():
                return
            kind = self._kind("/".join(parts[:i]))
            if kind is None:
                return
            if kind != "dir":
                raise ToolError(f"{ROOT}/{'/'.join(parts[:i])} is a file, not a folder")

    def _existing_file(self, path: str, rel: str) -> str:
        kind = self._kind(rel) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind != "file":
            raise ToolError(f"The path {path} is not a file.")
        return self._read(rel)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        rel = self._rel(command.path, write=True)
        content = self._existing_file(command.path, rel)
        count = content.count(command.old_str) if command.old_str else 0
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` did not appear verbatim in {command.path}."
            )
        if count > 1:
            at, lines = -1, []
            while (at := content.find(command.old_str, at + 1)) != -1:
                lines.append(str(content.count("\n", 0, at) + 1))
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{command.old_str}` in lines: "
                f"{', '.join(lines)}. Please ensure it is unique"
            )
        changed_line = content.count("\n", 0, content.find(command.old_str))
        note = self._save(rel, content.replace(command.old_str, command.new_str, 1), expected=content,
                          added=command.new_str)
        saved_text = self._read(rel)
        if command.new_str and (at := saved_text.find(command.new_str)) != -1:
            changed_line = saved_text.count("\n", 0, at)  # memdir may have rewritten the frontmatter above
        saved = saved_text.split("\n")
        first, last = max(0, changed_line - 2), min(len(saved), changed_line + 3)
        snippet = "\n".join(f"{str(n + 1).rjust(LINE_WIDTH)}\t{saved[n]}" for n in range(first, last))
        return f"The memory file has been edited.{note} Here is the snippet showing the change (with line numbers):\n{snippet}"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        rel = self._rel(command.path, write=True)
        content = self._existing_file(command.path, rel)
        lines = _lines(content)
        if command.insert_line < 0 or command.insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}]."
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        note = self._save(rel, "\n".join(lines) + "\n", expected=content, added=command.insert_text)
        return f"The file {command.path} has been edited.{note}"

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        rel = self._rel(command.path, write=True)
        kind = self._kind(rel) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {command.path} does not exist")
        if kind == "file":
            self._forget(rel)
        else:
            self._forget_tree(rel)
        return f"Successfully deleted {command.path}"

    def _forget(self, rel: str) -> None:
        header = self.store.find(rel)
        if header.rel_path != rel:  # find() also matches bare file names; never delete a namesake
            raise ToolError(f"{ROOT}/{rel}: not a memory file memdir can see; run `memdir doctor`")
        self.store.delete(rel)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old = self._rel(command.old_path, write=True)
        new = self._rel(command.new_path, write=True)
        kind = self._kind(old) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {command.old_path} does not exist")
        if self._kind(new) is not None:
            raise ToolError(f"The destination {command.new_path} already exists")
        if kind == "dir" and (new + "/").startswith(old + "/"):
            raise ToolError(f"Cannot move {command.old_path} into itself")
        self._check_parents(new)
        moves = self._planned_moves(old, new, kind)  # everything is checked before anything is written
        for src, dst in moves:
            self._move_file(src, dst)
        if kind == "dir":
            self._remove_empty_folders(old)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def _planned_moves(self, old: str, new: str, kind: str) -> list[tuple[str, str]]:
        """(from, to) for every file a rename moves, refused up front unless each one can be moved.

        A rename writes the new file and then forgets the old one; a refusal half-way would leave
        both behind, so every file is checked first: a memory memdir sees, valid as a memory at its
        new path, and free of secrets.
        """
        from memdir.secrets import guard

        seen = {h.rel_path for h in self.store.scan().headers}
        if kind == "file":
            files = [old]
        else:
            files = [rel for rel, k in safefs.walk(self.root, old) if k != "dir"]
        moves = []
        for rel in files:
            if rel not in seen:
                raise ToolError(
                    f"{ROOT}/{rel} is not a memory file memdir can see (a non-.md file, a link or unreadable "
                    f"frontmatter), so nothing was renamed; view or delete it first, or run `memdir doctor`"
                )
            dst = new + rel[len(old):]
            try:
                self._checked(dst, self._read(rel), baseline=self._read(rel))
                guard(self._read(rel), f"{ROOT}/{rel}")
            except (ToolError, MemdirError) as exc:
                raise ToolError(f"nothing was renamed: {' '.join(str(exc).split())}") from None
            moves.append((rel, dst))
        return moves

    def _move_file(self, old: str, new: str) -> None:
        """Write the new file first, then forget the old one: a crash in between loses nothing."""
        text = self._read(old)
        self._save(new, text, expected="", baseline=text)
        self._forget(old)

    def _forget_tree(self, old_dir: str) -> None:
        """Forget every memory in a folder, then drop the empty folders.

        Anything that is not a memory (a stray .txt, a link) stays where it is, and so does its folder.
        """
        for rel in self._memory_files(old_dir):
            self._forget(rel)
        self._remove_empty_folders(old_dir)

    def _remove_empty_folders(self, old_dir: str) -> None:
        folders = [rel for rel, kind in safefs.walk(self.root, old_dir) if kind == "dir"]
        for folder in sorted(folders, key=lambda rel: rel.count("/"), reverse=True) + [old_dir]:
            parent, _, name = folder.rpartition("/")
            try:
                with safefs.open_dir(self.root, parent) as dfd:
                    os.rmdir(name, dir_fd=dfd)
            except OSError:
                pass  # not empty (a stray file, a link): left in place on purpose


class AsyncMemdirMemoryTool(BetaAsyncAbstractMemoryTool):
    """`MemdirMemoryTool` for `AsyncAnthropic`'s tool runner: the same rules, run in a worker thread.

    File work is blocking and short; a thread keeps the event loop free without a second implementation.
    """

    def __init__(self, folder: str | os.PathLike[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.sync = MemdirMemoryTool(folder)

    async def execute(self, command: BetaMemoryTool20250818Command):
        from anyio.to_thread import run_sync

        return await run_sync(self.sync.execute, command)

    # The abstract methods, each answered by the sync backend (execute() above is what the runner calls).
    async def view(self, command):
        return await self.execute(command)

    create = str_replace = insert = delete = rename = view
