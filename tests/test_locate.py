"""memdir.locate resolves folders in plain strings (no pathlib on the hook path, issue 26): the same folders,
spelled the same, as the pathlib code it replaced. The reference below is that code, kept here as it was."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings, strategies as st

from memdir import enablement, locate, paths
from tests.git_repos import bare_repository, git


@given(st.text(alphabet="/.ab~ ", max_size=16))
@settings(max_examples=400, deadline=None)
def test_clean_spells_a_path_as_pathlib_does(raw):
    assert locate.clean(raw) == str(PurePosixPath(raw))


def _reference_git_root(start: Path) -> Path | None:
    """memdir.paths.canonical_git_root before memdir.locate (pathlib), as the reference, with Claude Code's
    worktree checks."""
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
            # Claude Code's checks since (resolveCanonicalRoot): the gitdir lies in the common dir's worktrees/ and
            # points back at this .git; a bare repository's worktree keys by the common dir.
            back = gitdir / "gitdir"
            if (gitdir.parent != common / "worktrees" or not back.is_file()
                    or Path(back.read_text(encoding="utf-8").strip()).resolve() != candidate / ".git"):
                return candidate
            return common.parent if common.name == ".git" else common
    return None


@pytest.fixture
def layouts(tmp_path):
    """A checkout with a subfolder, a linked worktree, a submodule, a `.git` file that is not a gitdir line,
    a relative gitdir naming another checkout's worktree (which does not point back at it), a symlinked folder
    into the checkout, and a folder outside any repository."""
    repo = tmp_path / "repo"
    (repo / "sub" / "deep").mkdir(parents=True)
    git("init", "-q", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    lib = tmp_path / "lib"
    lib.mkdir()
    git("init", "-q", cwd=lib)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=lib)
    git("submodule", "add", "-q", str(lib), "vendor/lib", cwd=repo)
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
    off = enablement.memdir_enabled(str(memory), {})
    assert not off.enabled and str(memory / ".memdir" / "config.json") in off.reason
    assert enablement.orchestkit_compat(str(memory), str(tmp_path / "repo"), {}).enabled
    # A folder config inside the repository itself is not the user's choice.
    assert not enablement.orchestkit_compat(str(memory), str(tmp_path), {}).enabled
    assert locate.decisions_dir(str(memory) + "/", str(tmp_path), compat=False) == str(memory / ".memdir" / "decisions")


def _pathlib_config_home(env: dict) -> str:
    """memdir.paths.config_home before memdir.locate (pathlib), as the reference: an error is its type's name.
    With `..` taken away as written (os.path.normpath), as Claude Code's path.join does."""
    override = env.get("CLAUDE_CONFIG_DIR", "").strip()
    try:
        return str(Path(os.path.normpath(Path(override).expanduser() if override else Path.home() / ".claude")))
    except RuntimeError as exc:
        return type(exc).__name__


def _located_config_home(env: dict) -> str:
    try:
        return locate.config_home(env)
    except RuntimeError as exc:
        return type(exc).__name__


@pytest.mark.parametrize("home", ["/", "//", "", ".", "./", "~", "rel/", "/srv/u/"])
@pytest.mark.parametrize("override", ["", "~", "~/", "~//abs", "~///abs/./x", "~nosuchuser-h13/cfg", ".", "./", "a/..",
                                      "~/.", "./~", ".//~/x", "./~nosuchuser-h13"])
def test_config_home_matches_pathlib_for_odd_homes_and_overrides(home, override, monkeypatch):
    """A `~` pathlib cannot expand (no such user, a HOME that is `~` itself) raised, and must still: a relative
    `~nosuchuser/...` would put memories in a folder named `~...` under whatever the cwd is. `~//abs` under a
    HOME of `/` is `/abs`, `./~` is `~` expanded, and a config home of `.` joins as pathlib joins (`projects`, not
    `./projects`)."""
    monkeypatch.setenv("HOME", home)
    env = {"CLAUDE_CONFIG_DIR": override}
    assert _located_config_home(env) == _pathlib_config_home(env)


@pytest.mark.parametrize("override", [".", "./", "rel/x"])
def test_default_folder_under_a_relative_config_home_is_spelled_as_pathlib_spells_it(override, tmp_path):
    env = {"CLAUDE_CONFIG_DIR": override}
    key = paths.sanitize(str(tmp_path.resolve()))
    assert locate.resolve(str(tmp_path), env).path == str(Path(override) / "projects" / key / "memory")
    assert locate.user_settings_path(env) == str(Path(override) / "settings.json")


@pytest.mark.parametrize("home", [".", "./"])
def test_relative_home_joins_as_pathlib_joins(home, monkeypatch):
    monkeypatch.setenv("HOME", home)
    assert locate.config_home({}) == str(Path.home() / ".claude") == ".claude"


@pytest.mark.parametrize("gitdir, commondir", [("gitdir: a\x00b\n", None), ("gitdir: {wt}\n", "../\x00..\n"),
                                               ("gitdir: {wt}\n", "/abs/\x00/.git\n")])
def test_a_nul_byte_in_a_dot_git_file_is_not_a_crash_nor_a_root(gitdir, commondir, tmp_path):
    """A hostile checkout's `.git` file naming a path with a NUL: os.path raised ValueError (every hook of that
    repository failed), or the repository's root became `/abs/\\x00`. It names no usable gitdir: the checkout
    is its own root."""
    worktrees = tmp_path / "main" / ".git" / "worktrees" / "wt"
    worktrees.mkdir(parents=True)
    if commondir is not None:
        (worktrees / "commondir").write_text(commondir, encoding="utf-8")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(gitdir.format(wt=worktrees), encoding="utf-8")
    assert locate.canonical_git_root(str(checkout)) == str(checkout)
    assert enablement.memory_enabled(str(checkout), {}).enabled


def test_a_config_home_spelled_with_dot_dot_is_claude_codes_folder_even_past_a_symlink(tmp_path, isolated_home,
                                                                                      monkeypatch):
    """Claude Code joins CLAUDE_CONFIG_DIR with node's path.join, which takes `..` away as written. Kept, the
    folder was another spelling: the warm server (which serves the folder normalised) answered for a folder the
    hook did not recognise, and the hook recalled on its own every prompt; past a symlink it was another folder."""
    from memdir.stages.recall.server_scope import servable_folder

    (tmp_path / "elsewhere" / "y").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path / "elsewhere" / "y", tmp_path / "a" / "x")
    project = tmp_path / "project"
    project.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "a" / "x" / ".." / ".claude"), "HOME": str(isolated_home)}
    key = paths.sanitize(str(project.resolve()))
    folder = locate.resolve(str(project), env).path
    assert folder == str(tmp_path / "a" / ".claude" / "projects" / key / "memory")
    assert locate.user_settings_path(env) == str(tmp_path / "a" / ".claude" / "settings.json")
    os.makedirs(folder)
    assert str(servable_folder(folder, env)) == folder  # the server's answer is for the hook's folder
    monkeypatch.setenv("HOME", str(tmp_path / "a" / "x" / ".."))
    assert locate.config_home({}) == str(tmp_path / "a" / ".claude")


def test_a_dot_git_file_cannot_borrow_another_projects_memory_folder(tmp_path, isolated_home):
    """A cloned repository holding a `.git` file (`gitdir: ./fake`) and `fake/commondir` naming another
    project's `.git` was keyed as that project: memdir recalled its memories into this repository's sessions
    and saved there. Claude Code checks the gitdir lies in the common dir's worktrees/ and points back; so does
    memdir now, and both key the repository as itself."""
    victim = tmp_path / "victim"
    victim.mkdir()
    git("init", "-q", cwd=victim)
    hostile = tmp_path / "hostile"
    (hostile / "fake").mkdir(parents=True)
    (hostile / "fake" / "commondir").write_text(f"{victim / '.git'}\n", encoding="utf-8")
    (hostile / "fake" / "gitdir").write_text(f"{hostile / '.git'}\n", encoding="utf-8")
    (hostile / ".git").write_text("gitdir: ./fake\n", encoding="utf-8")
    assert locate.canonical_git_root(str(hostile)) == str(hostile)
    # Placed inside the victim's worktrees/ but pointing back at another worktree: still not the victim.
    planted = victim / ".git" / "worktrees" / "planted"
    planted.mkdir(parents=True)
    (planted / "commondir").write_text("../..\n", encoding="utf-8")
    (planted / "gitdir").write_text(f"{tmp_path / 'elsewhere' / '.git'}\n", encoding="utf-8")
    (hostile / ".git").write_text(f"gitdir: {planted}\n", encoding="utf-8")
    assert locate.canonical_git_root(str(hostile)) == str(hostile)
    (planted / "gitdir").write_text(f"{hostile / '.git'}\n", encoding="utf-8")  # as `git worktree add` leaves it
    assert locate.canonical_git_root(str(hostile)) == str(victim)


def test_a_bare_repositorys_worktrees_share_the_repository_folder_as_in_claude_code(tmp_path, isolated_home):
    """Claude Code keys a bare repository's worktree by the repository itself (its common dir); memdir keyed each
    worktree by its own folder, another memory folder than Claude Code's for each."""
    app = bare_repository(tmp_path)
    git("worktree", "add", "-q", str(tmp_path / "main"), cwd=app)
    git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"), cwd=app)
    bare = str((tmp_path / "app.git").resolve())
    assert locate.canonical_git_root(str(tmp_path / "main")) == bare
    assert locate.canonical_git_root(str(tmp_path / "feature")) == bare


def test_a_decomposed_folder_name_keys_the_folder_as_claude_code_does(tmp_path, isolated_home, monkeypatch):
    """Claude Code normalises the root it keys by and its config home to NFC: `café` spelled
    e + combining accent (as HFS+ stores names) is `caf-` for it, and was `cafe-` for memdir: another folder."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "café")
    project = tmp_path / decomposed
    project.mkdir()
    key = paths.sanitize(unicodedata.normalize("NFC", os.path.realpath(project)))
    assert key.endswith("-caf-")
    assert locate.resolve(str(project), {}).path == str(isolated_home / ".claude" / "projects" / key / "memory")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / f"{decomposed}-cfg")}
    assert locate.config_home(env) == unicodedata.normalize("NFC", env["CLAUDE_CONFIG_DIR"])
