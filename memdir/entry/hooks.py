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
from memdir.errors import MemdirError
from memdir.hooklog import log
from memdir.prompt_scope import index_loaded_by_claude_code, memory_dir_for, native_on, usable_cwd
from memdir.record import FrozenRecord
from memdir.switches import switched_on

TYPE_CHECKING = False  # typing costs ~3 ms; pathlib ~8 ms (imported below only where needed)
if TYPE_CHECKING:
    from pathlib import Path

    from memdir.config import Settings
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


def _recent_tools(payload: HookPayload) -> list[str]:
    if not payload.transcript_path:
        return []
    from pathlib import Path

    from memdir.transcript import read_transcript, recent_tool_names

    try:
        recent = read_transcript(Path(payload.transcript_path), last_n=10, max_bytes=C.HOOK_TRANSCRIPT_READ_MAX_BYTES)
        return recent_tool_names(recent.messages)
    except Exception:
        return []


def stop_output(payload: HookPayload) -> str:
    """Start the background worker and return at once: the user never waits for extraction.

    posix_spawn rather than subprocess: this hook runs after every turn with a budget of twice a
    bare `python -c` start, and importing subprocess (~9 ms) is a third of that.
    """
    if usable_cwd(payload.cwd) is None:
        log(None, "stop", "the payload's cwd is missing, '/', or not a folder: no memory folder for it")
        return ""
    request = json.dumps({"session_id": payload.session_id, "transcript": payload.transcript_path, "cwd": payload.cwd})
    argv = [sys.executable, "-m", "memdir.entry.worker", request]
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
    """"Memory saved: ..." for what the worker saved, and "3 memories proposed: `memdir review`" once per
    new batch of proposals (write mode confirm; a directory listing, nothing parsed)."""
    from memdir import inert
    from memdir.notices import take_notices
    from memdir.proposals import new_batch_notice

    saved = take_notices(memory_dir)
    lines = [f"{prefix}: {', '.join(inert.one_line(p) for p in saved)}" if saved else None,
             new_batch_notice(memory_dir)]
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
    cache_dir = memory_dir / C.STATE_DIRNAME / "cache" if memory_dir.is_dir() else None
    index = ""
    if include_index:
        raw = _index_prefix(memory_dir)
        # a hand-edited ESC stays inert
        index = inert.block(index_text.load_for_context(raw, cache_dir=cache_dir)) if raw else ""
        if index:
            frame = _instructions(memory_dir, cache_dir, include_index=True, index="", native=False)
            index = fit_index(index, C.HOOK_OUTPUT_BUDGET - units(frame), str(memory_dir / C.INDEX_NAME))
    context = _instructions(memory_dir, cache_dir, include_index=include_index, index=index, native=native).strip("\n")
    output: dict = {"hookSpecificOutput": {"hookEventName": EVENTS["session-start"], "additionalContext": context}}
    notice = _saved_notice(memory_dir, "Memory saved since last session") if memory_dir.is_dir() else None
    if notice:
        output["systemMessage"] = notice
    return json.dumps(output)


def _instructions(memory_dir: Path, cache_dir: Path | None, *, include_index: bool, index: str, native: bool) -> str:
    """session_instructions.j2 from its skeleton cached in the memory folder: jinja2's import (about
    25 ms) is most of a session start's budget. The folder and the index are only printed: slots."""
    from memdir.template_cache import render_slotted

    slots = {"memory_dir": str(memory_dir), **({"index": index} if index else {})}
    return render_slotted("session_instructions.j2", slots=slots, cache_dir=cache_dir, include_index=include_index,
                          native=native, **({} if index else {"index": ""}))


def _index_prefix(memory_dir: Path) -> str:
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


def prompt_output(payload: HookPayload, early: EarlyQuestion | None = None) -> str:
    """The JSON to print for a UserPromptSubmit payload ("" for nothing to add). `early`: the question
    already sent to the warm server with the raw payload (memdir.entry.early_ask), which resolves the folder
    itself while everything below runs."""
    prompt = (payload.prompt or "").strip()
    if not any(ch.isspace() for ch in prompt):
        if early is not None:
            early.close()
        return ""  # "continue", "y", a slash command: nothing to recall for (notices wait for the next one)
    sent_at = early.sent_at if early is not None else time.monotonic()
    early = early.as_socket() if early is not None else None
    memory_dir = memory_dir_for(payload.cwd)
    if memory_dir is None:
        if early is not None:
            early.close()
        return ""
    asked = _ask(memory_dir, prompt, payload, early, sent_at) if memory_dir.is_dir() else None
    if asked is None and early is not None:
        early.close()
    from memdir.decision_context import for_prompt_hook

    decisions, journal_notice = for_prompt_hook(str(memory_dir), payload.cwd, prompt, payload.session_id)  # issue 14
    if journal_notice:
        log(memory_dir, "prompt", journal_notice)
    if not memory_dir.is_dir():
        return ""
    notice = _saved_notice(memory_dir)
    answer = _recall(memory_dir, prompt, payload, asked or _ask(memory_dir, prompt, payload))
    context = answer.context if answer is not None else ""
    if decisions:
        context = _with_relevant_decisions(memory_dir, payload.session_id, decisions, prompt, context)
    output: dict = {}
    notice = "\n".join(n for n in (notice, journal_notice) if n)
    if notice:
        output["systemMessage"] = notice
    if context:
        output["hookSpecificOutput"] = {"hookEventName": EVENTS["prompt"], "additionalContext": context}
    return json.dumps(output) if output else ""


def _with_relevant_decisions(memory_dir: Path, session_id: str | None, journal: str, prompt: str,
                             context: str) -> str:
    """The recent decisions relevant to this prompt, not shown yet in this session and not already
    stated by a recalled memory, before `context` in the room the output budget leaves."""
    from memdir.decision_context import add_decisions, decision_key, note_shown, shown_in_session
    from memdir.stages.recall.decision_filter import relevant_decisions

    shown = shown_in_session(str(memory_dir), session_id)

    def keep(records: list[dict]) -> list[dict]:
        return relevant_decisions(prompt, [r for r in records if decision_key(r) not in shown], context)

    combined, added = add_decisions(journal, context, keep=keep)
    note_shown(str(memory_dir), session_id, [decision_key(r) for r in added])
    return combined


def _use_recall_server(engine: str) -> bool:
    """The warm recall server may serve this prompt (decided once per prompt): the llm engine is
    wanted, or the dense model is installed (it loads only there, never in a hook process)."""
    if not switched_on(C.RECALL_SERVER_ENV):
        return False  # before the socket client's imports: a hook with the server off never pays for them
    from memdir import embeddings
    from memdir.stages.recall import server_socket

    if not server_socket.enabled():
        return False
    if not (engine == "llm" or embeddings.installed()):
        return False
    # No folder only this user can reach (a path over AF_UNIX's limit, or a folder of the wrong owner or
    # mode): no server at all, and recall runs here, with the configured engine.
    path = server_socket.socket_path()
    return path is not None and server_socket.folder_state(path) != "unsafe"


def _ask(memory_dir: Path, prompt: str, payload: HookPayload, early=None,
         sent_at: float = 0.0) -> tuple[bool, bool, object, float, dict, float | None]:
    """(whether the server is in use, whether Claude Code loaded this folder's index, the connection
    the question went out on or None, how long its reply is waited for, what a usable reply must name,
    when the question went out if it went out early): the start of `_recall`. The settings and the
    engine are read once here, for the whole prompt. `early`: the connection `_ask_early` sent the
    question on at `sent_at` (None: not sent yet)."""
    from memdir.config import Settings, choose_engine
    from memdir.entry.recall_race import GRACE_SECONDS

    settings = Settings.from_env()
    engine = choose_engine(settings.engine, quiet=True)
    index_loaded = index_loaded_by_claude_code(payload.cwd, memory_dir)
    use_server = _use_recall_server(engine)
    expect: dict = {}
    early_at = None
    if early is not None and use_server:
        early_at = sent_at
        early.settimeout(settings.recall_timeout + 1.0)
        conn = early
        expect = {"memory_dir": str(memory_dir), "index_loaded": index_loaded, "asked_engine": engine}
    else:
        if early is not None:
            early.close()
        conn = _ask_server(memory_dir, prompt, payload, index_loaded, settings, engine) if use_server else None
    # With the llm engine the model's choice is the point, and no local answer can stand in for it within
    # a few milliseconds: its reply is waited for up to the recall timeout (a hung server costs no more).
    grace = settings.recall_timeout + 1.0 if use_server and engine == "llm" else GRACE_SECONDS
    return use_server, index_loaded, conn, grace, expect, early_at


def _recall(memory_dir: Path, prompt: str, payload: HookPayload,
            asked: tuple[bool, bool, object, float, dict, float | None]):
    """The memories for this prompt (a recall_race.Answer), from the warm server or this process,
    whichever is ready first; what it surfaced is recorded for the session."""
    from memdir.entry.recall_race import Answer, race

    use_server, index_loaded, conn, grace, expect, sent_at = asked
    if sent_at is not None:  # the server's acknowledgement is due within ACK_SECONDS of the question
        from memdir.entry.recall_race import ACK_SECONDS

        grace = max(grace, sent_at + ACK_SECONDS - time.monotonic())

    def local() -> Answer:
        from memdir.stages.recall.api import recall

        # With the server in use, this process only ever runs the offline engine (no SDK import); racing
        # it, it records nothing itself: the answer used is recorded below. Verification against the
        # code runs in the server only: its scan does not fit this process's budget.
        result = recall(memory_dir, prompt, tools=_recent_tools(payload), session_id=payload.session_id,
                        engine="offline" if use_server else None, index_loaded=index_loaded,
                        record=conn is None, disk_cache=True)
        for line in result.debug:
            log(memory_dir, "prompt", line)
        return Answer(result.context, [h.rel_path for h in result.selected], "local")

    def prepare() -> None:
        import memdir.stages.recall.api  # noqa: F401  (what `local` imports first: most of its start)

    answer, reply = race(conn, local, grace=grace, expect=expect, prepare=prepare)
    for line in (reply or {}).get("debug") or []:
        log(memory_dir, "prompt", f"server: {line}")
    if reply is not None and "error" in reply:
        log(memory_dir, "prompt", f"recall server error ({reply['error']}); answered offline")
    elif reply is not None and any(reply.get(k) != v for k, v in expect.items()):
        log(memory_dir, "prompt", "the recall server resolved another folder, index or engine for this prompt "
            f"({', '.join(f'{k}={reply.get(k)!r}' for k in expect)}); answered here")
    if answer is not None and conn is not None and answer.selected:
        from memdir.stages.recall import state

        state.record(memory_dir, payload.session_id, answer.selected, len(answer.context.encode()))
    return answer


def _ask_server(memory_dir: Path, prompt: str, payload: HookPayload, index_loaded: bool, settings: Settings,
                engine: str):
    """The connection the request went out on, or None when no server runs. Then one is started
    for the next prompts, and this one is answered here: paying the SDK import or the model load
    here would hold the user's prompt for seconds. The server reads the transcript itself."""
    from memdir.stages.recall import server_socket

    request = {"memory_dir": str(memory_dir), "query": prompt, "transcript_path": payload.transcript_path,
               "session_id": payload.session_id, "engine": engine,
               "cwd": payload.cwd, "index_loaded": index_loaded, "record": False}
    conn = server_socket.send(request, timeout=settings.recall_timeout + 1.0)  # sends this session's endpoint
    if conn is None:
        started = server_socket.start_in_background()
        log(memory_dir, "prompt", "no recall server yet: started one, answered this prompt offline" if started
            else "no recall server, and none can start with a private socket here; answered this prompt offline")
    return conn


def main(argv: list[str], stdin=None, stdout=None, early: EarlyQuestion | None = None, asked: bool = False) -> int:
    """`early`, `asked`: the prompt's question already sent to the warm server by the console script
    (memdir.entry.main), and whether it tried; when not, it is sent here, first."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    event = argv[0] if argv else ""
    flags = set(argv[1:])
    if event == "prompt" and not asked:
        from memdir.entry.early_ask import read_and_ask

        stdin, early = read_and_ask(stdin)
    handlers = {
        "prompt": lambda p: prompt_output(p, early),
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
        folder = None
        try:
            folder = memory_dir_for(payload.cwd) if payload else None
        except Exception:
            pass
        log(folder, event, f"{type(exc).__name__}: {exc}")
        return 0
    if output:
        stdout.write(output + "\n")
    return 0
