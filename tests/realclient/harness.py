"""Real-client harness: the pinned `claude` CLI from npm, run against a scripted Messages API on 127.0.0.1.

Usable from any test (fixtures in conftest.py wrap them):
- `claude_code_bin()` installs a pinned `@anthropic-ai/claude-code` into a cache folder outside the
  repo (reused when present) and returns the `claude` executable;
- `run_claude()` runs `claude -p` in a temp HOME and a temp git repo (`make_sandbox`) with a timeout,
  against a `ScriptedAPI` (tests/realclient/loopback_api.py: the scripted Messages API, and what the CLI
  sends it);
- `memdir()` and `install_memdir()` run memdir as the sandbox's user.

No traffic leaves 127.0.0.1: ANTHROPIC_BASE_URL points at the fake and nonessential traffic is off.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.realclient.loopback_api import ScriptedAPI

# The version SPEC's "(seen)" facts were observed with. Bump deliberately: the suite pins what it proves.
CLAUDE_CODE_VERSION = os.environ.get("MEMDIR_CLAUDE_CODE_VERSION", "2.1.328")
PACKAGE = "@anthropic-ai/claude-code"
INSTALL_TIMEOUT = 600
RUN_TIMEOUT = 180


class HarnessUnavailable(RuntimeError):
    """node/npm or the package cannot be had here: tests skip with this message."""


# --- the pinned CLI ---------------------------------------------------------------------------

def cache_root() -> Path:
    """`$MEMDIR_TEST_CACHE`, else `$XDG_CACHE_HOME/memdir-tests`, else the real user's ~/.cache/memdir-tests.

    The real home comes from the password database: tests run with a temporary HOME.
    """
    if os.environ.get("MEMDIR_TEST_CACHE"):
        return Path(os.environ["MEMDIR_TEST_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    return Path(base) / "memdir-tests"


def claude_code_bin(version: str = CLAUDE_CODE_VERSION) -> Path:
    """The `claude` executable of the pinned version, installing it from npm on first use."""
    target = cache_root() / f"claude-code-{version}"
    binary = target / "node_modules" / ".bin" / "claude"
    if _works(binary, version):
        return binary
    if not shutil.which("npm") or not shutil.which("node"):
        raise HarnessUnavailable("node/npm not found: the real-client suite needs them")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        done = subprocess.run(
            ["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--loglevel=error",
             f"{PACKAGE}@{version}"],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT, cwd=staging,
        )
        if done.returncode != 0:
            raise HarnessUnavailable(f"npm install {PACKAGE}@{version} failed: {done.stderr.strip()[-400:]}")
        if not _works(staging / "node_modules" / ".bin" / "claude", version):
            raise HarnessUnavailable(f"{PACKAGE}@{version} installed but `claude --version` does not answer")
        if not _works(binary, version):  # another process may have finished first
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return binary


def _works(binary: Path, version: str) -> bool:
    if not binary.exists():
        return False
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.startswith(version)


# --- running `claude -p` ----------------------------------------------------------------------

@dataclass
class Sandbox:
    """A temp HOME (with its ~/.claude) and a temp git repo for one or more sessions."""

    home: Path
    repo: Path

    @property
    def config_home(self) -> Path:
        return self.home / ".claude"

    def project_dir(self) -> Path:
        """Claude Code's per-project folder for `repo` (transcripts, memory/)."""
        from memdir.paths import sanitize

        return self.config_home / "projects" / sanitize(str(self.repo.resolve()))

    @property
    def memory_dir(self) -> Path:
        return self.project_dir() / "memory"

    def transcripts(self) -> list[Path]:
        folder = self.project_dir()
        return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []


def make_sandbox(root: Path) -> Sandbox:
    home, repo = root / "home", root / "repo"
    (home / ".claude").mkdir(parents=True)
    repo.mkdir()
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "README.md").write_text("# demo\n\nA small demo project.\n")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    # Skip the first-run onboarding and trust dialog: a real user has long dismissed them.
    state = {"hasCompletedOnboarding": True, "lastOnboardingVersion": CLAUDE_CODE_VERSION,
             "projects": {str(repo.resolve()): {"hasTrustDialogAccepted": True, "allowedTools": []}}}
    (home / ".claude.json").write_text(json.dumps(state))
    return sandbox_of(home, repo)


def sandbox_of(home: Path, repo: Path) -> Sandbox:
    return Sandbox(home=home, repo=repo)


# Variables of the machine (or of an enclosing Claude Code session) that must not reach the child.
_SCRUB_PREFIXES = ("ANTHROPIC_", "CLAUDE", "MEMDIR_", "OTEL_", "AWS_", "GOOGLE_", "VERTEX")


def claude_env(sandbox: Sandbox, api: ScriptedAPI, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    env.update({
        "HOME": str(sandbox.home),
        "XDG_CONFIG_HOME": str(sandbox.home / ".config"),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-loopback-tests",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "MEMDIR_RECALL_SERVER": "0",
        # memdir's hooks inherit this environment, key and base URL included: without this they would
        # call the fake API too. Offline engines keep a session deterministic; a test that scripts
        # `memdir_reply` passes env={"MEMDIR_ENGINE": "llm"}.
        "MEMDIR_ENGINE": "offline",
    })
    env.update(extra or {})
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> dict | list:
        return json.loads(self.stdout)


def run_claude(sandbox: Sandbox, api: ScriptedAPI, prompt: str, *args: str, env: dict[str, str] | None = None,
               timeout: float = RUN_TIMEOUT, binary: Path | None = None) -> Run:
    """`claude -p PROMPT ARGS...` in the sandbox's repo; raises on timeout (the child is killed)."""
    binary = binary or claude_code_bin()
    argv = [str(binary), "-p", prompt, "--output-format", "json", *args]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=sandbox.repo, env=claude_env(sandbox, api, env), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def wait_for(predicate: Callable[[], object], timeout: float = 60.0, interval: float = 0.25):
    """Poll until `predicate()` is truthy (returns it) or raise TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout:.0f}s")
        time.sleep(interval)


# --- memdir in the sandbox --------------------------------------------------------------------

def memdir_bin() -> Path:
    """The `memdir` of the environment running the tests (the worktree's venv in development and CI)."""
    import sys

    return Path(sys.executable).with_name("memdir")


def memdir(sandbox: Sandbox, *args: str, env: dict[str, str] | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `memdir ARGS...` as the sandbox's user (its HOME), in its repo."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    child_env.update({"HOME": str(sandbox.home), "MEMDIR_RECALL_SERVER": "0", **(env or {})})
    return subprocess.run([str(memdir_bin()), *args], cwd=sandbox.repo, env=child_env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def install_memdir(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess:
    """`memdir install` into the sandbox's ~/.claude/settings.json; raises if it fails."""
    done = memdir(sandbox, "install", *args)
    if done.returncode != 0:
        raise RuntimeError(f"memdir install failed: {done.stderr.strip()}")
    return done
