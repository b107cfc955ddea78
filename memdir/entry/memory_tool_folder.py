"""The memory tool's folder operations: what a path is, reading, saving through `MemoryStore`,
forgetting, and moving files, each checked before anything is written.

Every access goes through `memdir.safefs` (each path component opened with O_NOFOLLOW), so nothing
follows a symlink below the folder; removed bytes are kept in history by the store.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from anthropic.lib.tools import ToolError

from memdir import safefs, safefs_write
from memdir.entry.memory_tool_paths import ROOT
from memdir.entry.memory_tool_text import checked
from memdir.errors import MemdirError
from memdir.provenance import entry
from memdir.store import MemoryStore


class MemoryToolFolder:
    """One memory folder as the memory tool sees it (`store.root` is created on first write)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @property
    def root(self) -> Path:
        return self.store.root

    def kind(self, rel: str) -> str | None:
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

    def read(self, rel: str) -> str:
        return safefs.read_text(self.root, rel)  # bounded, UTF-8, regular files only: one-line refusals

    def require_file(self, path: str, rel: str) -> None:
        """Refuse unless `rel` is an existing regular file (`path`: as the model wrote it)."""
        kind = self.kind(rel) if self.root.exists() else None
        if kind is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if kind != "file":
            raise ToolError(f"The path {path} is not a file.")

    def listing(self, rel: str, max_depth: int = 2) -> list[tuple[str, int, bool]]:
        """(path below `rel`, size, is a folder) for each visible entry, folders before their contents."""
        rows: list[tuple[str, int, bool]] = []

        def walk(rel_dir: str, label: str, depth: int) -> None:
            for name, kind in safefs.listdir(self.root, rel_dir):  # symlinks are listed as such, not followed
                if name.startswith(".") or kind not in ("dir", "file"):
                    continue
                child = f"{rel_dir}/{name}" if rel_dir else name
                st = safefs.lstat(self.root, child)
                if st is None:
                    continue  # removed meanwhile
                shown_child = f"{label}/{name}" if label else name
                rows.append((shown_child, st.st_size, kind == "dir"))
                if kind == "dir" and depth < max_depth:
                    walk(child, shown_child, depth + 1)

        walk(rel, "", 1)
        return rows

    def size(self, rel: str) -> int:
        st = safefs.lstat(self.root, rel) if rel else self.root.stat()
        if st is None:  # removed meanwhile: the tool answers with the usual "no such file" error
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), rel)
        return st.st_size

    def check_parents(self, rel: str) -> None:
        """Existing parent folders must be real folders (no links); missing ones are created later."""
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            if not self.root.exists():
                return
            kind = self.kind("/".join(parts[:i]))
            if kind is None:
                return
            if kind != "dir":
                raise ToolError(f"{ROOT}/{'/'.join(parts[:i])} is a file, not a folder")

    def save(self, rel: str, text: str, expected: str, baseline: str | None = None, added: str = "") -> str:
        memory, note = checked(rel, text, expected if baseline is None else baseline, added)
        self.store.save(memory, rel_path=rel, expected_text=expected, provenance=entry("memory-tool"))
        return note

    def forget(self, rel: str) -> None:
        header = self.store.find(rel)
        if header.rel_path != rel:  # find() also matches bare file names; never delete a namesake
            raise ToolError(f"{ROOT}/{rel}: not a memory file memdir can see; run `memdir doctor`")
        self.store.delete(rel)

    def forget_tree(self, old_dir: str) -> None:
        """Forget every memory in a folder, then drop the empty folders.

        Anything that is not a memory (a stray .txt, a link) stays where it is, and so does its folder.
        """
        prefix = old_dir.rstrip("/") + "/"
        for rel in [h.rel_path for h in self.store.scan().headers if h.rel_path.startswith(prefix)]:
            self.forget(rel)
        self.remove_empty_folders(old_dir)

    def planned_moves(self, old: str, new: str, kind: str) -> list[tuple[str, str]]:
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
                checked(dst, self.read(rel), baseline=self.read(rel))
                guard(self.read(rel), f"{ROOT}/{rel}")
            except (ToolError, MemdirError) as exc:
                raise ToolError(f"nothing was renamed: {' '.join(str(exc).split())}") from None
            moves.append((rel, dst))
        return moves

    def move_file(self, old: str, new: str) -> None:
        """Write the new file first, then forget the old one: a crash in between loses nothing."""
        text = self.read(old)
        self.save(new, text, expected="", baseline=text)
        self.forget(old)

    def remove_empty_folders(self, old_dir: str) -> None:
        folders = [rel for rel, kind in safefs.walk(self.root, old_dir) if kind == "dir"]
        for folder in sorted(folders, key=lambda rel: rel.count("/"), reverse=True) + [old_dir]:
            try:
                safefs_write.rmdir(self.root, folder)
            except OSError:
                pass  # not empty (a stray file, a link): left in place on purpose
