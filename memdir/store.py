"""The memory folder as a store: save, rename, forget, restore, rebuild MEMORY.md — each keeping MEMORY.md in sync.

Every mutation runs under one folder lock (`.memdir/lock`) and writes atomically, so concurrent
writers (hooks, background workers, a person with `memdir remember`) never lose an entry or leave
a torn file. Before any change, the previous bytes go to `.memdir/history/` (memdir/history.py), and
every result says which copy was kept. Every open goes through `memdir.safefs`: nothing inside the
folder is read or written through a symlink. Listing, finding and reading are `StoreReader`'s
(memdir/store_read.py), which `MemoryStore` extends.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from memdir import constants as C, embeddings, githistory, history, index as index_text, naming, safefs, safefs_write
from memdir.authored import record_authored
from memdir.errors import MemdirError
from memdir.frontmatter_io import dump_document, parse_document
from memdir.scan import read_header
from memdir.secrets import guard
from memdir.store_read import StoreReader

# memdir.model (pydantic) and placing are imported where a memory is built: `list` and `doctor`
# never build one, and pydantic's import was a fifth of `list` at 20,000 memories.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memdir.model import Memory


def slugify(name: str) -> str:
    """The file-name form of a memory's name: `Deploy: prod` -> `deploy_prod` (memdir/naming.py)."""
    return naming.slug(name, "_")


def _then_embed(rel_of):
    """Once a write (and its folder lock) is done: the written memory's vector, when the dense model
    is installed (memdir/embeddings.py; it never fails the write), so recall by meaning knows it at once."""

    def wrap(method):
        @functools.wraps(method)
        def run(self: MemoryStore, *args, **kwargs):
            result = method(self, *args, **kwargs)
            rel = rel_of(result)
            if rel != C.INDEX_NAME:
                embeddings.embed_written(self.base, [self.root / rel])
            return result

        return run

    return wrap


def _then_commit(verbs_of):
    """Once a write (and its folder lock) is done: a commit of the memory folder's git history that says
    what happened to each path (memdir/githistory.py; inside a run it joins the run's one commit, and it
    never fails the write)."""

    def wrap(method):
        @functools.wraps(method)
        def run(self: MemoryStore, *args, **kwargs):
            result = method(self, *args, **kwargs)
            if self.state_rel == C.STATE_DIRNAME:  # the repository lives in <memory>/.memdir/git
                githistory.wrote(self.base, {self._rel(rel): verb for rel, verb in verbs_of(result).items()})
            return result

        return run

    return wrap


def _save_verbs(result: SaveResult) -> dict[str, str]:
    verbs = {result.rel_path: "created" if result.created else "updated"} if result.changed else {}
    if result.renamed_from:
        verbs = {result.renamed_from: f"renamed {{}} to {result.rel_path}",
                 result.rel_path: f"renamed {result.renamed_from} to {{}}"}
    return {**verbs, C.INDEX_NAME: "updated"}


@dataclass(frozen=True)
class SaveResult:
    rel_path: str
    path: Path
    created: bool
    kept: str | None = None  # the previous version, relative to the memory folder (an update)
    changed: bool = True  # False when the file already held exactly these bytes
    name: str = ""  # the memory's name as written
    name_taken: str | None = None  # the name asked for, when another memory has it (this one is told apart)
    renamed_from: str | None = None  # a rename: the file it was in
    proposed: str | None = None  # write mode confirm: the proposal recorded instead (memdir/proposing.py)

    def describe(self) -> str:
        """What happened, in the words every command uses."""
        if self.proposed:
            return f"proposed {self.rel_path} for review (not written): `memdir review` accepts or rejects it"
        if self.created and self.name_taken:
            return (f"created {self.rel_path} as {self.name!r}: another memory is already named "
                    f"{self.name_taken!r} and was left as it is")
        if self.created:
            return f"created {self.rel_path}"
        if not self.changed:
            return f"unchanged {self.rel_path} (already up to date)"
        return f"updated {self.rel_path} (previous version kept: {self.kept})"


@dataclass(frozen=True)
class DeleteResult:
    rel_path: str
    kept: str | None
    proposed: str | None = None  # write mode confirm: the proposal recorded instead

    def describe(self) -> str:
        if self.proposed:
            return f"proposed deleting {self.rel_path} (not deleted): `memdir review` accepts or rejects it"
        return f"deleted {self.rel_path} (kept: {self.kept})"


@dataclass(frozen=True)
class RebuildResult:
    entries: int
    added: list[str]
    removed: list[str]
    kept: str | None
    left_out: int = 0  # memories MEMORY.md does not list: past Claude Code's load cap (recall still finds them)


class MemoryStore(StoreReader):
    @classmethod
    def team_store(cls, personal_root: Path) -> MemoryStore:
        """Team memory: its own folder and index, memdir's state kept with the personal folder."""
        return cls(personal_root / C.TEAM_DIRNAME, state_dir=personal_root / C.STATE_DIRNAME, team=True)

    def _locked(self):
        """The folder lock every change takes; first, a read-only write mode refuses the change (one line)."""
        from memdir.write_mode import check_writable

        check_writable(self.base)
        return safefs_write.locked(self.base, f"{self.state_rel}/{self.lock_path.name}")

    def _write(self, rel_path: str, text: str) -> None:
        safefs_write.write_text(self.base, self._rel(rel_path), text)

    # --- writing ------------------------------------------------------------
    def _guard(self, text: str, where: str, allow_secrets: bool) -> None:
        if self.team or not allow_secrets:
            guard(text, where + (" to team memory" if self.team else ""))

    def plan_filename(self, memory: Memory) -> tuple[str, bool, Memory]:
        """(rel_path, exists, memory as it would be saved): where `save` would put it (dry runs, reports)."""
        from memdir import placing

        return placing.place(self, memory)


    @_then_commit(_save_verbs)
    @_then_embed(lambda result: result.rel_path)
    def save(
        self,
        memory: Memory,
        *,
        rel_path: str | None = None,
        allow_secrets: bool = False,
        expected_text: str | None = None,
        authored: bool = False,
        provenance: dict | None = None,
    ) -> SaveResult:
        """Create or update one memory file and its index line.

        `expected_text`, when given, is what the caller last read from `rel_path` ("" for absent):
        the save is refused if the file changed since, so no update is lost. `authored` marks a
        write by memdir's extractor (it may later update its own memories, never a person's).
        `provenance` (memdir/provenance.py `entry`): who wrote it and from which messages, recorded
        with the write in `.memdir/provenance.jsonl`.
        """
        with self._locked():
            memory, rel_path, path, text, taken_from = self._placed(memory, rel_path, allow_secrets)
            fresh = dump_document(memory.frontmatter(restamp=True), memory.body)  # what a changed file gets
            self.index()  # unreadable (not UTF-8, a symlink): refused before anything is written, not after
            exists = self.exists(rel_path)
            current = self.read_file(rel_path) if exists else ""
            if expected_text is not None and current != expected_text:
                raise MemdirError(f"{rel_path} changed since it was read; read it again before writing")
            kept = None
            if exists:
                if current == text:
                    self._index_upsert(rel_path, memory, keep_line=True)
                    return SaveResult(rel_path, path, created=False, changed=False, name=memory.name)
                kept = self._keep(rel_path, "updated")
            self._write(rel_path, fresh)
            if authored:
                record_authored(self.state_dir, rel_path, fresh)
            if provenance is not None:
                from memdir import provenance as provenance_log

                provenance_log.record(self.base, self.state_rel, self._rel(rel_path), provenance)
            # A person's own index line stays while the name and description it stands for are unchanged.
            self._index_upsert(rel_path, memory, keep_line=exists and _same_title(current, memory))
        return SaveResult(rel_path, path, created=not exists, kept=kept, name=memory.name, name_taken=taken_from)

    def _placed(self, memory: Memory, rel_path: str | None,
                allow_secrets: bool) -> tuple[Memory, str, Path, str, str | None]:
        """A save's first step, shared with a proposal (memdir/proposing.py): the memory in its file's form and
        size-checked, the file it goes to (placing picks one when rel_path is None), its text, and the name asked
        for when another memory has it; refused before anything is written when the text or a name holds a secret."""
        memory = self._in_file_form(memory, rel_path)
        self._check_size(memory)
        taken_from = None
        if rel_path is None:
            from memdir import placing

            asked = memory.name
            rel_path, found, memory = placing.place(self, memory)
            if found:  # this very memory: written in its file's form, under its own name
                memory = self._in_file_form(memory, rel_path)
            elif memory.name != asked:  # the name is another memory's: this one is told apart
                taken_from = asked
        text = dump_document(memory.frontmatter(), memory.body)
        path = self.resolve_rel(rel_path)
        self._guard(text, rel_path, allow_secrets)
        # A name or file name is never allowed to carry a secret, even where content may: it lands in
        # MEMORY.md, which every session loads. Slugging turns `sk-ant-` into `sk_ant_` and leaves
        # `ghp_` as is, so both spellings are checked, and the name as given.
        for spelling in (rel_path, rel_path.replace("_", "-"), memory.name):
            guard(spelling, "a memory named like a secret")
        return memory, rel_path, path, text, taken_from

    def _in_file_form(self, memory: Memory, rel_path: str | None) -> Memory:
        """`memory` in the form of the file at `rel_path`; a new file: what this Claude Code writes."""
        from memdir.native import preferred_form

        on_disk = self._form_on_disk(rel_path)
        if memory.form is not None and memory.form != on_disk:
            memory = memory.model_copy(update={"form": None})  # the file's form wins over its new text's
        return memory.in_form(on_disk or preferred_form(self.root))

    @staticmethod
    def _check_size(memory: Memory) -> None:
        text = dump_document(memory.frontmatter(), memory.body)
        if len(text.encode("utf-8", "surrogatepass")) > C.SAFE_READ_MAX_BYTES:
            raise MemdirError(f"a memory is a short note; this one is over {C.SAFE_READ_MAX_BYTES:,} bytes")

    def _form_on_disk(self, rel_path: str | None) -> str | None:
        """The form an existing memory file is written in ("current" | "legacy"); None for a new file."""
        from memdir.frontmatter_io import is_nested_form, parse_header

        if rel_path is None or not self.exists(rel_path):
            return None
        try:
            return "current" if is_nested_form(parse_header(self.read_file(rel_path)).fields) else "legacy"
        except (OSError, MemdirError, UnicodeDecodeError):
            return None

    def _keep(self, rel_path: str, action: str) -> str | None:
        """Keep the current bytes of `rel_path` (store-relative) in history; its shown path, or None."""
        cap = C.INDEX_READ_MAX_BYTES if rel_path == C.INDEX_NAME else C.SAFE_READ_MAX_BYTES
        copy = history.keep(self.state_dir, self.root, rel_path, action, cap)
        if copy is not None and self.state_rel == C.STATE_DIRNAME:  # another writer's bytes reach git too
            githistory.kept(self.base, self._rel(rel_path), copy)
        return history.display(self.root, copy) or None

    def _index_upsert(self, rel_path: str, memory: Memory, keep_line: bool = False) -> None:
        """Add or refresh the entry line; `keep_line` leaves an existing line as it is (it may be hand-written)."""
        index = self.index()
        if keep_line and rel_path in index_text.linked_files(index):
            return
        line = index_text.entry_line(memory.name, rel_path, memory.description)
        self._write_index(index_text.upsert(index, rel_path, line), "updated")

    def _write_index(self, new_text: str, action: str) -> str | None:
        """Write MEMORY.md, keeping its previous bytes first (a person may have written any of it)."""
        old = self.index()
        if new_text == old:
            return None
        kept = self._keep(C.INDEX_NAME, action) if old.strip() else None
        self._write(C.INDEX_NAME, new_text)
        return kept

    @_then_commit(_save_verbs)
    @_then_embed(lambda result: result.rel_path)
    def rename(self, ref: str, new_name: str) -> SaveResult:
        from memdir import placing
        from memdir.model import Memory, kebab_slug

        memory, header = self.read(ref)
        renamed = memory.model_copy(update={"name": new_name})
        renamed = Memory.model_validate(renamed.model_dump())
        with self._locked():
            self.index()  # unreadable: refused before anything is written, not after
            holder = placing.names_in_use(self, moving=header.rel_path).get(kebab_slug(renamed.name))
            if holder is not None:  # two memories under one name: `find` could no longer tell them apart
                raise MemdirError(f"{new_name!r} is already the name of {holder.rel_path}; choose another name")
            new_rel = placing.free_file(self, renamed, moving=header.rel_path)  # never another memory's file
            new_path = self.resolve_rel(new_rel)
            kept = self._keep(header.rel_path, "renamed")
            self._write(new_rel, dump_document(renamed.frontmatter(), renamed.body))
            if new_path != header.path:
                safefs_write.unlink(self.base, self._rel(header.rel_path))
                self._write_index(index_text.remove(self.index(), header.rel_path), "renamed")
                from memdir import provenance

                provenance.moved(self.base, self.state_rel, self._rel(header.rel_path), self._rel(new_rel))
            self._index_upsert(new_rel, renamed)
        return SaveResult(new_rel, new_path, created=False, kept=kept, name=renamed.name,
                          renamed_from=header.rel_path if new_rel != header.rel_path else None)

    @_then_commit(lambda result: {result.rel_path: "deleted", C.INDEX_NAME: "updated"})
    def delete(self, ref: str) -> DeleteResult:
        """Forget a memory: off the index, its bytes kept in history (`memdir restore` brings it back)."""
        header = self.find(ref)
        with self._locked():
            index = self.index()  # read first: an unreadable index refuses the forget before the file goes
            kept = self._keep(header.rel_path, "deleted")
            safefs_write.unlink(self.base, self._rel(header.rel_path))
            self._write_index(index_text.remove(index, header.rel_path), "deleted")
        return DeleteResult(header.rel_path, kept)

    @_then_commit(lambda result: {C.INDEX_NAME: "rebuilt"})
    def rebuild_index(self) -> RebuildResult:
        """Merge MEMORY.md with the files: hand-written lines, order and hooks stay; missing entries are
        added, entries whose file is gone are removed. The previous index is kept in history."""
        with self._locked():
            facts = self.facts()
            headers = sorted(self.scan(facts).headers, key=lambda h: (h.type or "~", (h.name or h.rel_path).casefold()))
            facts.save()
            entries = [
                (h.rel_path, index_text.entry_line(h.name or h.path.stem, h.rel_path, h.description or ""))
                for h in headers if index_text.linkable(h.rel_path)  # `doctor` names the others
            ]
            merged = index_text.merge(self.index(), entries, lambda rel: safefs.is_regular_file(self.base, self._rel(rel)))
            kept = self._write_index(merged.text, "rebuilt")
        return RebuildResult(len(entries), merged.added, merged.removed, kept, merged.left_out)

    @_then_commit(lambda result: {result[0]: "restored", C.INDEX_NAME: "updated"})
    @_then_embed(lambda result: result[0])
    def restore(self, ref: str, version: str | None = None) -> tuple[str, str, str | None]:
        """(rel_path, restored version name, kept current version): the current bytes are kept first."""
        rel = self.history_key(ref)
        if self.state_rel == C.STATE_DIRNAME:  # git's versions and the old reader's
            row = githistory.pick(self.base, self._rel(rel), version, self.shown_ref(rel))
            name, data = (row.old.name if row.old else f"commit {row.label}"), row.read(self.base)
        else:
            chosen = history.pick(self.state_dir, self._rel(rel), version, self.shown_ref(rel))
            name, data = chosen.name, chosen.read()
        if rel != C.INDEX_NAME:
            self.resolve_rel(rel)  # refuses names outside the folder and symlinks on the way
        with self._locked():
            self.index()  # unreadable: refused before anything is written, not after
            kept = self._keep(rel, "replaced")
            safefs_write.write_bytes(self.base, self._rel(rel), data)
            if rel != C.INDEX_NAME:
                header = read_header(self.root / rel, self.root)
                line = index_text.entry_line(header.name or Path(rel).stem, rel, header.description or "")
                self._write_index(index_text.upsert(self.index(), rel, line), "updated")
        return rel, name, kept


def _same_title(old_text: str, memory: Memory) -> bool:
    """The file's previous name and description are the new memory's (so its index line still fits)."""
    try:
        from memdir.model import memory_from_fields

        parsed = parse_document(old_text)
        old = memory_from_fields(parsed.fields, parsed.body, "")
    except Exception:  # an unreadable old header: regenerate the line
        return False
    return old.name == memory.name and old.description == memory.description
