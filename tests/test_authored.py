"""Which memories memdir's extractor wrote (memdir/authored.py): only a file that still holds its bytes is its own."""

from __future__ import annotations

from memdir.authored import written_by_extractor
from memdir.model import Memory


def _save(store, name: str, authored: bool) -> str:
    memory = Memory(name=name, description=f"{name} notes", type="project", body=f"{name} body")
    return store.save(memory, authored=authored).rel_path


def test_a_memory_the_extractor_wrote_is_its_own_until_a_person_edits_it(store):
    ours, theirs = _save(store, "Deploy", authored=True), _save(store, "Standup", authored=False)
    assert written_by_extractor(store.state_dir, store.root, ours)
    assert not written_by_extractor(store.state_dir, store.root, theirs)  # a person's (or an API caller's)
    path = store.root / ours
    path.write_text(path.read_text() + "edited by hand\n")
    assert not written_by_extractor(store.state_dir, store.root, ours)  # now theirs: never updated over
    assert not written_by_extractor(store.state_dir, store.root, "missing.md")
