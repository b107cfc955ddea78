from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir.stages.extractor.tools import TOOL_SCHEMAS, Toolbox

GOOD = "---\nname: {name}\ndescription: {desc}\ntype: {type}\n---\n{body}\n"
WHY = "\n\n**Why:** because\n**How to apply:** always"


@pytest.fixture
def box(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("hello project\n")
    toolbox = Toolbox(memory)
    toolbox.project = project  # beside the memory folder, where a transcript's cwd would point
    return toolbox


def _write(box, rel, name="N", desc="D", type_="user", body="b"):
    return box.run("Write", {"file_path": str(box.memory_dir / rel), "content": GOOD.format(name=name, desc=desc, type=type_, body=body)})


def test_write_new_memory_goes_through_the_store(box):
    result = _write(box, "user_role.md", "Role", "Backend engineer")
    assert not result.is_error, result.content
    assert (box.memory_dir / "user_role.md").exists()
    assert "- [Role](user_role.md) — Backend engineer" in (box.memory_dir / "MEMORY.md").read_text()
    assert box.written == ["user_role.md"]


@pytest.mark.parametrize(
    "target",
    ["../../.ssh/authorized_keys", "/etc/passwd", "{mem}/../outside.md", "{mem}/sub/x.md", "{mem}/MEMORY.md",
     "{mem}/notes.txt", "{mem}/.memdir/cursor.md"],
)
def test_writes_outside_memory_files_are_refused(box, target, tmp_path):
    target = target.format(mem=box.memory_dir)
    result = box.run("Write", {"file_path": target, "content": GOOD.format(name="x", desc="y", type="user", body="z")})
    assert result.is_error
    assert not (tmp_path / "outside.md").exists() and not Path(os.path.expanduser("~/.ssh/authorized_keys")).exists()


def test_symlink_out_of_the_folder_is_refused(box, tmp_path):
    outside = tmp_path / "outside.md"
    (box.memory_dir / "user_link.md").symlink_to(outside)
    result = _write(box, "user_link.md")
    assert result.is_error and not outside.exists()


@pytest.mark.parametrize("command", ["cat README.md", "ls", "wc --files0-from=/etc/passwd", "grep -d recurse -e KEY ."])
def test_there_is_no_bash(box, command):
    result = box.run("Bash", {"command": command})
    assert result.is_error
    assert "Read, Grep, Glob, Write, Edit" in result.content and "no Bash" in result.content
    assert "Bash" not in [schema["name"] for schema in TOOL_SCHEMAS]


def test_read_sees_only_the_memory_folder(box, tmp_path):
    (tmp_path / "secret.txt").write_text("nope")
    assert box.run("Read", {"file_path": str(tmp_path / "secret.txt")}).is_error
    result = box.run("Read", {"file_path": str(box.project / "README.md")})
    assert result.is_error and "outside the memory folder" in result.content
    assert box.run("Read", {"file_path": "../project/README.md"}).is_error
    assert box.run("Glob", {"pattern": "../*"}).is_error
    assert "hello project" not in box.run("Grep", {"pattern": "hello", "path": str(box.project)}).content


def test_unknown_tool_is_refused_with_the_allowed_list(box):
    result = box.run("WebFetch", {"url": "http://x"})
    assert result.is_error and "Read, Grep, Glob, Write, Edit" in result.content


def test_secret_is_refused(box):
    result = _write(box, "reference_keys.md", body="the key is sk-ant-api03-" + "x" * 40)
    assert result.is_error and "Anthropic API key" in result.content
    assert not (box.memory_dir / "reference_keys.md").exists()


def test_overwrite_requires_a_fresh_read(box):
    assert not _write(box, "user_a.md", body="v1").is_error
    fresh = Toolbox(box.memory_dir)  # a new run has not read it
    assert "Read it first" in _write(fresh, "user_a.md", body="v2").content
    assert not fresh.run("Read", {"file_path": str(box.memory_dir / "user_a.md")}).is_error
    (box.memory_dir / "user_a.md").write_text(GOOD.format(name="N", desc="D", type="user", body="changed by a person"))
    result = _write(fresh, "user_a.md", body="v3")
    assert result.is_error and "changed since you read it" in result.content
    assert "changed by a person" in (box.memory_dir / "user_a.md").read_text()


def test_edit_stale_old_string_is_refused(box):
    _write(box, "user_a.md", body="likes tabs")
    box.run("Read", {"file_path": str(box.memory_dir / "user_a.md")})
    assert not box.run("Edit", {"file_path": str(box.memory_dir / "user_a.md"), "old_string": "tabs", "new_string": "spaces"}).is_error
    assert "likes spaces" in (box.memory_dir / "user_a.md").read_text()
    result = box.run("Edit", {"file_path": str(box.memory_dir / "user_a.md"), "old_string": "tabs", "new_string": "x"})
    assert result.is_error and "does not occur" in result.content


def test_feedback_without_why_how_is_refused(box):
    result = _write(box, "feedback_x.md", type_="feedback", body="no reasons")
    assert result.is_error and "**Why:**" in result.content
    assert not _write(box, "feedback_x.md", type_="feedback", body="rule" + WHY).is_error


def test_write_empty_content_deletes(box):
    _write(box, "user_gone.md", "Gone")
    box.run("Read", {"file_path": str(box.memory_dir / "user_gone.md")})
    result = box.run("Write", {"file_path": str(box.memory_dir / "user_gone.md"), "content": ""})
    assert not result.is_error and not (box.memory_dir / "user_gone.md").exists()
    assert "user_gone.md" not in (box.memory_dir / "MEMORY.md").read_text()


def test_dry_run_writes_nothing(tmp_path):
    (tmp_path / "m").mkdir()
    box = Toolbox(tmp_path / "m", dry_run=True)
    result = _write(box, "user_x.md")
    assert not result.is_error and "dry run" in result.content and box.written == ["user_x.md"]
    assert not (tmp_path / "m" / "user_x.md").exists()


@pytest.mark.parametrize("name", [".env", "server.pem", "id_rsa", "credentials.json", "README.md"])
def test_project_files_are_never_read(box, name):
    (box.project / name).write_text("TOKEN=abc")
    assert box.run("Read", {"file_path": str(box.project / name)}).is_error
    assert "TOKEN" not in box.run("Grep", {"pattern": "TOKEN", "path": str(box.project)}).content
    assert "TOKEN" not in box.run("Grep", {"pattern": "TOKEN"}).content


@pytest.mark.parametrize("header", [
    "name: Timed take-home\ndescription: Timed take-home: Streamlit app built against a 3-hour clock\ntype: project",
    "name: Personal CRM: no Gmail connector searches\ndescription: Do not search Gmail for the CRM\ntype: feedback",
])
def test_a_natural_description_that_is_not_valid_yaml_is_saved_quoted(box, header):
    """The model's own words, as it wrote them: a colon inside a value must not cost the memory."""
    result = box.run("Write", {"file_path": str(box.memory_dir / "project_x.md"),
                               "content": f"---\n{header}\n---\nThe fact.{WHY}\n"})
    assert not result.is_error, result.content
    from memdir.frontmatter_io import parse_document

    stored = parse_document((box.memory_dir / "project_x.md").read_text())
    assert stored.problem is None  # written back as valid YAML
    wanted = dict(line.split(": ", 1) for line in header.splitlines())
    assert stored.fields["description"] == wanted["description"]
    assert wanted["name"].split(":")[0].lower().split()[0] in str(stored.fields["name"]).lower()


@pytest.mark.parametrize("description", [
    "the user is learning Clojure syntax (->>, #(...) anonymous functions, destructuring)",
    "Payment bugs are tracked in issue #123 on GitHub",
    "Deploys are announced in the #ops-deploy Slack channel",
])
def test_a_hash_in_a_description_is_text_not_a_yaml_comment(box, description):
    """Relay request 0003 (fresh11): YAML reads " #" as a comment, and "learning Clojure syntax (->>, #(...) ..."
    was stored as "learning Clojure syntax (->>," with no refusal and no turn in which to notice."""
    result = box.run("Write", {"file_path": str(box.memory_dir / "reference_x.md"),
                               "content": f"---\nname: X\ndescription: {description}\ntype: reference\n---\n"
                                          f"See the description.\n"})
    assert not result.is_error, result.content
    from memdir.frontmatter_io import parse_document

    stored = parse_document((box.memory_dir / "reference_x.md").read_text())
    assert stored.problem is None and stored.fields["description"] == description


def test_a_block_scalars_text_is_left_as_written():
    """Lines of a `key: |` block are literal already: quoting one that looks like `key: value #x` would add quotes
    to the memory's text."""
    from memdir.frontmatter_io import hashes_as_text, parse_document

    text = "---\nname: X\ndescription: |\n  see: issue #12 here\n  more # text\ntype: user\nnote: in #9\n---\nbody\n"
    fields = parse_document(hashes_as_text(text)).fields
    assert fields["description"] == "see: issue #12 here\nmore # text\n" and fields["note"] == "in #9"


def test_an_unclosed_frontmatter_is_still_refused(box):
    result = box.run("Write", {"file_path": str(box.memory_dir / "user_x.md"),
                               "content": "---\nname: x\ndescription: y\ntype: user\nbody\n"})
    assert result.is_error and "---" in result.content


def _read_back(result) -> str:
    """A Read result without its line-number prefixes: the text a model copies old_string from."""
    return "\n".join(line.split("\t", 1)[1] for line in result.content.splitlines())


def test_write_read_edit_round_trip_in_the_stored_form(box, monkeypatch):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")
    path = str(box.memory_dir / "feedback_real_db.md")
    wrote = box.run("Write", {"file_path": path, "content": GOOD.format(
        name="Real database in tests", desc="Integration tests hit a real database", type="feedback",
        body="Never mock the DB." + WHY)})
    assert not wrote.is_error and "name: real-database-in-tests" in wrote.content  # the stored form, shown
    shown = _read_back(box.run("Read", {"file_path": path}))
    assert "name: real-database-in-tests" in shown and "\n  type: feedback" in shown  # slug, type under metadata
    old = next(line for line in shown.splitlines() if line.startswith("description:"))
    edited = box.run("Edit", {"file_path": path, "old_string": old,
                              "new_string": "description: Integration tests hit a real Postgres, never mocks"})
    assert not edited.is_error, edited.content
    assert "real Postgres, never mocks" in (box.memory_dir / "feedback_real_db.md").read_text()


def test_edit_of_the_text_as_written_applies_to_the_stored_memory(box, monkeypatch):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")
    path = str(box.memory_dir / "feedback_real_db.md")
    box.run("Write", {"file_path": path, "content": GOOD.format(
        name="Real database", desc="Integration tests hit a real database", type="feedback", body="Never mock." + WHY)})
    edited = box.run("Edit", {"file_path": path, "old_string": "type: feedback", "new_string": "type: project"})
    assert not edited.is_error, edited.content
    from memdir.frontmatter_io import memory_type, parse_document

    stored = parse_document((box.memory_dir / "feedback_real_db.md").read_text())
    assert memory_type(stored.fields) == "project" and "type" not in stored.fields  # still the stored form
