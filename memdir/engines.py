"""Which engine runs: the Anthropic API, the user's own Claude Code login, or the offline rules.

`auto` order: an API key, base URL or another credential the SDK discovers by itself -> `llm`
(the Anthropic API); else a logged-in `claude` CLI on PATH -> `claude-code`; else `offline`.
memdir says which one it chose once per process. Kept import-light: the prompt hook calls this.
"""

from __future__ import annotations

import os
import sys

from memdir.errors import MemdirError

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

ENGINES = ("auto", "llm", "anthropic", "claude-code", "offline")
ALIASES = {"anthropic": "llm"}
_STATIC_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_FEDERATION = ("ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID")


def normalize(engine: str) -> str:
    engine = (engine or "auto").strip().lower()
    if engine not in ENGINES:
        raise MemdirError(f"engine {engine!r} is unknown; use auto, anthropic (llm), claude-code or offline")
    return ALIASES.get(engine, engine)


def _home(env) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _anthropic_config_dir(env) -> str:
    """The SDK's `<config_dir>` (ANTHROPIC_CONFIG_DIR, else ~/.config/anthropic or %APPDATA%). Strings, not
    `Path`: the prompt hook asks this, and pathlib's import is ~4.5 ms of it (issue 26)."""
    if env.get("ANTHROPIC_CONFIG_DIR"):
        return env["ANTHROPIC_CONFIG_DIR"]
    if sys.platform == "win32":
        return os.path.join(env.get("APPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Roaming"),
                            "Anthropic")
    return os.path.join(_home(env), ".config", "anthropic")


def sdk_credentials_present(env: Mapping[str, str] | None = None) -> bool:
    """Would the SDK find a credential by itself (its documented resolution order)?"""
    env = os.environ if env is None else env
    if any(env.get(k) for k in _STATIC_KEYS) or env.get("ANTHROPIC_PROFILE"):
        return True
    if all(env.get(k) for k in _FEDERATION) and (env.get("ANTHROPIC_IDENTITY_TOKEN")
                                                  or env.get("ANTHROPIC_IDENTITY_TOKEN_FILE")):
        return True
    folder = _anthropic_config_dir(env)
    return os.path.isfile(os.path.join(folder, "active_config")) or os.path.isfile(
        os.path.join(folder, "configs", "default.json"))


def llm_configured(env: Mapping[str, str] | None = None) -> bool:
    """Credentials or an endpoint (a gateway or local server may need no key) are configured."""
    env = os.environ if env is None else env
    return bool(env.get("ANTHROPIC_BASE_URL")) or sdk_credentials_present(env)


def claude_cli(env: Mapping[str, str] | None = None) -> str | None:
    """The `claude` executable memdir would run (MEMDIR_CLAUDE_CLI, else PATH), or None."""
    env = os.environ if env is None else env
    explicit = env.get("MEMDIR_CLAUDE_CLI")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    import shutil  # here, not at the top: shutil brings bz2 and lzma into every hook that reads settings

    return shutil.which("claude", path=env.get("PATH"))


def claude_logged_in(env: Mapping[str, str] | None = None) -> bool:
    """A Claude Code login exists: an OAuth token in the environment, the credentials file, or the
    account recorded in Claude Code's global config (macOS keeps the token itself in the keychain)."""
    env = os.environ if env is None else env
    if env.get("CLAUDE_CODE_OAUTH_TOKEN"):
        return True
    home = _home(env)
    config_dir = (os.path.expanduser(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR")
                  else os.path.join(home, ".claude"))
    if os.path.isfile(os.path.join(config_dir, ".credentials.json")):
        return True
    for candidate in (os.path.join(config_dir, ".claude.json"), os.path.join(home, ".claude.json")):
        try:
            with open(candidate, "rb") as handle:
                if b'"oauthAccount"' in handle.read(4 << 20):  # bounded: this file also holds history
                    return True
        except OSError:
            continue
    return False


def claude_code_available(env: Mapping[str, str] | None = None) -> bool:
    return claude_cli(env) is not None and claude_logged_in(env)


def recall_engine(requested: str, env: Mapping[str, str] | None = None) -> str:
    """The engine recall runs for `requested`: choose_engine's, except that auto never picks claude-code
    for recall (a CLI start per prompt costs seconds, past the prompt hook's budget, and the user's plan);
    `--engine claude-code` asks for it explicitly. The one rule for the hook, the warm server resolving an
    early question, and recall itself: the hook sent the server the engine auto had resolved to, and the
    server, told claude-code outright, started the CLI on every prompt."""
    chosen = choose_engine(requested, env, quiet=True)
    return "offline" if chosen == "claude-code" and normalize(requested) == "auto" else chosen


def prompt_engine(requested: str, env: Mapping[str, str] | None = None) -> str:
    """The engine the prompt hook's recall runs, decided by the hook and by the warm server resolving its early
    question alike: recall_engine's, but never claude-code, even asked for outright (for extraction): a CLI
    start per prompt outlasts the hook's wait, so the server ran it for an answer already given offline."""
    chosen = recall_engine(requested, env)
    return "offline" if chosen == "claude-code" else chosen


_said: set[str] = set()
_notice_shown = False  # tests reset this to stand in for a new process


def _say_once(message: str, key: str) -> None:
    """Say which engine runs the first time only: once per process, and once per user across
    processes (a marker per engine under memdir's config folder), so it is not repeated on every
    command but is said again when the choice changes."""
    global _notice_shown
    if message in _said or _notice_shown:
        return
    _said.add(message)
    _notice_shown = True
    try:
        from memdir import constants as C
        from memdir.paths import config_home

        marker = config_home() / "memdir" / f"{C.OFFLINE_NOTICE_MARKER}-{key}"
        if marker.exists():
            return
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(message + "\n", encoding="utf-8")
    except OSError:
        pass  # cannot remember that it was said: saying it again is the lesser harm
    print(f"memdir: {message} (said once)", file=sys.stderr)


def choose_engine(requested: str, env: Mapping[str, str] | None = None, *, quiet: bool = False) -> str:
    """The engine to run for `requested` ("llm", "claude-code" or "offline"); auto says its choice
    once per process on stderr unless `quiet`."""
    env = os.environ if env is None else env
    requested = normalize(requested)
    if requested == "llm" and not llm_configured(env):
        raise MemdirError("--engine anthropic needs ANTHROPIC_API_KEY, an SDK credentials profile or "
                          "ANTHROPIC_BASE_URL; use --engine claude-code or --engine offline")
    if requested == "claude-code" and claude_cli(env) is None:
        raise MemdirError("--engine claude-code needs the `claude` CLI on PATH (or MEMDIR_CLAUDE_CLI); "
                          "install Claude Code and run `claude` once to log in, or use --engine offline")
    if requested != "auto":
        return requested
    if llm_configured(env):
        chosen, why = "llm", "using the Anthropic API (credentials or ANTHROPIC_BASE_URL found)"
    elif claude_code_available(env):
        chosen, why = "claude-code", "no API key; using your Claude Code login through the `claude` CLI"
    else:
        chosen, why = "offline", "no ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL or Claude Code login; using the offline engines"
    if not quiet:
        _say_once(why, chosen)
    return chosen
