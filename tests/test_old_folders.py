"""`memdir doctor` names the folders memdir chose for a project before it keyed them as Claude Code does
(2026-11-27: bare repositories' worktrees, decomposed folder names, a config home spelled with `..`), when they
still hold memories memdir no longer reads: they were not lost, but nothing said where they were."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import unicodedata
from pathlib import Path

from memdir import locate
from tests.git_repos import bare_repository, git

MEMORY = "---\nname: {name}\ndescription: {name} rule\ntype: user\n---\nAlways {name}.\n"


def _memories(folder: str | Path, *names: str) -> None:
    os.makedirs(folder, exist_ok=True)
    for name in names:
        Path(folder, f"user_{name}.md").write_text(MEMORY.format(name=name), encoding="utf-8")
    Path(folder, "MEMORY.md").write_text("".join(f"- [{n}](user_{n}.md) — {n}\n" for n in names), encoding="utf-8")


def _old_folder_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if "memdir no longer reads" in line]


def _run_the_fix(line: str, capsys) -> None:
    """The command the line gives, run as the user would run it (the copy, then the index rebuild)."""
    copy, *rebuilds = line.split("`")[1::2]
    subprocess.run(copy, shell=True, check=True, timeout=30)
    from memdir.entry.cli import main

    for rebuild in rebuilds:
        assert main(shlex.split(rebuild)[1:]) == 0
    capsys.readouterr()  # the rebuilt MEMORY.md


def test_a_bare_repositorys_worktree_names_the_folder_keyed_by_its_own_root(tmp_path, cli, isolated_home, capsys):
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=bare_repository(tmp_path))
    claude = isolated_home / ".claude" / "projects"
    old = claude / locate.sanitize(str((tmp_path / "wt").resolve())) / "memory"
    new = claude / locate.sanitize(str((tmp_path / "app.git").resolve())) / "memory"
    _memories(old, "tabs", "tests")
    _memories(new, "tabs")  # one already there: not counted, never overwritten
    Path(new, "user_tabs.md").write_text(MEMORY.format(name="tabs") + "Edited since.\n", encoding="utf-8")

    code, out, _ = cli("--cwd", str(tmp_path / "wt"), "doctor")
    lines = _old_folder_lines(out)
    assert len(lines) == 1, out
    assert str(old) in lines[0] and "1 memory " in lines[0] and "bare repository" in lines[0], lines[0]
    assert "1 more have a file of the same name there" in lines[0] and "cp -Rn" in lines[0]
    assert code == 0  # a warning: the folder memdir reads is healthy
    _run_the_fix(lines[0], capsys)
    assert "Edited since." in (new / "user_tabs.md").read_text(encoding="utf-8")  # cp -n overwrote nothing
    assert (new / "user_tests.md").is_file() and (old / "user_tests.md").is_file()  # copied, not moved
    assert "user_tests.md" in (new / "MEMORY.md").read_text(encoding="utf-8")
    code, out, _ = cli("--cwd", str(tmp_path / "wt"), "doctor", "--json")
    found = [f for f in json.loads(out)["findings"] if f["code"] == "old-folder"]
    assert len(found) == 1 and "merge them by hand" in found[0]["message"]  # only the differing one is left


def test_a_decomposed_folder_name_names_the_folder_keyed_in_nfd(tmp_path, cli, isolated_home, capsys):
    project = tmp_path / unicodedata.normalize("NFD", "café")
    project.mkdir()
    claude = isolated_home / ".claude" / "projects"
    old = claude / locate.sanitize(str(project.resolve())) / "memory"
    assert old.name == "memory" and old.parent.name.endswith("-cafe-")
    _memories(old, "tabs", "tests")
    _memories(old / "team", "docs")
    code, out, _ = cli("--cwd", str(project), "doctor")
    lines = _old_folder_lines(out)
    assert len(lines) == 1 and str(old) in lines[0] and "3 memories" in lines[0], out
    assert "NFD" in lines[0] and "memdir index --rebuild --dir" in lines[0] and "--rebuild --team" in lines[0]
    _run_the_fix(lines[0], capsys)
    assert _old_folder_lines(cli("--cwd", str(project), "doctor")[1]) == []  # copied: nothing left to say
    listed = cli("--cwd", str(project), "list", "--json")[1]
    assert {m["name"] for m in json.loads(listed)} >= {"tabs", "tests"}
    team = cli("--cwd", str(project), "list", "--team", "--json")[1]
    assert {m["name"] for m in json.loads(team)} == {"docs"}


def test_a_config_home_spelled_with_dot_dot_past_a_symlink_names_the_old_folder(tmp_path, cli, monkeypatch):
    (tmp_path / "elsewhere" / "y").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path / "elsewhere" / "y", tmp_path / "a" / "x")
    project = tmp_path / "project"
    project.mkdir()
    spelled = str(tmp_path / "a" / "x" / ".." / ".claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", spelled)
    key = locate.sanitize(str(project.resolve()))
    old = os.path.join(spelled, "projects", key, "memory")  # the kernel reads it as elsewhere/.claude/...
    _memories(old, "tabs")
    code, out, _ = cli("--cwd", str(project), "doctor")
    lines = _old_folder_lines(out)
    assert len(lines) == 1 and old in lines[0] and "1 memory " in lines[0] and "`..` kept" in lines[0], out
    assert str(tmp_path / "a" / ".claude" / "projects" / key / "memory") in lines[0]

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "b" / "x" / ".." / ".claude"))  # x a real folder
    (tmp_path / "b" / "x").mkdir(parents=True)
    _memories(tmp_path / "b" / ".claude" / "projects" / key / "memory", "tabs")
    assert _old_folder_lines(cli("--cwd", str(project), "doctor")[1]) == []  # the same folder, spelled twice
