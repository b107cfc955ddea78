"""Claude Code hook entry points: `memdir hook prompt|stop|session-start` (SPEC §6).

A memory hook must never get in the user's way: whatever goes wrong, it prints nothing, exits 0
and logs the reason to `.memdir/hook.log`. It never exits 2 (that would block the prompt, or make
Claude continue after Stop).

The payload is parsed into a light record rather than a pydantic model: these run on every prompt and
turn, and pydantic's import and model build (~190 ms here) exceed the prompt hook's whole budget.
"""

from __future__ import annotations

import json
import os
import sys
import time

from memdir import constants as C
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms; pathlib ~8 ms (imported below only where needed)
if TYPE_CHECKING:
    from pathlib import Path

EVENTS = {"prompt": "UserPromptSubmit", "stop": "Stop", "session-start": "SessionStart"}


class HookInputError(ValueError):
    pass


class HookPayload(FrozenRecord):
    __slots__ = ("session_id", "transcript_path", "cwd", "hook_event_name", "prompt", "source", "stop_hook_active")
    _defaults = {"prompt": None, "source": None, "stop_hook_active": False}

    @classmethod
    def parse(cls, text: str) -> HookPayload:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise HookInputError(f"stdin is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise HookInputError("stdin JSON is not an object")

        def text_field(name: str) -> str | None:
            value = data.get(name)
            if value is None:
                return None
            if not isinstance(value, str):
                raise HookInputError(f"field '{name}' must be a string")
            return value

        return cls(
            session_id=text_field("session_id"),
            transcript_path=text_field("transcript_path"),
            cwd=text_field("cwd"),
            hook_event_name=text_field("hook_event_name"),
            prompt=text_field("prompt"),
            source=text_field("source"),
            stop_hook_active=bool(data.get("stop_hook_active", False)),
        )


def log(memory_dir: Path | None, event: str, message: str) -> None:
    """Append one line to the hook log; never raises."""
    try:
        from memdir.paths import config_home

        target = (memory_dir / C.STATE_DIRNAME if memory_dir else config_home() / "memdir") / "hook.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {event}: {message}\n")
    except Exception:
        pass


def _memory_dir_for(payload: HookPayload) -> Path | None:
    """The folder for this payload's project, or None when memory is switched off there."""
    from pathlib import Path

    from memdir.paths import memory_enabled, resolve_memory_dir

    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    if not memory_enabled(cwd).enabled:
        return None
    return resolve_memory_dir(cwd).path


def _recent_tools(payload: HookPayload) -> list[str]:
    if not payload.transcript_path:
        return []
    from pathlib import Path

    from memdir.transcript import read_transcript, recent_tool_names

    try:
        return recent_tool_names(read_transcript(Path(payload.transcript_path), last_n=10).messages)
    except Exception:
        return []


def stop_output(payload: HookPayload) -> str:
    """Start the background worker and return at once: the user never waits for extraction.

    posix_spawn rather than subprocess: this hook runs after every turn with a budget of twice a
    bare `python -c` start, and importing subprocess (~9 ms) is a third of that.
    """
    request = json.dumps({"session_id": payload.session_id, "transcript": payload.transcript_path, "cwd": payload.cwd})
    argv = [sys.executable, "-m", "extractor.worker", request]
    workdir = payload.cwd if payload.cwd and os.path.isdir(payload.cwd) else None
    if hasattr(os, "posix_spawn"):
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        env = dict(os.environ)
        if workdir:
            # posix_spawn has no cwd argument: the worker changes directory itself.
            env["MEMDIR_WORKER_CWD"] = workdir
        os.posix_spawn(sys.executable, argv, env, file_actions=devnull, setsid=True)
    else:  # Windows
        import subprocess

        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "DETACHED_PROCESS", 0)
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, cwd=workdir, creationflags=flags)
    return ""


def _saved_notice(memory_dir: Path, prefix: str = "Memory saved") -> str | None:
    from memdir.notices import take_notices

    saved = take_notices(memory_dir)
    return f"{prefix}: {', '.join(saved)}" if saved else None


def session_start_output(payload: HookPayload, include_index: bool = True) -> str:
    """Memory instructions plus MEMORY.md (capped as a session loads it) as additionalContext.

    `--no-index` leaves MEMORY.md out for users whose Claude Code auto-memory already loads it.
    """
    memory_dir = _memory_dir_for(payload)
    if memory_dir is None:
        return ""
    from memdir import index as index_text
    from prompts import render

    index_file = memory_dir / C.INDEX_NAME
    index = index_file.read_text(encoding="utf-8-sig") if index_file.exists() else ""
    context = render("session_instructions.j2", memory_dir=str(memory_dir), include_index=include_index,
                     index=index_text.load_for_context(index) if include_index else "")
    output: dict = {"hookSpecificOutput": {"hookEventName": EVENTS["session-start"], "additionalContext": context}}
    notice = _saved_notice(memory_dir, "Memory saved since last session") if memory_dir.is_dir() else None
    if notice:
        output["systemMessage"] = notice
    return json.dumps(output)


def prompt_output(payload: HookPayload) -> str:
    """The JSON to print for a UserPromptSubmit payload ("" for nothing to add)."""
    prompt = (payload.prompt or "").strip()
    if not any(ch.isspace() for ch in prompt):
        return ""  # "continue", "y", a slash command: nothing to recall for (notices wait for the next one)
    memory_dir = _memory_dir_for(payload)
    if memory_dir is None or not memory_dir.is_dir():
        return ""
    from recall.api import recall

    notice = _saved_notice(memory_dir)
    tools = _recent_tools(payload)
    use_server = _use_recall_server()
    context = _recall_via_server(memory_dir, prompt, tools, payload.session_id, payload.cwd) if use_server else None
    if context is None:
        # With the server in use, this process only ever runs the offline engine (no SDK import).
        # Verification against the code runs in the server only: its scan does not fit this process's budget.
        engine = "offline" if use_server else None
        result = recall(memory_dir, prompt, tools=tools, session_id=payload.session_id, engine=engine)
        for line in result.debug:
            log(memory_dir, "prompt", line)
        context = result.context
    output: dict = {}
    if notice:
        output["systemMessage"] = notice
    if context:
        output["hookSpecificOutput"] = {"hookEventName": EVENTS["prompt"], "additionalContext": context}
    return json.dumps(output) if output else ""


def _use_recall_server() -> bool:
    """The warm recall server may serve this prompt (decided once per prompt): the llm engine is
    wanted, or the dense model is installed (it loads only there, never in a hook process)."""
    from memdir.config import Settings, choose_engine
    from recall import dense, server

    if not server.enabled():
        return False
    return choose_engine(Settings.from_env().engine, quiet=True) == "llm" or dense.installed()


def _recall_via_server(memory_dir, prompt: str, tools: list[str], session_id: str | None,
                       cwd: str | None = None) -> str | None:
    """The llm engine's answer from the warm recall server, or None to answer offline in-process.

    When no server is running yet, one is started for the next prompts and this one is answered
    offline: paying the SDK import here would hold the user's prompt for ~2 s.
    """
    from memdir.config import Settings
    from recall import server

    budget = Settings.from_env().recall_timeout
    from memdir.config import choose_engine

    request = {"memory_dir": str(memory_dir), "query": prompt, "tools": tools, "session_id": session_id,
               "engine": choose_engine(Settings.from_env().engine, quiet=True), "cwd": cwd}
    reply = server.ask(request, timeout=budget + 1.0)
    if reply is None:
        server.start_in_background()
        log(memory_dir, "prompt", "no recall server yet: started one, answered this prompt offline")
        return None
    for line in reply.get("debug") or []:
        log(memory_dir, "prompt", f"server: {line}")
    if "error" in reply:
        log(memory_dir, "prompt", f"recall server error ({reply['error']}); answered offline")
        return None
    return str(reply.get("context") or "")


def main(argv: list[str], stdin=None, stdout=None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    event = argv[0] if argv else ""
    flags = set(argv[1:])
    handlers = {
        "prompt": prompt_output,
        "stop": stop_output,
        "session-start": lambda p: session_start_output(p, include_index="--no-index" not in flags),
    }
    if event not in handlers:
        print(f"memdir: error: unknown hook {event!r}; use one of {', '.join(handlers)}", file=sys.stderr)
        return 1  # non-blocking error for Claude Code; never 2
    payload = None
    try:
        payload = HookPayload.parse(stdin.read())
        output = handlers[event](payload)
    except Exception as exc:  # a memory hook must never block or break the session
        folder = None
        try:
            folder = _memory_dir_for(payload) if payload else None
        except Exception:
            pass
        log(folder, event, f"{type(exc).__name__}: {exc}")
        return 0
    if output:
        stdout.write(output + "\n")
    return 0
