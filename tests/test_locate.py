"""memdir.locate resolves folders in plain strings (no pathlib on the hook path, issue 26): the same folders,
spelled the same, as the pathlib code it replaced. The reference below is that code, kept here as it was."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings, strategies as st

from memdir import locate, paths


@given(st.text(alphabet="/.ab~ ", max_size=16))
@settings(max_examples=400, deadline=None)
def test_clean_spells_a_path_as_pathlib_does(raw):
    assert locate.clean(raw) == str(PurePosixPath(raw))


def _reference_git_root(start: Path) -> Path | None:
    """memdir.paths.canonical_git_root before memdir.locate (pathlib), as the reference."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate
        if dot_git.is_file():
            try:
                first = dot_git.read_text(encoding="utf-8").splitlines()[0]
            except (OSError, IndexError, UnicodeDecodeError):
                return candidate
            if not first.startswith("gitdir:"):
                return candidate
            gitdir = Path(first.split(":", 1)[1].strip())
            if not gitdir.is_absolute():
                gitdir = (candidate / gitdir).resolve()
            commondir_file = gitdir / "commondir"
            if not commondir_file.is_file():
                return candidate
            common = Path(commondir_file.read_text(encoding="utf-8").strip())
            if not common.is_absolute():
                common = (gitdir / common).resolve()
            return common.parent if common.name == ".git" else candidate
    return None


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "-c", "protocol.file.allow=always", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def layouts(tmp_path):
    """A checkout with a subfolder, a linked worktree, a submodule, a `.git` file that is not a gitdir line,
    a relative gitdir, a symlinked folder into the checkout, and a folder outside any repository."""
    repo = tmp_path / "repo"
    (repo / "sub" / "deep").mkdir(parents=True)
    _git("init", "-q", cwd=repo)
    _git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    lib = tmp_path / "lib"
    lib.mkdir()
    _git("init", "-q", cwd=lib)
    _git("commit", "-q", "--allow-empty", "-m", "x", cwd=lib)
    _git("submodule", "add", "-q", str(lib), "vendor/lib", cwd=repo)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / ".git").write_text("not a gitdir line\n", encoding="utf-8")
    relative = tmp_path / "relative"
    relative.mkdir()
    (relative / ".git").write_text("gitdir: ../repo/.git/worktrees/wt\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(repo / "sub")
    outside = tmp_path / "outside" / "a"
    outside.mkdir(parents=True)
    return [repo, repo / "sub" / "deep", tmp_path / "wt", repo / "vendor" / "lib", odd, relative, tmp_path / "link",
            outside]


def test_git_roots_and_folders_match_the_pathlib_reference(layouts, isolated_home):
    for start in layouts:
        expected = _reference_git_root(start)
        assert locate.canonical_git_root(str(start)) == (None if expected is None else str(expected)), start
        assert paths.canonical_git_root(start) == expected
        root = expected or start.resolve()
        folder = locate.resolve(str(start), {"HOME": str(isolated_home)})
        assert folder.path == str(isolated_home / ".claude" / "projects" / paths.sanitize(str(root)) / "memory")
        assert paths.resolve_memory_dir(start, {"HOME": str(isolated_home)}).path == Path(folder.path)


@pytest.mark.parametrize("raw", ["~/notes/memory/", "~/notes//memory/./x", "/srv/team/../memory", "/srv//memory/"])
def test_configured_folders_are_spelled_as_pathlib_spells_them(raw, isolated_home):
    value = str(Path.home() / raw[2:]) if raw.startswith("~/") else raw
    assert locate.validate_configured_path(raw, "$MEMDIR_PATH") == str(Path(os.path.normpath(value)))


def test_config_home_from_the_environment_is_spelled_as_pathlib_spells_it(tmp_path, monkeypatch):
    env = {"CLAUDE_CONFIG_DIR": f"{tmp_path}//cfg/./"}
    assert locate.config_home(env) == str(Path(env["CLAUDE_CONFIG_DIR"]).expanduser())
    monkeypatch.setenv("HOME", f"{tmp_path}//")
    assert locate.config_home({}) == str(Path.home() / ".claude") == str(tmp_path / ".claude")


def test_memdir_switch_and_orchestkit_layout_read_in_strings(tmp_path, isolated_home):
    memory = tmp_path / "memory"
    (memory / ".memdir").mkdir(parents=True)
    (memory / ".memdir" / "config.json").write_text('{"enabled": false, "orchestkit_compat": true}', encoding="utf-8")
    off = locate.memdir_enabled(str(memory), {})
    assert not off.enabled and str(memory / ".memdir" / "config.json") in off.reason
    assert locate.orchestkit_compat(str(memory), str(tmp_path / "repo"), {}).enabled
    # A folder config inside the repository itself is not the user's choice.
    assert not locate.orchestkit_compat(str(memory), str(tmp_path), {}).enabled
    assert locate.decisions_dir(str(memory) + "/", str(tmp_path), compat=False) == str(memory / ".memdir" / "decisions")
