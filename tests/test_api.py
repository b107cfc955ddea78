"""The public Python API (`import memdir`): every function, its typed return, and the import-free package."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

import memdir
from memdir.store import MemoryStore

HEAVY = ("pydantic", "anthropic", "pathlib", "mcp", "httpx", "jinja2", "yaml")


def test_import_memdir_pulls_in_nothing_heavy():
    code = f"import sys, memdir; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_api_is_loaded_on_first_attribute_access():
    code = (
        "import sys, memdir; before = 'memdir.entry.api' in sys.modules; f = memdir.remember; "
        "print(before, 'memdir.entry.api' in sys.modules, f.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "memdir.entry.api"]


def test_public_surface_is_exactly_the_documented_names():
    from memdir.entry import api

    assert set(memdir.__all__) - {"__version__"} == set(api.__all__)
    for name in api.__all__:
        assert getattr(memdir, name) is getattr(api, name)
    assert "remember" in dir(memdir)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        memdir.nope  # noqa: B018


def test_returns_are_frozen():
    for cls in (memdir.Saved, memdir.MemoryInfo, memdir.MemoryDoc, memdir.Forgotten, memdir.RecallAnswer,
                memdir.Recalled, memdir.Extraction):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def test_remember_read_list_forget(memory_dir):
    saved = memdir.remember(
        "Run the integration suite against a real Postgres.", type="feedback", why="mocks hid a broken migration",
        how="for any database change", folder=memory_dir,
    )
    assert saved.created and saved.file == "feedback_run_integration_suite_real_postgres.md"
    assert saved.path == memory_dir / saved.file
    with pytest.raises(dataclasses.FrozenInstanceError):
        saved.created = False  # type: ignore[misc]

    doc = memdir.read(saved.file, folder=memory_dir)
    assert doc.type == "feedback" and doc.name == "Run integration suite real Postgres"
    assert "**Why:** mocks hid a broken migration" in doc.body and doc.text.startswith("---\n")

    memdir.remember("The user is a staff data engineer.", type="user", folder=memory_dir)
    infos = memdir.list_memories(folder=memory_dir)
    assert {i.file for i in infos} == {saved.file, "user_staff_data_engineer.md"}
    assert [i.type for i in memdir.list_memories(type="user", folder=memory_dir)] == ["user"]
    assert f"]({saved.file})" in memdir.read_index(folder=memory_dir)

    gone = memdir.forget(saved.file, folder=memory_dir)
    assert gone.file == saved.file and not gone.path.exists()
    assert b"Run the integration suite" in (memory_dir / gone.kept).read_bytes()
    assert saved.file not in memdir.read_index(folder=memory_dir)
    assert [i.type for i in memdir.list_memories(folder=memory_dir)] == ["user"]


def test_remember_same_name_never_overwrites_and_refuses_secrets(memory_dir):
    first = memdir.remember("Deploys go through ArgoCD.", type="reference", name="Deploys", folder=memory_dir)
    before = first.path.read_bytes()
    other = memdir.remember("Deploys go through ArgoCD, app 'api-prod'.", type="reference", name="Deploys",
                            folder=memory_dir)
    assert first.created and other.created and other.file != first.file and first.path.read_bytes() == before
    assert "api-prod" in other.file.replace("_", "-")  # told apart by its own distinguishing words
    same = memdir.remember("Deploys go through ArgoCD, app 'api-prod'.", type="reference", name="Deploys",
                           folder=memory_dir)
    assert same.file == other.file and not same.changed and same.kept is None
    assert len(memdir.list_memories(folder=memory_dir)) == 2
    with pytest.raises(memdir.MemdirError, match="AWS access key"):
        memdir.remember("prod key AKIAIOSFODNN7EXAMPLE", type="reference", folder=memory_dir)
    with pytest.raises(memdir.MemdirError, match="unknown memory type 'opinion'"):
        memdir.remember("x", type="opinion", folder=memory_dir)


def test_remember_over_long_description_is_one_line_error(memory_dir):
    with pytest.raises(memdir.MemdirError) as err:
        memdir.remember("fact", type="user", description="d" * 400, folder=memory_dir)
    assert "description" in str(err.value) and "300" in str(err.value) and "\n" not in str(err.value)


def test_update_changes_only_what_is_given(memory_dir):
    saved = memdir.remember("Use pnpm, not npm.", type="feedback", why="lockfile drift", how="in every JS repo",
                            folder=memory_dir)
    updated = memdir.update(saved.file, how="in every JS repo and in CI images", folder=memory_dir)
    assert updated.changed and updated.kept.startswith(".memdir/history/")
    assert b"**How to apply:** in every JS repo\n" in (memory_dir / updated.kept).read_bytes()  # no loss
    doc = memdir.read(updated.file, folder=memory_dir)
    assert doc.body.splitlines()[0] == "Use pnpm, not npm."
    assert "**Why:** lockfile drift" in doc.body and "**How to apply:** in every JS repo and in CI images" in doc.body

    renamed = memdir.update(saved.file, name="Package manager is pnpm", description="pnpm only", folder=memory_dir)
    assert renamed.file == "feedback_package_manager_is_pnpm.md" and not (memory_dir / saved.file).exists()
    index = memdir.read_index(folder=memory_dir)
    assert "(feedback_package_manager_is_pnpm.md) — pnpm only" in index and saved.file not in index

    with pytest.raises(memdir.MemdirError, match="nothing to change"):
        memdir.update(renamed.file, folder=memory_dir)
    with pytest.raises(memdir.MemdirError, match="no memory named"):
        memdir.update("missing.md", text="x", folder=memory_dir)


def test_update_refuses_when_the_file_changed_underneath(memory_dir, monkeypatch):
    saved = memdir.remember("Standups are at 9:30.", type="project", folder=memory_dir)
    store_save = MemoryStore.save

    def racing_save(self, memory, **kwargs):  # someone edits the file between our read and our write
        path = self.root / kwargs["rel_path"]
        path.write_text(path.read_text() + "\nedited by hand\n")
        return store_save(self, memory, **kwargs)

    monkeypatch.setattr(MemoryStore, "save", racing_save)
    with pytest.raises(memdir.MemdirError, match="changed since it was read"):
        memdir.update(saved.file, text="Standups are at 10:00.", folder=memory_dir)
    assert "edited by hand" in (memory_dir / saved.file).read_text()  # the person's edit survives


def test_team_memory_is_separate(memory_dir):
    memdir.remember("Releases are cut on Tuesdays.", type="project", folder=memory_dir, team=True)
    assert memdir.list_memories(folder=memory_dir) == []
    assert [i.file for i in memdir.list_memories(folder=memory_dir, team=True)] == [
        "project_releases_cut_tuesdays.md"
    ]


def test_recall_matches_the_cli(memory_dir, cli):
    memdir.remember("Integration tests hit a real Postgres, never mocks.", type="feedback",
                    description="integration tests must use a real postgres database", folder=memory_dir)
    memdir.remember("The user prefers tabs.", type="user", description="indentation preference: tabs",
                    folder=memory_dir)
    answer = memdir.recall("write integration tests for the postgres layer", folder=memory_dir, engine="offline")
    assert answer.engine == "offline"
    assert [m.file for m in answer.memories] == ["feedback_integration_tests_hit_real_postgres.md"]
    assert "real Postgres" in answer.context
    _, out, _ = cli("--dir", str(memory_dir), "recall", "write integration tests for the postgres layer",
                    "--engine", "offline", "--json")
    assert json.loads(out)["context"] == answer.context

    nothing = memdir.recall("bake sourdough bread", folder=memory_dir, engine="offline")
    assert nothing.memories == () and nothing.context == ""
    with pytest.raises(memdir.MemdirError, match="query is empty"):
        memdir.recall("  ", folder=memory_dir)


def test_recall_with_a_session_skips_what_it_already_surfaced(memory_dir):
    memdir.remember("Integration tests hit a real Postgres.", type="feedback",
                    description="integration tests must use a real postgres database", folder=memory_dir)
    query = "write integration tests for the postgres layer"
    first = memdir.recall(query, folder=memory_dir, engine="offline", session_id="s1")
    second = memdir.recall(query, folder=memory_dir, engine="offline", session_id="s1")
    assert first.memories and not second.memories
    assert memdir.recall(query, folder=memory_dir, engine="offline").memories  # no session: always answers


def test_extract_a_transcript_offline(memory_dir, tmp_path):
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "Remember that our staging DB is shared with QA."}]))
    dry = memdir.extract(transcript, folder=memory_dir, engine="offline", dry_run=True)
    assert [r.status for r in dry] == ["saved"] and dry[0].dry_run and not memory_dir.joinpath("MEMORY.md").exists()

    runs = memdir.extract(transcript, folder=memory_dir, engine="offline")
    assert [(r.status, r.engine) for r in runs] == [("saved", "offline")]
    assert isinstance(runs[0].saved, tuple) and runs[0].saved
    assert any("staging" in (i.description or "") for i in memdir.list_memories(folder=memory_dir))
    with pytest.raises(memdir.MemdirError, match="transcript not found"):
        memdir.extract(tmp_path / "missing.jsonl", folder=memory_dir)


def test_resolve_folder_default_follows_claude_code(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    from memdir.paths import resolve_memory_dir

    assert memdir.resolve_folder(cwd=repo) == resolve_memory_dir(repo).path
    monkeypatch.chdir(repo)
    memdir.remember("The user is on the platform team.", type="user")
    assert (resolve_memory_dir(repo).path / "user_platform_team.md").exists()
    assert memdir.resolve_folder(tmp_path / "explicit") == tmp_path / "explicit"
    assert memdir.resolve_folder("notes/memory") == repo / "notes" / "memory"
    with pytest.raises(memdir.MemdirError, match="home folder"):
        memdir.resolve_folder("~")


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    import re

    from tests.conftest import REPO

    block = re.search(r"<!-- python-api-example[^>]*-->\n```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert block, "README lost its Python API example"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "session.jsonl").write_text(json.dumps(
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Remember that the orders table is append-only."}}
    ) + "\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    scope: dict = {}
    exec(compile(block.group(1), "README.md", "exec"), scope)  # noqa: S102 - the documented example, verbatim
    assert scope["saved"].created and scope["doc"].type == "feedback"
    assert "any change under db/ or migrations/" in scope["doc"].body
    assert [i.file for i in scope["infos"]] == [scope["saved"].file]
    assert scope["answer"].engine == "offline"
    assert [r.status for r in scope["runs"]] == ["saved"]
    assert scope["saved"].file not in memdir.read_index()


def test_update_replaces_whole_hand_written_sections(realdata, memory_dir):
    # A real hand-written body: a multi-line **How to apply:** with bullets, other bold-labelled sections after it.
    source = realdata / "memory-folders/application-pipeline/feedback_gemini_collaboration.md"
    original = source.read_text()
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / source.name).write_text(original)
    old_why = next(line for line in original.splitlines() if line.startswith("**Why:**"))
    how_bullets = original.split("**How to apply:**\n", 1)[1].split("\n\n", 1)[0]

    memdir.update(source.name, why="it cannot see the rules it breaks", folder=memory_dir)
    text = (memory_dir / source.name).read_text()
    assert old_why not in text and text.count("**Why:**") == 1 and text.count("**How to apply:**") == 1
    assert "**Why:** it cannot see the rules it breaks\n\n**How to apply:**\n" + how_bullets in text
    assert text.split("**Why:**")[0] == original.split("**Why:**")[0]  # everything above is untouched
    assert text.split(how_bullets)[1] == original.split(how_bullets)[1]  # and everything below
    assert not text.rstrip().endswith("**How to apply:**")

    memdir.update(source.name, how="only for isolated, stateless tasks", folder=memory_dir)
    text = (memory_dir / source.name).read_text()
    assert "**How to apply:** only for isolated, stateless tasks\n\n**2026-03-30 update" in text
    assert how_bullets.splitlines()[0] not in text  # the old bullets went with their section
    assert "This confirms the core assessment" in text


def test_update_text_keeps_sections_and_never_adds_an_empty_one(memory_dir):
    saved = memdir.remember("Standups are at 9:30.", type="project", folder=memory_dir)
    memdir.update(saved.file, why="the team spans two time zones", how="\n- book rooms for 9:30\n- remind new joiners",
                  folder=memory_dir)
    memdir.update(saved.file, text="Standups are at 10:00.", folder=memory_dir)
    body = memdir.read(saved.file, folder=memory_dir).body
    assert body.startswith("Standups are at 10:00.\n\n**Why:** the team spans two time zones\n")
    assert "**How to apply:**\n- book rooms for 9:30\n- remind new joiners" in body and "9:30." not in body

    plain = memdir.remember("Prefers tabs.", type="user", folder=memory_dir)
    memdir.update(plain.file, why="their editor is set up for tabs", folder=memory_dir)
    body = memdir.read(plain.file, folder=memory_dir).body
    assert "**Why:** their editor is set up for tabs" in body and "**How to apply:**" not in body
