from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from memdir.entry.manual import remember
from memdir.errors import MemdirError
from memdir.model import Memory
from memdir.store import MemoryStore, slugify


def _m(name: str, type_: str = "user", description: str = "d", body: str = "b") -> Memory:
    return Memory(name=name, description=description, type=type_, body=body)


def test_save_creates_file_and_index_line(store):
    result = store.save(_m("Alice's role", description="Backend engineer"))
    assert result.created and result.rel_path == "user_alice_s_role.md"
    assert store.index() == "- [Alice's role](user_alice_s_role.md) — Backend engineer\n"
    memory, header = store.read("Alice's role")
    assert memory.description == "Backend engineer" and header.type == "user"


def test_same_name_updates_in_place(store):
    store.save(_m("Role", description="one"))
    result = store.save(_m("role", description="two"))
    assert not result.created
    assert len(list(store.root.glob("*.md"))) == 2  # the memory + MEMORY.md
    assert store.index().count("\n") == 1 and "two" in store.index()


def test_distinct_names_with_same_slug_do_not_collide(store):
    a = store.save(_m("Deploy: prod", body="through ArgoCD"))
    b = store.save(_m("Deploy prod", body="through Spinnaker"))
    assert a.rel_path != b.rel_path and b.rel_path == "user_deploy_prod_spinnaker.md"
    assert b.name == "Deploy prod Spinnaker" and b.name_taken == "Deploy prod"
    assert "another memory is already named 'Deploy prod'" in b.describe()
    assert len(store.scan().headers) == 2
    assert store.save(_m("Deploy prod", body="through  argocd")).rel_path == a.rel_path  # the same memory


def test_rename_moves_file_and_index_line(store):
    store.save(_m("Old name", description="hook"))
    result = store.rename("Old name", "New name")
    assert result.rel_path == "user_new_name.md"
    assert not (store.root / "user_old_name.md").exists()
    assert store.index() == "- [New name](user_new_name.md) — hook\n"


def test_delete_removes_from_index_and_keeps_the_bytes_in_history(store):
    store.save(_m("Temp"))
    store.save(_m("Keep"))
    before = (store.root / "user_temp.md").read_bytes()
    done = store.delete("user_temp.md")
    assert "user_temp.md" not in store.index() and "user_keep.md" in store.index()
    assert (store.root / done.kept).read_bytes() == before
    assert done.describe() == f"deleted user_temp.md (kept: {done.kept})"
    with pytest.raises(MemdirError, match="no memory named"):
        store.find("Temp")


def test_find_by_ambiguous_name_asks_for_the_file(store):
    store.save(_m("Same", "user"))
    # memdir never gives two memories one name; a person or Claude Code may write them so
    (store.root / "feedback_same.md").write_text("---\nname: Same\ndescription: d\ntype: feedback\n---\nx\n")
    with pytest.raises(MemdirError, match="several memories"):
        store.find("same")
    assert store.find("feedback_same").type == "feedback"


def test_paths_outside_the_folder_are_refused(store):
    for bad in ("../x.md", "/etc/x.md", "a\\b.md", ".memdir/x.md", "MEMORY.md", "notes.txt"):
        with pytest.raises(MemdirError):
            store.save(_m("x"), rel_path=bad)


def test_the_index_name_is_refused_in_any_case(store):
    """On a case-insensitive disk (macOS) `memory.md` is MEMORY.md: saved as a memory, it replaced the index."""
    for bad in ("memory.md", "Memory.MD", "sub/memory.md"):
        with pytest.raises(MemdirError, match="not be MEMORY.md"):
            store.save(_m("x"), rel_path=bad)
    assert sorted(p.name for p in store.root.rglob("*.md")) == []


def test_symlink_out_of_the_folder_is_refused(store, tmp_path):
    store.root.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (store.root / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(MemdirError, match="symlink"):
        store.save(_m("x"), rel_path="link/x.md")
    assert not (tmp_path / "outside" / "x.md").exists()


def test_expected_text_refuses_lost_updates(store):
    result = store.save(_m("Counter", body="v1"))
    seen = result.path.read_text()
    store.save(_m("Counter", body="v2"), rel_path=result.rel_path)  # someone else wrote meanwhile
    with pytest.raises(MemdirError, match="changed since it was read"):
        store.save(_m("Counter", body="v3"), rel_path=result.rel_path, expected_text=seen)
    assert "v2" in result.path.read_text()


def test_secret_is_refused_and_nothing_written(store):
    with pytest.raises(MemdirError, match="GitHub token"):
        store.save(_m("Token", body="use ghp_" + "a" * 36))
    assert not store.root.exists() or not list(store.root.glob("*.md"))
    result = store.save(_m("Token", body="use ghp_" + "a" * 36), allow_secrets=True)
    assert result.created


def test_team_memory_always_refuses_secrets(memory_dir):
    team = MemoryStore.team_store(memory_dir)
    with pytest.raises(MemdirError, match="team memory"):
        team.save(_m("Key", body="-----BEGIN RSA PRIVATE KEY-----"), allow_secrets=True)
    team.save(_m("Deploys", description="where deploys are announced"))
    assert (memory_dir / "team" / "MEMORY.md").read_text().startswith("- [Deploys]")
    assert not (memory_dir / "MEMORY.md").exists()
    assert MemoryStore(memory_dir).scan().headers == []  # personal listing excludes team/


def test_rebuild_index_from_files(store):
    store.save(_m("B", "user"))
    store.save(_m("A", "feedback", body="x\n**Why:** a\n**How to apply:** b"))
    store.index_path.write_text("# Mine\n- [Gone](gone.md) — x\n")
    done = store.rebuild_index()
    assert (done.entries, done.added, done.removed) == (2, ["feedback_a.md", "user_b.md"], ["gone.md"])
    assert store.index() == "# Mine\n\n- [A](feedback_a.md) — d\n- [B](user_b.md) — d\n"
    assert (store.root / done.kept).read_text() == "# Mine\n- [Gone](gone.md) — x\n"


def test_remember_fills_why_how_for_feedback(store):
    result = remember(store, "Never push to main directly. Use PRs.", type_="feedback")
    text = result.path.read_text()
    assert "name: Never push main directly" in text
    assert "**Why:**" in text and "**How to apply:**" in text
    with pytest.raises(MemdirError, match="unknown memory type 'opinion'"):
        remember(store, "x", type_="opinion")


def test_slugify():
    assert slugify("Ünïcode & Spaces!") == "unicode_spaces"
    assert slugify("!!!") == "memory"
    assert len(slugify("x" * 500)) == 60


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memdir.model import Memory
    from memdir.store import MemoryStore
    store = MemoryStore(Path(sys.argv[1]))
    proc = sys.argv[2]
    for i in range(24):
        store.save(Memory(name=f"p{proc} memory {i}", description=f"from {proc} #{i}", type="project",
                          body="fact\\n\\n**Why:** w\\n**How to apply:** h"))
    """
)


@pytest.mark.slow
def test_eight_processes_writing_twenty_four_each(memory_dir):
    # 192 memories: every index line must survive the race, and all fit MEMORY.md's 200-line load cap
    # (past it memdir stops adding lines; tests/hostile/test_huge_index.py covers that).
    procs = [
        # The folder lock is under test here, not the vectors (test_embed_on_write covers concurrent appends).
        subprocess.Popen([sys.executable, "-c", WRITER, str(memory_dir), str(n)], stderr=subprocess.PIPE,
                         env={**os.environ, "MEMDIR_DENSE": "0"})
        for n in range(8)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    store = MemoryStore(memory_dir)
    headers = store.scan().headers
    assert len(headers) == 192
    for h in headers:
        assert store.load(h.rel_path).body.endswith("**How to apply:** h")  # every file whole
    from memdir.index import linked_files

    listed = linked_files(store.index())
    assert sorted(listed) == sorted(h.rel_path for h in headers) and len(listed) == 192
    assert not [p for p in os.listdir(memory_dir) if ".tmp-" in p]
