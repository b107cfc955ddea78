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

This module is the SDK adapter: the six commands and their replies in the SDK's own wording. Paths
are parsed in `memory_tool_paths`, text becomes a memory in `memory_tool_text`, and the folder
operations live in `memory_tool_folder`.
"""

from __future__ import annotations

import errno
import os
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

from memdir.entry.memory_tool_folder import MemoryToolFolder
from memdir.entry.memory_tool_paths import ROOT, refusal_line, shown_path, tool_rel
from memdir.errors import MemdirError, os_error_line
from memdir.store import MemoryStore

__all__ = ["ROOT", "AsyncMemdirMemoryTool", "MemdirMemoryTool"]

LINE_WIDTH = 6  # line numbers as the SDK's own backend prints them


def _lines(content: str) -> list[str]:
    """Split on LF only, without the empty tail a trailing newline leaves (as the SDK does)."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _size(n: float) -> str:
    for unit in ("B", "K", "M"):
        if n < 1024:
            return f"{n}{unit}" if unit == "B" or n == int(n) else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}G"


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool, stored in a memdir folder. `folder` is created on first write."""

    def __init__(self, folder: str | os.PathLike[str], **kwargs) -> None:
        super().__init__(**kwargs)
        from memdir import write_mode

        root = Path(folder).expanduser()
        # The write mode decides what the model's writes do (memdir/write_mode.py): saved, proposed for the
        # user's review (confirm, manual), or refused with a tool error naming the mode (read-only).
        writers = write_mode.Writers(root, "memory tool")
        self.store = writers.store(write_mode.AGENT) or MemoryStore(root)
        self.proposing = writers.action(write_mode.AGENT) == write_mode.PROPOSE
        self.mode = writers.mode
        self.folder = MemoryToolFolder(self.store)

    @property
    def root(self) -> Path:
        return self.store.root

    def _proposed(self, what: str) -> str:
        return (f"Proposed {what} for the user's review (write mode {self.mode}): nothing changes in {ROOT} until "
                "the user accepts it with `memdir review`.")

    # --- dispatch: every failure becomes one ToolError line for the model -------------------
    def execute(self, command: BetaMemoryTool20250818Command):
        try:
            return self._execute(command)
        except ToolError as exc:  # every refusal, whoever raised it: paths echoed as the model wrote them
            raise ToolError(refusal_line(exc)) from None

    def _execute(self, command: BetaMemoryTool20250818Command):
        try:
            return super().execute(command)
        except ToolError:
            raise
        except MemdirError as exc:
            raise ToolError(" ".join(str(exc).split())) from None
        except OSError as exc:
            path = getattr(command, "path", None) or getattr(command, "old_path", "")  # rename has old_path
            raise ToolError(self._os_error(exc, str(path))) from None

    @staticmethod
    def _os_error(exc: OSError, path: str) -> str:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            return f"{path} is a symlink; memdir never follows symlinks inside the memory folder"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"The path {path} does not exist. Please provide a valid path."
        return f"{path}: {os_error_line(OSError(exc.errno, exc.strerror))}"  # disk full, read-only: words and a fix

    def _read(self, rel: str) -> str:
        return self.folder.read(rel)

    def _existing_file(self, path: str, rel: str) -> str:
        self.folder.require_file(path, rel)
        return self._read(rel)

    # --- the six commands ------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        rel = tool_rel(command.path)
        if not self.root.exists() and not rel:
            path = shown_path(command.path)
            return f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:\n0B\t{path}"
        kind = self.folder.kind(rel)
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
        return f"Here's the content of {shown_path(command.path)} with line numbers:\n{numbered}"

    def _view_dir(self, path: str, rel: str) -> str:
        shown, label = shown_path(path), shown_path(path.rstrip("/"))
        rows = [f"{_size(size)}\t{label}/{shown_path(name)}{'/' if is_dir else ''}"  # a planted name: one row, all seen
                for name, size, is_dir in self.folder.listing(rel)]
        header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        return "\n".join([header, f"{_size(self.folder.size(rel))}\t{shown}", *rows])

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        rel = tool_rel(command.path, write=True, new=True)
        self.folder.check_parents(rel)
        if self.root.exists() and self.folder.kind(rel) is not None:
            raise ToolError(f"File {command.path} already exists")
        note = self.folder.save(rel, command.file_text, expected="")
        if self.proposing:
            return self._proposed(f"creating {shown_path(command.path)}")
        return f"File created successfully at: {shown_path(command.path)}.{note}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        rel = tool_rel(command.path, write=True)
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
        note = self.folder.save(rel, content.replace(command.old_str, command.new_str, 1), expected=content,
                                added=command.new_str)
        if self.proposing:
            return self._proposed(f"an edit of {shown_path(command.path)}")
        saved_text = self._read(rel)
        if command.new_str and (at := saved_text.find(command.new_str)) != -1:
            changed_line = saved_text.count("\n", 0, at)  # memdir may have rewritten the frontmatter above
        saved = saved_text.split("\n")
        first, last = max(0, changed_line - 2), min(len(saved), changed_line + 3)
        snippet = "\n".join(f"{str(n + 1).rjust(LINE_WIDTH)}\t{saved[n]}" for n in range(first, last))
        return f"The memory file has been edited.{note} Here is the snippet showing the change (with line numbers):\n{snippet}"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        rel = tool_rel(command.path, write=True)
        content = self._existing_file(command.path, rel)
        lines = _lines(content)
        if command.insert_line < 0 or command.insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}]."
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        note = self.folder.save(rel, "\n".join(lines) + "\n", expected=content, added=command.insert_text)
        if self.proposing:
            return self._proposed(f"an edit of {shown_path(command.path)}")
        return f"The file {shown_path(command.path)} has been edited.{note}"

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        rel = tool_rel(command.path, write=True)
        kind = self.folder.kind(rel) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {command.path} does not exist")
        if kind == "file":
            self.folder.forget(rel)
        else:
            self.folder.forget_tree(rel)
        if self.proposing:
            return self._proposed(f"deleting {shown_path(command.path)}")
        return f"Successfully deleted {shown_path(command.path)}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old = tool_rel(command.old_path, write=True)
        new = tool_rel(command.new_path, write=True, new=True)
        kind = self.folder.kind(old) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {command.old_path} does not exist")
        if self.folder.kind(new) is not None:
            raise ToolError(f"The destination {command.new_path} already exists")
        if kind == "dir" and (new + "/").startswith(old + "/"):
            raise ToolError(f"Cannot move {command.old_path} into itself")
        self.folder.check_parents(new)
        moves = self.folder.planned_moves(old, new, kind)  # everything is checked before anything is written
        for src, dst in moves:
            self.folder.move_file(src, dst)
        old_shown, new_shown = shown_path(command.old_path), shown_path(command.new_path)
        if self.proposing:
            return self._proposed(f"renaming {old_shown} to {new_shown}")
        if kind == "dir":
            self.folder.remove_empty_folders(old)
        return f"Successfully renamed {old_shown} to {new_shown}"


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
