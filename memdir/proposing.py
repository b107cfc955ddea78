"""A store that proposes instead of writing (write mode confirm, and the agent's tools in manual mode).

`ProposingStore` answers `save`, `delete` and `rename` exactly as `MemoryStore` decides them (the
same placing, the same secret guard, the same lost-update check) but records each change as a
proposal in `.memdir/proposals/` (memdir/proposals.py) and never touches the memory folder. Within
one run it sees its own proposals (`current_text`), so a writer that saves a file and then edits
it proposes the edited text once.
"""

from __future__ import annotations

from pathlib import Path

from memdir import constants as C, placing, proposals
from memdir.errors import MemdirError
from memdir.model import Memory, kebab_slug
from memdir.store import DeleteResult, MemoryStore, SaveResult

_ABSENT = object()


class ProposingStore(MemoryStore):
    def __init__(self, root: Path, *, state_dir: Path | None = None, team: bool = False, source: str = "",
                 mode: str = "confirm") -> None:
        super().__init__(root, state_dir=state_dir, team=team)
        self.source = source
        self.mode = mode
        self.run = proposals.new_run_id()
        self.overlay: dict[str, str | None] = {}  # rel -> text proposed in this run (None: proposed deletion)
        self.made: list[proposals.Proposal] = []

    @classmethod
    def team_store(cls, personal_root: Path, *, source: str = "", mode: str = "confirm") -> ProposingStore:
        return cls(personal_root / C.TEAM_DIRNAME, state_dir=personal_root / C.STATE_DIRNAME, team=True,
                   source=source, mode=mode)

    def exists(self, rel_path: str) -> bool:
        """A file this run proposed to create counts as taken, so a second new memory gets a name of its own."""
        return self.overlay.get(rel_path) is not None or super().exists(rel_path)

    def disk_text(self, rel_path: str) -> str | None:
        return self.read_file(rel_path) if super().exists(rel_path) else None

    def current_text(self, rel_path: str) -> str | None:
        """The file as this run would leave it: its own proposal's text, else the file's (None: absent)."""
        return self.overlay[rel_path] if rel_path in self.overlay else self.disk_text(rel_path)

    def _propose(self, rel_path: str, action: str, text: str | None, name: str, authored: bool) -> proposals.Proposal:
        proposal = proposals.propose(
            self.base, target=rel_path, action=action, text=text, base_text=self.disk_text(rel_path), name=name,
            source=self.source, run=self.run, team=self.team, authored=authored,
        )
        self.overlay[rel_path] = text
        self.made = [p for p in self.made if p.id != proposal.id] + [proposal]
        return proposal

    def save(self, memory: Memory, *, rel_path: str | None = None, allow_secrets: bool = False,
             expected_text: str | None = None, authored: bool = False, provenance: dict | None = None) -> SaveResult:
        # `provenance` is the store's signature; a proposal is not a write: it is recorded once accepted.
        memory, rel_path, path, text, taken_from = self._placed(memory, rel_path, allow_secrets)
        current = self.current_text(rel_path)
        if expected_text is not None and (current or "") != expected_text:
            raise MemdirError(f"{rel_path} changed since it was read; read it again before writing")
        if current == text:
            return SaveResult(rel_path, path, created=False, changed=False, name=memory.name)
        action = "create" if self.disk_text(rel_path) is None else "update"
        proposal = self._propose(rel_path, action, text, memory.name, authored)
        return SaveResult(rel_path, path, created=action == "create", changed=False, name=memory.name,
                          name_taken=taken_from, proposed=proposal.id)

    def delete(self, ref: str) -> DeleteResult:
        header = self.find(ref)
        proposal = self._propose(header.rel_path, "delete", None, header.name or "", authored=False)
        return DeleteResult(header.rel_path, None, proposed=proposal.id)

    def rename(self, ref: str, new_name: str) -> SaveResult:
        """Proposed as the memory under its new name plus, when the file name changes, the old file's deletion."""
        memory, header = self.read(ref)
        if self.overlay.get(header.rel_path):  # renaming what this run already proposed for the file
            from memdir.frontmatter_io import parse_document
            from memdir.model import memory_from_fields

            parsed = parse_document(self.overlay[header.rel_path] or "")
            memory = memory_from_fields(parsed.fields, parsed.body, header.rel_path)
        renamed = Memory.model_validate(memory.model_copy(update={"name": new_name}).model_dump())
        holder = placing.names_in_use(self, moving=header.rel_path).get(kebab_slug(renamed.name))
        if holder is not None:
            raise MemdirError(f"{new_name!r} is already the name of {holder.rel_path}; choose another name")
        new_rel = placing.free_file(self, renamed, moving=header.rel_path)
        result = self.save(renamed, rel_path=new_rel)
        if new_rel != header.rel_path:
            self.delete(header.rel_path)
        return result

    def rebuild_index(self):
        raise MemdirError(f"write mode {self.mode}: the index is rebuilt by `memdir index --rebuild`, not proposed")

    def restore(self, ref: str, version: str | None = None):
        raise MemdirError(f"write mode {self.mode}: restore a memory with `memdir restore`, not through a proposal")
