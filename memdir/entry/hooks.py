"""Claude Code hook entry points: `memdir hook prompt|stop|session-start` (SPEC §6).

A memory hook must never get in the user's way: whatever goes wrong, it prints nothing, exits 0
and logs the reason to `.memdir/hook.log`. It never exits 2 (that would block the prompt, or make
Claude continue after Stop).

The payload is parsed into a light record rather than a pydantic model: these run on every prompt and
turn, and pydantic's import and model build (~190 ms here) exceed the prompt hook's whole budget. The prompt
hook itself is memdir/entry/prompt_hook.py, imported only for a prompt; its question to the warm server has
usually gone out before this module loads (memdir/entry/early_ask.py).
"""

from __future__ import annotations

import os
import sys

from memdir import constants as C, light_json
from memdir.errors import MemdirError
from memdir.hooklog import log
from memdir.prompt_scope import child_env, memory_dir_for, native_on, usable_cwd
from memdir.record import FrozenRecord

TYPE_CHECKING = False  # typing costs ~3 ms; folders are strings (memdir.locate): no pathlib either
if TYPE_CHECKING:
    from memdir.entry.early_ask import EarlyQuestion

EVENTS = {"prompt": "UserPromptSubmit", "stop": "Stop", "session-start": "SessionStart"}


class HookInputError(ValueError):
    pass


class HookPayload(FrozenRecord):
    session_id: str | None
    transcript_path: str | None
    cwd: str | None
    hook_event_name: str | None
    prompt: str | None = None
    source: str | None = None
    stop_hook_active: bool = False

    @classmethod
    def parse(cls, text: str) -> HookPayload:
        try:
            data = light_json.loads(text)
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


def units(text: str) -> int:
    """Length as Claude Code counts it (UTF-16 code units), as recall.inject.units counts it: importing
    that module (dates, the scan) cost the session-start hook a tenth of its budget."""
    return len(text.encode("utf-16-le")) // 2


def fit_index(index: str, budget: int, index_path: str) -> str:
    """MEMORY.md cut at a line so it fits `budget` UTF-16 units, saying where the rest is."""
    if units(index) <= budget:
        return index
    lines = index.split("\n")
    kept: list[str] = []
    used = 0
    reserve = 160  # room for the note below
    for line in lines:
        if used + units(line) + 1 > budget - reserve:
            break
        kept.append(line)
        used += units(line) + 1
    hidden = len(lines) - len(kept)
    kept.append(f"[{hidden} more line(s) of MEMORY.md not loaded here for space: read {index_path}]")
    return "\n".join(kept)


def stop_output(payload: HookPayload) -> str:
    """Start the background worker and return at once: the user never waits for extraction.

    posix_spawn rather than subprocess: this hook runs after every turn with a budget of twice a
    bare `python -c` start, and importing subprocess (~9 ms) is a third of that.
    """
    if usable_cwd(payload.cwd) is None:
        log(None, "stop", "the payload's cwd is missing, '/', or not a folder: no memory folder for it")
        return ""
    request = light_json.dumps({"session_id": payload.session_id, "transcript": payload.transcript_path,
                                "cwd": payload.cwd})
    # -P: `-m` would put the hook's cwd, the project, first on sys.path, and a project's own `enum.py` or
    # `token.py` would run in the worker's place (and break it). The hook command itself runs with -P too.
    argv = [sys.executable, *C.PYTHON_UTF8_MODE, "-P", "-m", "memdir.entry.worker", request]
    workdir = payload.cwd if payload.cwd and os.path.isdir(payload.cwd) else None
    env = child_env(os.environ)  # no empty PYTHONPATH entry to undo -P
    if hasattr(os, "posix_spawn"):
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        if workdir:
            # posix_spawn has no cwd argument: the worker changes directory itself.
            env["MEMDIR_WORKER_CWD"] = workdir
        os.posix_spawn(sys.executable, argv, env, file_actions=devnull, setsid=True)
    else:  # Windows
        import subprocess

        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "DETACHED_PROCESS", 0)
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, cwd=workdir, env=env, creationflags=flags)
    return ""


def saved_notice(memory_dir: str, prefix: str = "Memory saved") -> str | None:
    """"Memory saved: ..." for what the worker saved, and "3 memories proposed: `memdir review`" once per
    new batch of proposals (write mode confirm; a directory listing, nothing parsed)."""
    from memdir.notices import take_notices
    from memdir.proposals import new_batch_notice

    saved = take_notices(memory_dir)
    if saved:
        from memdir import inert  # only with something to say: most prompts have nothing saved

        saved_line: str | None = f"{prefix}: {', '.join(inert.one_line(p) for p in saved)}"
    else:
        saved_line = None
    lines = [saved_line, new_batch_notice(memory_dir)]
    return "\n".join(line for line in lines if line) or None


def session_start_output(payload: HookPayload, include_index: bool = True) -> str:
    """What memdir adds at session start, within C.HOOK_OUTPUT_BUDGET.

    With Claude Code's auto memory on, Claude Code already loads MEMORY.md and tells the model how
    memory works: memdir then adds one sentence on what it does on top, nothing twice. With native
    memory off, memdir gives the instructions and MEMORY.md (cut to fit the budget).
    `--no-index` leaves MEMORY.md out in any case.
    """
    memory_dir = memory_dir_for(payload.cwd)
    if memory_dir is None:
        return ""
    from memdir import index as index_text, inert  # not at the top: the Stop hook (2x budget) needs neither

    native = native_on(payload.cwd)
    include_index = include_index and not native
    is_dir = os.path.isdir(memory_dir)
    cache_dir = os.path.join(memory_dir, C.STATE_DIRNAME, "cache") if is_dir else None
    index = ""
    if include_index:
        raw = _index_prefix(memory_dir)
        # a hand-edited ESC stays inert
        index = inert.block(index_text.load_for_context(raw, cache_dir=cache_dir)) if raw else ""
        if index:
            frame = _instructions(memory_dir, cache_dir, include_index=True, index="", native=False)
            index = fit_index(index, C.HOOK_OUTPUT_BUDGET - units(frame), os.path.join(memory_dir, C.INDEX_NAME))
    # memdir registered twice starts two of these at once: the session's start is said once (issue 21), with a memory
    # folder or before it exists
    from memdir.entry.start_claim import start_part

    part = start_part(memory_dir, payload.session_id, payload.source, include_index)
    context = "" if part == "nothing" else _instructions(memory_dir, cache_dir, include_index=include_index,
                                                          index=index, native=native, index_only=part == "index")
    context = context.strip("\n")
    output: dict = {"hookSpecificOutput": {"hookEventName": EVENTS["session-start"], "additionalContext": context}
                    } if context else {}
    notice = saved_notice(memory_dir, "Memory saved since last session") if is_dir else None
    if notice:
        output["systemMessage"] = notice
    import json  # `re` is loaded by now (the template cache): json's own part is small

    return json.dumps(output) if output else ""


def _instructions(memory_dir: str, cache_dir: str | None, *, include_index: bool, index: str, native: bool,
                  index_only: bool = False) -> str:
    """session_instructions.j2 from its skeleton cached in the memory folder: jinja2's import (about
    25 ms) is most of a session start's budget. The folder and the index are only printed: slots.
    `index_only`: only its MEMORY.md part (what a twin hook registered with --no-index left out)."""
    from memdir.template_cache import render_slotted

    slots = {"memory_dir": str(memory_dir), **({"index": index} if index else {})}
    return render_slotted("session_instructions.j2", slots=slots, cache_dir=cache_dir, include_index=include_index,
                          native=native, **({} if index else {"index": ""}),
                          **({"index_only": True} if index_only else {}))  # type: ignore[arg-type]  # a flag


def _index_prefix(memory_dir: str) -> str:
    """The start of MEMORY.md, enough for the load cap: bounded, never through a symlink, never a
    FIFO; a problem becomes a one-line note in the context instead of an error."""
    from memdir import safefs

    if not os.path.isdir(memory_dir):
        return ""
    try:
        return safefs.read_text(memory_dir, C.INDEX_NAME, 4 * C.INDEX_MAX_CHARS, prefix=True, errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as exc:
        log(memory_dir, "session-start", f"{C.INDEX_NAME} not loaded: {exc}")
        return f"({C.INDEX_NAME} was not loaded: {exc}; run `memdir doctor`)"


def _prompt(payload: HookPayload, early: EarlyQuestion | None) -> str:
    from memdir.entry.prompt_hook import prompt_output

    return prompt_output(payload, early)


def main(argv: list[str], stdin=None, stdout=None, early: EarlyQuestion | None = None, asked: bool = False) -> int:
    """`early`, `asked`: the prompt's question already sent to the warm server by memdir.entry.main, and
    whether it tried; when not, it is sent here, first."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    event = argv[0] if argv else ""
    flags = set(argv[1:])
    if event == "prompt" and not asked:
        from memdir.entry.early_ask import read_and_ask

        stdin, early = read_and_ask(stdin)
    handlers = {
        "prompt": lambda p: _prompt(p, early),
        "stop": stop_output,
        "session-start": lambda p: session_start_output(p, include_index="--no-index" not in flags),
    }
    if event not in handlers:
        print(f"memdir: error: unknown hook {event!r}; use one of {', '.join(handlers)}", file=sys.stderr)
        return 1  # non-blocking error for Claude Code; never 2
    payload = None
    try:
        raw = stdin.read(C.HOOK_PAYLOAD_MAX_BYTES + 1)  # Claude Code's payload: a prompt, some paths
        if len(raw) > C.HOOK_PAYLOAD_MAX_BYTES:
            raise MemdirError(f"hook payload over {C.HOOK_PAYLOAD_MAX_BYTES >> 20} MB; ignored (nothing was recalled)")
        payload = HookPayload.parse(raw)
        output = handlers[event](payload)
    except Exception as exc:  # a memory hook must never block or break the session
        log(_log_folder(payload), event, f"{type(exc).__name__}: {exc}")
        return 0
    if output and stdout is not None:  # None: started with fd 1 closed, no one to tell
        try:
            stdout.write(output + "\n")
            stdout.flush()  # here, so a reader gone fails now (unbuffered, it failed at the write) and is logged
        except (OSError, ValueError) as exc:  # Claude Code stopped reading (past the hook's timeout, or gone)
            log(_log_folder(payload), event, f"output not delivered ({type(exc).__name__}: {exc})")
    return 0


def _log_folder(payload: HookPayload | None):
    """The memory folder whose hook log gets a failure's line (None: the config home's log)."""
    try:
        return memory_dir_for(payload.cwd) if payload else None
    except Exception:
        return None
