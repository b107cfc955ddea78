"""The Python API and the memory-tool backend on a copy of a real memory folder (shared/realdata)."""

from __future__ import annotations

import shutil

import pytest

import memdir
from memdir.entry.memory_tool import MemdirMemoryTool
from memdir.index import entry_file, linked_files

FOLDER = "memory-folders/application-pipeline"


@pytest.fixture
def real_folder(realdata, tmp_path):
    source = realdata / FOLDER
    if not source.is_dir():
        pytest.skip(f"{source} is not in this copy of the real data")
    return shutil.copytree(source, tmp_path / "memory")


def _hand_written(index: str) -> list[str]:
    return [line for line in index.splitlines() if entry_file(line) is None]


def test_api_sees_every_real_memory_and_recalls_the_right_one(real_folder):
    files = sorted(p.name for p in real_folder.glob("*.md") if p.name != "MEMORY.md")
    assert sorted(i.file for i in memdir.list_memories(folder=real_folder)) == files
    answer = memdir.recall("draft a resume cover letter for the NYC role", folder=real_folder, engine="offline")
    assert answer.memories[0].file == "feedback_cover_letter_quality.md"
    doc = memdir.read("feedback_cover_letter_quality.md", folder=real_folder)
    assert doc.text == (real_folder / "feedback_cover_letter_quality.md").read_text()


def test_memory_tool_edits_a_real_memory_and_keeps_the_hand_written_index(real_folder):
    tool = MemdirMemoryTool(real_folder)
    index_before = (real_folder / "MEMORY.md").read_text()
    listing = tool.call({"command": "view", "path": "/memories"})
    assert all(f"/memories/{p.name}" in listing for p in real_folder.glob("*.md"))

    path = real_folder / "feedback_never_defer_to_human.md"
    before = path.read_text()
    line = next(text for text in before.split("---", 2)[2].splitlines() if len(text.strip()) > 20 and before.count(text) == 1)
    tool.call({"command": "str_replace", "path": "/memories/feedback_never_defer_to_human.md",
               "old_str": line, "new_str": line + " (confirmed again)"})
    after = path.read_text()
    assert after.split("---", 2)[2] == before.split("---", 2)[2].replace(line, line + " (confirmed again)")

    tool.call({"command": "rename", "old_path": "/memories/feedback_never_defer_to_human.md",
               "new_path": "/memories/feedback_act_without_asking.md"})
    index_after = (real_folder / "MEMORY.md").read_text()
    assert _hand_written(index_after) == _hand_written(index_before)  # a person's lines stay as they were
    assert "feedback_act_without_asking.md" in linked_files(index_after)
    assert "feedback_never_defer_to_human.md" not in linked_files(index_after)
