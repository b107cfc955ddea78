"""History folder names: one memory's versions are never another's, and histories written by the
old `/` -> `__` naming (on users' disks today) stay readable."""

from __future__ import annotations

import os
import time

import pytest

from memdir import history, history_keys
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
    _write(store, "ops/notes.md", "ops notes v1")
    _write(store, "ops__notes.md", "flat notes v1")
    store.root.joinpath("MEMORY.md").write_text("# Memory\n")
    history.keep(store.state_dir, store.root, "ops/notes.md", "updated")
    history.keep(store.state_dir, store.root, "ops__notes.md", "updated")
    _write(store, "ops/notes.md", "ops notes v2")
    _write(store, "ops__notes.md", "flat notes v2")
    store.restore("ops/notes.md")
    assert "ops notes v1" in (store.root / "ops/notes.md").read_text()
    assert "flat notes v2" in (store.root / "ops__notes.md").read_text()


def test_secret_looking_names_get_distinct_hashed_keys():
    one = history_keys.file_key("sk-ant-api03-" + "A" * 30 + "/x.md")
    other = history_keys.file_key("sk-ant-api03-" + "A" * 30 + "__x.md")
    assert one != other and "sk-ant" not in one and "sk-ant" not in other


def test_old_histories_stay_readable(store):
    store.root.mkdir(parents=True, exist_ok=True)
    _legacy_version(store, "user_role.md", b"old role")
    _legacy_version(store, "ops__notes.md", b"old ops notes")
    assert [v.read() for v in history.versions(store.state_dir, "user_role.md")] == [b"old role"]
    assert [v.read() for v in history.versions(store.state_dir, "ops/notes.md")] == [b"old ops notes"]
    # newer versions of the same memory come first, the old-scheme ones after them
    history.keep_bytes(store.state_dir, "ops/notes.md", b"new ops notes", "updated")
    assert [v.read() for v in history.versions(store.state_dir, "ops/notes.md")] == [b"new ops notes", b"old ops notes"]
    assert "ops/notes.md" in history.known_files(store.state_dir)


def test_an_old_version_two_spellings_shared_is_never_restored_silently(store, cli):
    _write(store, "ops/notes.md", "ops notes now")
    _write(store, "ops__notes.md", "flat notes now")
    store.root.joinpath("MEMORY.md").write_text("# Memory\n")
    _legacy_version(store, "ops__notes.md", b"whose bytes?")
    with pytest.raises(MemdirError) as refused:
        store.restore("ops/notes.md")
    message = str(refused.value)
    assert "ops__notes.md" in message and "ops/notes.md" in message and "\n" not in message
    assert "ops notes now" in (store.root / "ops/notes.md").read_text()
    code, out, _ = cli("--dir", str(store.root), "history", "ops/notes.md")
    assert code == 0 and "shared" in out and "ops__notes.md" in out


def _deploy(store, body: str) -> None:
    from memdir.model import Memory

    store.save(Memory(name="Deploy", description="how deploys go", type="project", body=body),
               rel_path="project_deploy.md")


def test_team_and_personal_memories_of_one_file_name_keep_apart_histories(store, cli):
    from memdir.store import MemoryStore

    team = MemoryStore.team_store(store.root)
    _deploy(store, "mine v1")
    _deploy(team, "team v1")
    _deploy(store, "mine v2")
    _deploy(team, "team v2")
    assert [b"mine v1" in v.read() for v in history.versions(store.state_dir, "project_deploy.md")] == [True]
    assert [b"team v1" in v.read() for v in history.versions(team.state_dir, "team/project_deploy.md")] == [True]
    code, out, _ = cli("--dir", str(store.root), "restore", "--team", "project_deploy.md")
    assert code == 0
    assert "team v1" in (team.root / "project_deploy.md").read_text()
    assert "mine v2" in (store.root / "project_deploy.md").read_text()
    code, out, _ = cli("--dir", str(store.root), "history", "--team", "project_deploy.md")
    assert code == 0 and out.count("bytes") == len(team.history_rows("project_deploy.md")) >= 2
    # The team listing holds the team's versions only (with the git history on, or the kept files alone).
    listed = [row.read(store.root) for row in team.history_rows("project_deploy.md")]
    assert any(b"team v1" in data for data in listed) and not any(b"mine" in data for data in listed)


def test_team_and_personal_indexes_keep_apart_histories(store):
    from memdir.model import Memory
    from memdir.store import MemoryStore

    team = MemoryStore.team_store(store.root)
    store.save(Memory(name="Role", description="the user's role", type="user"))
    _deploy(store, "mine")  # the personal index changes: its previous version is kept
    _deploy(team, "team")
    team.save(Memory(name="Oncall", description="who is on call", type="reference"))
    team_versions = [v.read() for v in history.versions(store.state_dir, "team/MEMORY.md")]
    mine = [v.read() for v in history.versions(store.state_dir, "MEMORY.md")]
    assert team_versions and all(b"user_role" not in v for v in team_versions)
    assert mine and all(b"reference_oncall" not in v and b"project_deploy" not in v for v in mine)


def test_old_team_versions_are_shown_but_never_restored_into_either_folder(store, cli):
    """Before this fix a team memory's versions were filed under its bare name, with the personal
    memory of that name: which of the two they belong to cannot be known, so neither restores them."""
    from memdir.store import MemoryStore

    team = MemoryStore.team_store(store.root)
    _deploy(team, "team now")
    _legacy_version(store, "project_deploy.md", b"team or mine?")
    code, _, err = cli("--dir", str(store.root), "restore", "--team", "project_deploy.md")
    assert code != 0 and "project_deploy.md" in err and "team now" in (team.root / "project_deploy.md").read_text()
    _deploy(store, "mine now")
    code, _, err = cli("--dir", str(store.root), "restore", "project_deploy.md")
    assert code != 0 and "team/project_deploy.md" in err and "mine now" in (store.root / "project_deploy.md").read_text()
    # versions kept from now on restore as usual
    _deploy(store, "mine later")
    code, _, _ = cli("--dir", str(store.root), "restore", "project_deploy.md")
    assert code == 0 and "mine now" in (store.root / "project_deploy.md").read_text()


def test_a_name_made_of_underscores_is_listed_in_bounded_steps(store, monkeypatch):
    """The old-scheme spellings of a name grow like Fibonacci in its `_` runs: they stay bounded.
    Counted, not timed: every step of the enumeration is a call of `_runs`, and unbounded there would be
    millions of them (a 32-underscore run alone has 3.5 million spellings)."""
    store.root.mkdir(parents=True, exist_ok=True)
    name = "a" + "_" * 120 + "b.md"
    _legacy_version(store, name, b"old")
    history.keep_bytes(store.state_dir, "x" + "_/" * 60 + "y.md", b"deep", "updated")
    _legacy_version(store, "c" + "_" * 30 + "d.md", b"runs of 30")  # long, but under _MAX_RUN: enumerated
    steps, runs = [0], history_keys._runs

    def counted(n: int):
        steps[0] += 1
        assert steps[0] <= 10_000, "the old-scheme spellings are enumerated without bound"
        return runs(n)

    monkeypatch.setattr(history_keys, "_runs", counted)  # the recursion calls it by this name too (154 steps today)
    assert [v.read() for v in history.versions(store.state_dir, name)] == [b"old"]
    assert history.known_files(store.state_dir)


def test_a_deleted_memory_with_a_hashed_key_is_found_by_its_path(store, cli):
    long_name = "project_" + "very_long_subject_" * 12 + "notes.md"  # its escaped key would not fit
    _write(store, long_name, "long notes v1")
    store.root.joinpath("MEMORY.md").write_text("# Memory\n")
    store.delete(long_name)
    assert history.file_key(long_name).startswith("%long-")
    code, out, _ = cli("--dir", str(store.root), "restore", long_name)
    assert code == 0 and "long notes v1" in (store.root / long_name).read_text()


@pytest.mark.parametrize("skew", [-3900, 3900, 0])
def test_a_partial_version_is_aged_on_the_file_system_s_clock(store, monkeypatch, skew):
    """A version being written is a hidden `.partial` file; one left an hour by a killed process is removed on the next
    save. Aged on this machine's clock, a file system whose server ran over an hour behind made another writer's
    partial just created look that old, and it was removed under that writer (`skew`: this clock off instead)."""
    store.root.mkdir(parents=True, exist_ok=True)
    folder = history.keep_bytes(store.state_dir, "a.md", b"first", "updated").parent
    dead, live = folder / ".20250101T000000.000000Z-12345-0a0b0c0d.partial", folder / ".now-7-1.partial"
    for partial in (dead, live):
        partial.write_bytes(b"half a version")  # stamped by the file system's clock: now
    past = os.stat(live).st_mtime - 3700  # on the same clock: left an hour ago
    os.utime(dead, (past, past))
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    history.keep_bytes(store.state_dir, "a.md", b"second", "updated")
    assert (dead.exists(), live.exists()) == (False, True)
