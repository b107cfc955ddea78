"""Memory files in Claude Code 2.1.x's form (SPEC §2), read from files the real CLI wrote.

tests/fixtures/claude_code_2_1_328/ was captured from the real `claude` 2.1.328 with the
tests/realclient harness: its Write tool stamped the memory file (node_type, originSessionId,
modified under metadata) and the transcripts are as the CLI wrote them (sandbox paths replaced).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memdir.frontmatter_io import _yaml_fields, memory_type, parse_header
from memdir.model import Memory, form_for_version, kebab_slug
from memdir.scan import scan
from memdir.store import MemoryStore
from memdir.transcript import read_transcript

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code_2_1_328"
LEGACY = "---\nname: Terse replies\ndescription: No recap at the end\ntype: feedback\n---\nNo recap.\n\n**Why:** x\n**How to apply:** y\n"


@pytest.fixture
def cli_folder(tmp_path) -> Path:
    folder = tmp_path / "project" / "memory"
    shutil.copytree(FIXTURES / "memory", folder)
    return folder


@pytest.fixture
def newest_form(monkeypatch):
    monkeypatch.delenv("MEMDIR_MEMORY_FORM", raising=False)
    monkeypatch.setenv("PATH", "")  # no `claude` on PATH: the version comes from transcripts or the default


def test_a_file_the_real_cli_wrote_is_typed_everywhere(cli_folder, cli):
    (header,) = scan(cli_folder).headers
    assert (header.type, header.name, header.problem) == ("feedback", "no-emoji", None)
    memory = MemoryStore(cli_folder).load("feedback_no_emoji.md")
    assert memory.form == "current" and memory.type.value == "feedback"
    assert memory.extra["metadata"]["originSessionId"] and "[[commit-style]]" in memory.body
    code, out, _ = cli("--dir", str(cli_folder), "list")
    assert code == 0 and out.startswith("feedback  feedback_no_emoji.md")
    code, out, err = cli("--dir", str(cli_folder), "doctor")
    assert code == 0, out + err


def test_editing_a_cli_file_keeps_its_form_links_and_metadata(cli_folder, newest_form):
    store = MemoryStore(cli_folder)
    memory = store.load("feedback_no_emoji.md")
    origin = memory.extra["metadata"]["originSessionId"]
    store.save(memory.model_copy(update={"description": "No emoji anywhere in commit messages"}),
               rel_path="feedback_no_emoji.md")
    text = (cli_folder / "feedback_no_emoji.md").read_text()
    assert "name: no-emoji\ndescription: No emoji anywhere in commit messages\nmetadata:\n  node_type: memory\n" in text
    assert "  type: feedback\n" in text and f"  originSessionId: {origin}\n" in text and "  modified: " in text
    assert "see also [[commit-style]]." in text and "\ntype:" not in text


def test_a_legacy_file_stays_legacy_when_edited(tmp_path, newest_form):
    (tmp_path / "feedback_terse.md").write_text(LEGACY)
    store = MemoryStore(tmp_path)
    memory = store.load("feedback_terse.md")
    assert memory.form == "legacy"
    store.save(memory.model_copy(update={"body": memory.body + "\nSee [[review-style]]."}), rel_path="feedback_terse.md")
    text = (tmp_path / "feedback_terse.md").read_text()
    assert "name: Terse replies\n" in text and "\ntype: feedback\n" in text and "metadata" not in text
    assert "See [[review-style]]." in text


def test_new_files_use_the_newest_form_by_default(tmp_path, newest_form):
    store = MemoryStore(tmp_path / "project" / "memory")
    saved = store.save(Memory(name="Use pnpm, not npm", description="Use pnpm", type="feedback",
                              body="Use pnpm.\n\n**Why:** lockfile\n**How to apply:** pnpm install"))
    text = saved.path.read_text()
    assert text.startswith("---\nname: use-pnpm-not-npm\ndescription: Use pnpm\nmetadata:\n  node_type: memory\n  type: feedback\n")
    assert store.find("Use pnpm, not npm").rel_path == saved.rel_path  # the name as typed still finds it
    assert scan(store.root).headers[0].type == "feedback"


@pytest.mark.parametrize("version, form", [("2.1.328", "current"), ("2.1.0", "current"), ("2.0.77", "legacy"),
                                           ("1.0.24", "legacy"), (None, "current"), ("garbage", "current")])
def test_the_form_follows_the_claude_code_version(version, form):
    assert form_for_version(version) == form


def test_the_version_comes_from_the_projects_transcripts(tmp_path, newest_form):
    project = tmp_path / "project"
    project.mkdir()
    line = {"type": "user", "version": "1.0.24", "message": {"role": "user", "content": "hi"}}
    (project / "old-session.jsonl").write_text(json.dumps(line) + "\n")
    saved = MemoryStore(project / "memory").save(Memory(name="Alice", description="Alice leads payments", type="user"))
    text = saved.path.read_text()
    assert "\ntype: user\n" in text and "metadata" not in text and "name: Alice\n" in text


def test_fast_header_path_reads_nested_metadata_like_yaml():
    text = (FIXTURES / "memory" / "feedback_no_emoji.md").read_text()
    fast = parse_header(text).fields
    header = text.split("---\n")[1].rstrip("\n").split("\n")
    slow, problem = _yaml_fields(header)
    assert problem is None and memory_type(fast) == memory_type(slow) == "feedback"
    assert fast["metadata"]["originSessionId"] == slow["metadata"]["originSessionId"]
    assert memory_type({"type": "user", "metadata": {"type": "feedback"}}) == "user"
    assert kebab_slug("Don't use npm!") == "dont-use-npm"


def test_transcripts_the_real_cli_wrote_parse_with_no_unknown_line_types():
    for path in sorted(FIXTURES.glob("session*.jsonl")):
        read = read_transcript(path)
        assert read.invalid_lines == 0 and dict(read.unknown_types) == {}, (path.name, dict(read.unknown_types))
        assert [m.user_text() for m in read.messages if m.user_text()]  # the typed prompt is there
    first = read_transcript(FIXTURES / "session1.jsonl")
    said = [m.user_text() for m in first.messages if m.user_text()]
    assert said == ["Don't use emoji in commit messages, because the changelog tool chokes on them. Remember that."]


def test_every_realdata_transcript_parses_with_no_unknown_line_types(realdata):
    unknown: dict[str, int] = {}
    paths = sorted((realdata / "claude-code-log").rglob("*.jsonl"))
    for path in paths:
        for kind, count in read_transcript(path).unknown_types.items():
            unknown[f"{path.name}:{kind}"] = count
    assert len(paths) >= 29 and unknown == {}


def test_an_unchanged_save_keeps_the_bytes_and_a_changed_one_restamps(cli_folder, newest_form):
    store = MemoryStore(cli_folder)
    before = (cli_folder / "feedback_no_emoji.md").read_text()
    memory = store.load("feedback_no_emoji.md")
    store.save(memory, rel_path="feedback_no_emoji.md")
    assert (cli_folder / "feedback_no_emoji.md").read_text() == before  # no new stamp, no history entry
    store.save(memory.model_copy(update={"body": memory.body + "\nAlso in tags."}), rel_path="feedback_no_emoji.md")
    after = (cli_folder / "feedback_no_emoji.md").read_text()
    stamp = lambda text: next(line for line in text.splitlines() if "modified:" in line)  # noqa: E731
    assert stamp(after) != stamp(before) and "Also in tags." in after


def test_a_new_file_written_in_the_old_form_is_saved_in_the_newest(tmp_path, newest_form):
    from memdir.frontmatter_io import parse_document
    from memdir.model import memory_from_fields

    parsed = parse_document(LEGACY)  # e.g. what an extraction model wrote for a new file
    memory = memory_from_fields(parsed.fields, parsed.body, "new")
    saved = MemoryStore(tmp_path).save(memory, rel_path="feedback_terse.md")
    text = saved.path.read_text()
    assert text.startswith("---\nname: terse-replies\n") and "  type: feedback\n" in text and "\ntype:" not in text


def test_an_edit_in_the_other_form_keeps_the_files_form(cli_folder, newest_form):
    from memdir.frontmatter_io import parse_document
    from memdir.model import memory_from_fields

    rewritten = ("---\nname: no-emoji\ndescription: No emoji in commit messages or tags\ntype: feedback\n---\n"
                 "Never put emoji in commit messages or tags; see also [[commit-style]].\n\n**Why:** x\n**How to apply:** y\n")
    parsed = parse_document(rewritten)  # an extraction model rewrote it in the old form
    MemoryStore(cli_folder).save(memory_from_fields(parsed.fields, parsed.body, "x"), rel_path="feedback_no_emoji.md")
    text = (cli_folder / "feedback_no_emoji.md").read_text()
    assert "metadata:\n  node_type: memory\n  type: feedback\n" in text and "\ntype:" not in text
    assert "or tags; see also [[commit-style]]." in text
