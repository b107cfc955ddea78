"""History folder names: one memory's versions are never another's, and histories written by the
old `/` -> `__` naming (on users' disks today) stay readable."""

from __future__ import annotations

import pytest

from memdir import history
from memdir.errors import MemdirError

MEMORY = "---\nname: {name}\ndescription: {name} notes\ntype: project\n---\n{body}\n"


def _write(store, rel: str, body: str) -> None:
    path = store.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MEMORY.format(name=rel.replace("/", "-").removesuffix(".md"), body=body))


def _legacy_version(store, folder_name: str, data: bytes, stamp: str = "20250101T000000.000000Z") -> None:
    """A version exactly as memdir before this fix wrote it: `.memdir/history/<rel with / as __>/...`."""
    folder = store.state_dir / "history" / folder_name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stamp}-0001-updated.md").write_bytes(data)


@pytest.mark.parametrize("one, other", [("a/b.md", "a__b.md"), ("a/_b.md", "a___b.md"), ("x/y/z.md", "x__y/z.md")])
def test_two_spellings_never_share_a_history(store, one, other):
    store.root.mkdir(parents=True, exist_ok=True)
    history.keep_bytes(store.state_dir, one, b"one's bytes", "updated")
    history.keep_bytes(store.state_dir, other, b"other's bytes", "updated")
    assert [v.read() for v in history.versions(store.state_dir, one)] == [b"one's bytes"]
    assert [v.read() for v in history.versions(store.state_dir, other)] == [b"other's bytes"]
    assert {one, other} <= set(history.known_files(store.state_dir))


def test_restore_brings_back_this_memorys_bytes_not_its_namesakes(store):
    _write(store, "team/notes.md", "team notes v1")
    _write(store, "team__notes.md", "flat notes v1")
    store.root.joinpath("MEMORY.md").write_text("# Memory\n")
    history.keep(store.state_dir, store.root, "team/notes.md", "updated")
    history.keep(store.state_dir, store.root, "team__notes.md", "updated")
    _write(store, "team/notes.md", "team notes v2")
    _write(store, "team__notes.md", "flat notes v2")
    store.restore("team/notes.md")
    assert "team notes v1" in (store.root / "team/notes.md").read_text()
    assert "flat notes v2" in (store.root / "team__notes.md").read_text()


def test_secret_looking_names_get_distinct_hashed_keys():
    one = history.file_key("sk-ant-api03-" + "A" * 30 + "/x.md")
    other = history.file_key("sk-ant-api03-" + "A" * 30 + "__x.md")
    assert one != other and "sk-ant" not in one and "sk-ant" not in other


def test_old_histories_stay_readable(store):
    store.root.mkdir(parents=True, exist_ok=True)
    _legacy_version(store, "user_role.md", b"old role")
    _legacy_version(store, "team__notes.md", b"old team notes")
    assert [v.read() for v in history.versions(store.state_dir, "user_role.md")] == [b"old role"]
    assert [v.read() for v in history.versions(store.state_dir, "team/notes.md")] == [b"old team notes"]
    # newer versions of the same memory come first, the old-scheme ones after them
    history.keep_bytes(store.state_dir, "team/notes.md", b"new team notes", "updated")
    assert [v.read() for v in history.versions(store.state_dir, "team/notes.md")] == [b"new team notes", b"old team notes"]
    assert "team/notes.md" in history.known_files(store.state_dir)


def test_an_old_version_two_spellings_shared_is_never_restored_silently(store, cli):
    _write(store, "team/notes.md", "team notes now")
    _write(store, "team__notes.md", "flat notes now")
    store.root.joinpath("MEMORY.md").write_text("# Memory\n")
    _legacy_version(store, "team__notes.md", b"whose bytes?")
    with pytest.raises(MemdirError) as refused:
        store.restore("team/notes.md")
    message = str(refused.value)
    assert "team__notes.md" in message and "team/notes.md" in message and "\n" not in message
    assert "team notes now" in (store.root / "team/notes.md").read_text()
    code, out, _ = cli("--dir", str(store.root), "history", "team/notes.md")
    assert code == 0 and "shared" in out and "team__notes.md" in out
