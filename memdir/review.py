"""`memdir review`: proposals shown as diffs against the current files, accepted through the store
(previous bytes kept in history, secret guard) or rejected (moved aside, never deleted).

A proposal whose target changed since it was made is stale: it was written against other bytes, so
accepting it could undo someone's edit. It is shown as such and accepted only with `force`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from memdir import proposals
from memdir.errors import MemdirError
from memdir.frontmatter_io import parse_document
from memdir.model import memory_from_fields
from memdir.proposals import Proposal
from memdir.store import MemoryStore


def _store(memory_dir: Path, proposal: Proposal) -> MemoryStore:
    return MemoryStore.team_store(Path(memory_dir)) if proposal.team else MemoryStore(Path(memory_dir))


def _current(store: MemoryStore, rel: str) -> str | None:
    return store.read_file(rel) if store.exists(rel) else None


def is_stale(memory_dir: Path, proposal: Proposal) -> bool:
    """The target's bytes are not the ones the proposal was made against."""
    return proposals.digest(_current(_store(memory_dir, proposal), proposal.target)) != proposal.base


def diff(memory_dir: Path, proposal: Proposal) -> str:
    """The proposal as a unified diff against the file as it is now."""
    current = _current(_store(memory_dir, proposal), proposal.target) or ""
    new = "" if proposal.action == "delete" else proposal.text or ""
    shown = proposal.shown_target
    return "".join(difflib.unified_diff(current.splitlines(True), new.splitlines(True), f"a/{shown}", f"b/{shown}"))


def summary_line(memory_dir: Path, proposal: Proposal) -> str:
    stale = "  [stale: the file changed since; --force to accept]" if is_stale(memory_dir, proposal) else ""
    source = f"  from {proposal.source}" if proposal.source else ""
    return f"{proposal.id}: {proposal.action} {proposal.shown_target}{source}{stale}"


def accept(memory_dir: Path, ref: str, *, force: bool = False, text: str | None = None) -> str:
    """Carry out one proposal through the store and move it to `proposals/accepted/`; what happened, in one line.

    `text` replaces the proposed text (`review --edit`). A stale proposal is refused without `force`."""
    proposal = proposals.find(memory_dir, ref)
    store = _store(memory_dir, proposal)
    current = _current(store, proposal.target)
    if proposals.digest(current) != proposal.base and not force:
        raise MemdirError(f"{proposal.shown_target} changed since proposal {proposal.id} was made; "
                          f"`memdir review --list` shows the diff; pass --force to accept it anyway")
    if proposal.action == "delete":
        if current is None:
            outcome = f"{proposal.shown_target} was already gone; nothing deleted"
        else:
            outcome = store.delete(proposal.target).describe()
    else:
        new_text = proposal.text if text is None else text
        parsed = parse_document(new_text or "")
        if not parsed.has_header:
            raise MemdirError(f"proposal {proposal.id}: the text needs its frontmatter (name, description, type) "
                              "between '---' lines; fix it with --edit")
        memory = memory_from_fields(parsed.fields, parsed.body, proposal.target)
        saved = store.save(memory, rel_path=proposal.target, expected_text=current or "",
                           authored=proposal.authored and text is None)
        outcome = saved.describe()
    proposals.move_aside(memory_dir, proposal, "accepted")
    return f"accepted {proposal.id}: {outcome}"


def reject(memory_dir: Path, ref: str) -> str:
    proposal = proposals.find(memory_dir, ref)
    kept = proposals.move_aside(memory_dir, proposal, "rejected")
    return f"rejected {proposal.id}: {proposal.shown_target} left as it is (the proposal is kept at {kept})"


def accept_all(memory_dir: Path, *, force: bool = False) -> tuple[list[str], list[str]]:
    """(what was accepted, what was not and why): every pending proposal, oldest first; one refusal
    (stale, a secret) never stops the others."""
    done, left = [], []
    for proposal in proposals.pending(memory_dir):
        try:
            done.append(accept(memory_dir, proposal.id, force=force))
        except MemdirError as exc:
            left.append(f"{proposal.id}: {exc}")
    return done, left
