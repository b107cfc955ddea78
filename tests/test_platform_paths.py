"""A `file_path` counts as a memory write only where the transcript's own platform puts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.evals.realdata_path import sessions2
from memdir.stages.extractor.platform_paths import inside
from memdir.stages.extractor.run import main_agent_wrote_memory
from memdir.transcript import Message, read_transcript

SECOND_BRAIN_MEMORY = "C:\\Users\\eduar\\.claude\\projects\\C--Users-eduar--claude\\memory"


def _write(path: str, cwd: str | None = None) -> list[Message]:
    call = {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": path, "content": "x"}}
    return [Message("assistant", [call], cwd=cwd)]


def test_a_windows_path_is_never_joined_under_a_posix_memory_folder(tmp_path):
    memory = tmp_path / "memory"
    assert not main_agent_wrote_memory(_write("C:\\Users\\x\\.claude\\plans\\plan.md"), memory)
    assert not main_agent_wrote_memory(_write("\\\\server\\share\\memory\\a.md"), memory)
    assert not main_agent_wrote_memory(_write("plans\\plan.md", cwd="C:\\Users\\x\\.claude"), memory)


def test_relative_paths_are_read_against_the_sessions_cwd(tmp_path):
    memory = tmp_path / "proj" / "memory"
    assert main_agent_wrote_memory(_write("memory/a.md", cwd=str(tmp_path / "proj")), memory)
    assert main_agent_wrote_memory(_write("../memory/a.md"), memory, cwd=str(tmp_path / "proj" / "src"))
    assert not main_agent_wrote_memory(_write("memory/a.md", cwd=str(tmp_path / "elsewhere")), memory)
    assert not main_agent_wrote_memory(_write("memory/a.md"), memory)  # no cwd: it cannot be told, so it is not


def test_macos_and_wsl_paths():
    assert inside("/Users/x/proj/memory/a.md", None, Path("/Users/x/proj/memory"))
    assert not inside("/Users/x/proj/memory-old/a.md", None, Path("/Users/x/proj/memory"))
    wsl = Path("/mnt/c/Users/x/.claude/memory")  # memdir in WSL, the session written by Windows Claude Code
    assert inside("C:\\Users\\x\\.claude\\memory\\a.md", None, wsl)
    assert inside("c:/Users/x/.claude/memory/a.md", None, wsl)
    assert inside("a.md", "C:\\Users\\x\\.claude\\memory", wsl)
    assert not inside("D:\\Users\\x\\.claude\\memory\\a.md", None, wsl)


def test_real_windows_sessions_are_not_skipped_for_their_own_paths(realdata, tmp_path):
    windows = [p for p in sessions2(realdata) if p.name.startswith(("win-", "es-win-"))]
    assert len(windows) == 4
    for path in windows:
        read = read_transcript(path)
        assert read.cwd and read.cwd[1] == ":"
        assert not main_agent_wrote_memory(read.messages, tmp_path / "memory", read.cwd), path.name


@pytest.mark.skipif(__import__("os").name == "nt", reason="the WSL mount is a POSIX view of a Windows drive")
def test_a_real_windows_auto_memory_write_counts_when_memdir_reads_that_folder_from_wsl(realdata):
    read = read_transcript(realdata / "sessions2" / "win-second-brain-images.jsonl")
    wsl = Path("/mnt/c/" + SECOND_BRAIN_MEMORY[3:].replace("\\", "/"))
    assert main_agent_wrote_memory(read.messages, wsl, read.cwd)
