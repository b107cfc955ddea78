from __future__ import annotations

import ctypes
import json
import subprocess
from pathlib import Path

import pytest

from memdir.errors import MemdirError
from memdir.locate import _djb2_base36
from memdir.paths import (
    agent_memory_dir,
    canonical_git_root,
    config_home,
    memory_enabled,
    resolve_memory_dir,
    safe_team_path,
    sanitize,
    validate_configured_path,
)


def _js_simple_hash(text: str) -> str:
    """Independent reference: JS `(h << 5) - h + c | 0` with a real int32, then base 36."""
    h = ctypes.c_int32(0)
    for unit in text.encode("utf-16-le").hex(" ", 2).split():
        code = int(unit[2:4] + unit[0:2], 16)
        h = ctypes.c_int32((h.value << 5) - h.value + code)
    n, digits, out = abs(h.value), "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def test_sanitize_replaces_every_non_alphanumeric():
    assert sanitize("/Users/alice/my-app") == "-Users-alice-my-app"
    assert sanitize("/home/bob/proj_x.v2") == "-home-bob-proj-x-v2"
    assert sanitize("C:\\Users\\é") == "C--Users--"


def test_djb2_matches_known_vector_and_js_semantics():
    assert _djb2_base36("ab") == "2e9"  # 97*31 + 98 = 3105 = 2e9 in base 36
    long = "/very/" + "deep-folder/" * 40 + "é-ü"
    assert _djb2_base36(long) == _js_simple_hash(long)


def test_sanitize_over_200_chars_is_truncated_with_stable_hash():
    path = "/" + "/".join(f"folder{i}" for i in range(40))
    key = sanitize(path)
    assert len(key) > 200
    assert key[:200] == sanitize(path[:200])[:200]
    assert key == sanitize(path)  # stable
    assert key[200] == "-" and key[201:] == _js_simple_hash(path)
    assert sanitize(path + "x") != key


def test_config_home_honours_env(monkeypatch, tmp_path, isolated_home):
    assert config_home() == isolated_home / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert config_home() == tmp_path / "cfg"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_worktrees_share_the_main_worktree_folder(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    (repo / "sub").mkdir()
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    assert canonical_git_root(tmp_path / "wt") == repo.resolve()
    assert canonical_git_root(repo / "sub") == repo.resolve()
    main = resolve_memory_dir(repo / "sub").path
    assert resolve_memory_dir(tmp_path / "wt").path == main
    assert main.name == "memory" and main.parent.name == sanitize(str(repo.resolve()))


def test_outside_git_uses_the_folder_itself(tmp_path):
    resolution = resolve_memory_dir(tmp_path)
    assert resolution.path.parent.name == sanitize(str(tmp_path.resolve()))
    assert "folder" in resolution.rule


@pytest.mark.parametrize(
    "raw, why",
    [
        ("relative/path", "not an absolute path"),
        ("/a", "too short"),
        ("C:", "drive root"),
        ("C:\\", "drive root"),
        ("\\\\server\\share", "UNC"),
        ("//server/share", "UNC"),
        ("/tmp/mem\x00ory", "NUL"),
        ("~", "home folder"),
        ("~/", "home folder"),
        ("~/..", "home folder"),
        ("~other/memory", "not an absolute path"),
        ("/", "too short"),
    ],
)
def test_configured_path_rejections(raw, why):
    with pytest.raises(MemdirError) as err:
        validate_configured_path(raw, "$MEMDIR_PATH")
    message = str(err.value)
    assert why in message and "$MEMDIR_PATH" in message and "\n" not in message


def test_configured_path_expands_only_tilde_slash(isolated_home):
    assert validate_configured_path("~/notes/memory", "x") == isolated_home / "notes" / "memory"
    assert validate_configured_path("/srv/memory", "x") == Path("/srv/memory")


def test_resolution_order_env_then_user_settings_then_default(monkeypatch, tmp_path, isolated_home):
    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"autoMemoryDirectory": "~/from-settings"}))
    r = resolve_memory_dir(tmp_path)
    assert r.path == isolated_home / "from-settings" and "autoMemoryDirectory" in r.rule
    monkeypatch.setenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", str(tmp_path / "cowork"))
    assert resolve_memory_dir(tmp_path).path == tmp_path / "cowork"
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path / "mine"))
    r = resolve_memory_dir(tmp_path)
    assert r.path == tmp_path / "mine" and "MEMDIR_PATH" in r.rule


def test_project_settings_cannot_redirect_memory(tmp_path, isolated_home):
    repo = tmp_path / "evil"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".git").mkdir()
    for name in ("settings.json", "settings.local.json"):
        (repo / ".claude" / name).write_text(json.dumps({"autoMemoryDirectory": str(isolated_home / ".ssh")}))
    resolved = resolve_memory_dir(repo).path
    assert ".ssh" not in str(resolved)
    assert resolved == isolated_home / ".claude" / "projects" / sanitize(str(repo.resolve())) / "memory"


def test_invalid_user_settings_is_one_clear_line(tmp_path, isolated_home):
    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    with pytest.raises(MemdirError, match=r"settings.json: invalid JSON at line 1"):
        resolve_memory_dir(tmp_path)


@pytest.mark.parametrize(
    "env, settings, enabled",
    [
        ({}, {}, True),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, {}, False),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "TRUE"}, {}, False),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "on"}, {}, False),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}, {"autoMemoryEnabled": False}, True),  # falsy forces ON
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "false"}, {}, True),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": ""}, {"autoMemoryEnabled": False}, False),  # empty is unset
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " "}, {"autoMemoryEnabled": False}, False),
        ({"CLAUDE_CODE_SIMPLE": "1"}, {}, False),
        ({}, {"autoMemoryEnabled": False}, False),
        ({}, {"autoMemoryEnabled": True}, True),
    ],
)
def test_enable_chain(env, settings, enabled, tmp_path, isolated_home):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))
    result = memory_enabled(tmp_path, env={"HOME": str(isolated_home), **env})
    assert result.enabled is enabled, result.reason


def test_repo_settings_may_disable(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
    assert memory_enabled(tmp_path).enabled is False


@pytest.mark.parametrize(
    "key",
    ["a\x00b.md", "a\\b.md", "/etc/passwd", "../x.md", "notes/../../x.md", "%2e%2e/x.md", "%252e%252e/x.md",
     "\uff0e\uff0e/x.md", "C:/x.md"],
)
def test_team_keys_that_escape_are_refused(key, tmp_path):
    with pytest.raises(MemdirError):
        safe_team_path(tmp_path, key)


def test_team_symlink_escape_is_refused(tmp_path):
    (tmp_path / "team").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "team" / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(MemdirError, match="outside the team folder"):
        safe_team_path(tmp_path, "link/x.md")
    assert safe_team_path(tmp_path, "notes/deploys.md") == tmp_path / "team" / "notes" / "deploys.md"


def test_agent_memory_scopes(tmp_path, isolated_home):
    assert agent_memory_dir("code:reviewer", "user", tmp_path) == isolated_home / ".claude/agent-memory/code-reviewer"
    assert agent_memory_dir("x", "project", tmp_path) == tmp_path / ".claude/agent-memory/x"
    assert agent_memory_dir("x", "local", tmp_path) == tmp_path / ".claude/agent-memory-local/x"
    with pytest.raises(MemdirError):
        agent_memory_dir("../x", "user", tmp_path)
    with pytest.raises(MemdirError):
        agent_memory_dir("x", "global", tmp_path)


def test_project_settings_are_read_in_the_folder_claude_code_started_in_not_the_repository_root(tmp_path):
    """Claude Code reads `.claude/settings.json` (and `.local`) in the folder it starts in: started in a subfolder of
    a repository, the root's `autoMemoryEnabled: false` does not apply, the subfolder's does. For its hooks it names
    that folder in CLAUDE_PROJECT_DIR, which decides over the hook's current folder."""
    repo, sub = tmp_path / "repo", tmp_path / "repo" / "sub"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
    (sub / ".claude").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home")}
    assert memory_enabled(repo, env=env).enabled is False
    assert memory_enabled(sub, env=env).enabled is True
    (sub / ".claude" / "settings.local.json").write_text('{"autoMemoryEnabled": false}')
    assert memory_enabled(sub, env=env).enabled is False
    assert memory_enabled(sub / ".claude", env={**env, "CLAUDE_PROJECT_DIR": str(sub)}).enabled is False
    assert memory_enabled(sub, env={**env, "CLAUDE_PROJECT_DIR": str(tmp_path)}).enabled is True
