"""The UserPromptSubmit hook: the memories for this prompt, from the warm recall server or recalled here,
and the recent decisions that bear on it (SPEC §6, issue 26). memdir.entry.hooks reads the payload and
calls `prompt_output`; the question to the server has usually gone out already (memdir.entry.early_ask).
"""

from __future__ import annotations

import os
import time

from memdir import constants as C, light_json
from memdir.hooklog import log
from memdir.prompt_scope import index_loaded_by_claude_code, memory_dir_for, recall_text
from memdir.switches import switched_on

TYPE_CHECKING = False  # typing costs ~3 ms; the folder is a str (memdir.locate): no pathlib either
if TYPE_CHECKING:
    from memdir.config import Settings
    from memdir.entry.early_ask import EarlyQuestion
    from memdir.entry.hooks import HookPayload

def prompt_output(payload: HookPayload, early: EarlyQuestion | None = None) -> str:
    """The JSON to print for a UserPromptSubmit payload ("" for nothing to add). `early`: the question
    already sent to the warm server with the raw payload (memdir.entry.early_ask), which resolves the folder
    itself while everything below runs."""
    prompt = recall_text(payload.prompt or "")
    if not any(ch.isspace() for ch in prompt):
        if early is not None:
            early.close()
        return ""  # "continue", "y", a slash command: nothing to recall for (notices wait for the next one)
    sent_at = early.sent_at if early is not None else time.monotonic()
    stuck = early is not None and early.stuck  # a server that took no question: not asked again, not waited for
    early = early.conn if early is not None else None  # a bare _socket connection: no `socket` import
    memory_dir = memory_dir_for(payload.cwd)
    if memory_dir is None:
        if early is not None:
            early.close()
        return ""
    asked = _ask(memory_dir, prompt, payload, early, sent_at, stuck) if os.path.isdir(memory_dir) else None
    if asked is None and early is not None:
        early.close()
    from memdir.decision_context import for_prompt_hook

    decisions, journal_notice = for_prompt_hook(str(memory_dir), payload.cwd, prompt, payload.session_id)  # issue 14
    if journal_notice:
        log(memory_dir, "prompt", journal_notice)
    if not os.path.isdir(memory_dir):
        return ""
    from memdir.entry.hooks import EVENTS, saved_notice

    notice = saved_notice(memory_dir)
    asked = asked or _ask(memory_dir, prompt, payload, stuck=stuck)
    answer = _recall(memory_dir, prompt, payload, asked)
    from memdir.entry.prompt_claim import claimed_context

    # Only now, under the session's lock: what another hook for this prompt said meanwhile is left out (issue 21).
    context = claimed_context(memory_dir, payload.session_id, prompt, answer, decisions, asked.index_loaded)
    output: dict = {}
    notice = "\n".join(n for n in (notice, journal_notice) if n)
    if notice:
        output["systemMessage"] = notice
    if context:
        output["hookSpecificOutput"] = {"hookEventName": EVENTS["prompt"], "additionalContext": context}
    return light_json.dumps(output) if output else ""  # json's import (and re's patterns in it) is not needed


def _use_recall_server(engine: str) -> bool:
    """The warm recall server may serve this prompt (decided once per prompt), whatever the engine and
    whether or not the dense model is installed: it keeps the folder's view, its memories' tokens and what
    their names were found to be in the project, so a lexical answer takes it about a third of this
    process's time, and only it checks recalled memories against the code (issue 26)."""
    if not switched_on(C.RECALL_SERVER_ENV):
        return False  # before the socket client's imports: a hook with the server off never pays for them
    from memdir.stages.recall import socket_place

    if not socket_place.enabled():
        return False
    # No folder only this user can reach (a path over AF_UNIX's limit, or a folder of the wrong owner or
    # mode): no server at all, and recall runs here, with the configured engine.
    path = socket_place.socket_path()
    return path is not None and socket_place.folder_state(path) != "unsafe"


class Asked:
    """The start of `_recall`: whether Claude Code loaded this folder's index, the connection the question
    went out on or None, how long its reply is waited for, what a usable reply must name, when the question
    went out if it went out early, and the engine this process recalls with if it answers itself."""

    __slots__ = ("index_loaded", "conn", "grace", "expect", "sent_at", "local_engine")

    def __init__(self, index_loaded: bool, conn, grace: float, expect: dict, sent_at: float | None,
                 local_engine: str) -> None:
        self.index_loaded, self.conn, self.grace = index_loaded, conn, grace
        self.expect, self.sent_at, self.local_engine = expect, sent_at, local_engine


def _ask(memory_dir: str, prompt: str, payload: HookPayload, early=None,
         sent_at: float = 0.0, stuck: bool = False) -> Asked:
    """Whether and how the warm server is asked (see Asked). The settings and the engine are read once
    here, for the whole prompt. `early`: the connection early_ask sent the question on at `sent_at`
    (None: not sent yet); `stuck`: the server did not take it (no server then)."""
    from memdir.config import Settings, prompt_engine
    from memdir.entry.recall_race import GRACE_SECONDS

    settings = Settings.from_env()
    engine = prompt_engine(settings.engine)  # what recall runs: sent to the server as is
    index_loaded = index_loaded_by_claude_code(payload.cwd, memory_dir)
    # A question early_ask sent went out on the same checks (on, a private socket folder): not made again.
    use_server = early is not None or (not stuck and _use_recall_server(engine))
    expect: dict = {}
    early_at = None
    if early is not None:
        early_at = sent_at
        early.settimeout(settings.recall_timeout + 1.0)
        conn = early
        expect = {"memory_dir": str(memory_dir), "index_loaded": index_loaded, "asked_engine": engine}
    else:
        conn = _ask_server(memory_dir, prompt, payload, index_loaded, settings, engine) if use_server else None
    # With the llm engine the model's choice is the point, and no local answer can stand in for it within
    # a few milliseconds: its reply is waited for up to the recall timeout (a hung server costs no more).
    # A question sent early is given ACK_SECONDS from its sending (in _recall) to be acknowledged, while the
    # local recall already runs: nothing is waited for a stuck server then.
    if use_server and engine == "llm":
        grace = settings.recall_timeout + 1.0
    else:
        grace = 0.0 if early_at is not None else GRACE_SECONDS
    # With the server in use, this process only ever runs the offline engine (no SDK import) when it races
    # it; without, the engine the server would have been asked for (never a claude CLI start per prompt).
    return Asked(index_loaded, conn, grace, expect, early_at, "offline" if use_server else engine)


def _recall(memory_dir: str, prompt: str, payload: HookPayload, asked: Asked):
    """The memories for this prompt (a recall_race.Answer), from the warm server or this process,
    whichever is ready first. Nothing is recorded for the session here: memdir.entry.prompt_claim does that."""
    from memdir.entry.recall_race import Answer, race

    index_loaded, conn, grace, expect, sent_at = asked.index_loaded, asked.conn, asked.grace, asked.expect, asked.sent_at
    ack_by = None
    if sent_at is not None:
        from memdir.entry.recall_race import ACK_SECONDS

        # A live server has acknowledged the question within ACK_SECONDS of its sending; the local recall runs
        # meanwhile (waiting the window out cost a stuck server its rest over no server at all, issue 26).
        ack_by = sent_at + ACK_SECONDS

    def local() -> Answer:
        from memdir.stages.recall.api import recall

        # Neither side records what it surfaced: the answer used is claimed once recall is done (prompt_claim).
        # Verification against the code runs in the server only: its scan does not fit this process's budget.
        result = recall(memory_dir, prompt, tools=lambda: _recent_tools(payload), session_id=payload.session_id,
                        engine=asked.local_engine, index_loaded=index_loaded,
                        record=False, log_usage=conn is None, disk_cache=True)
        for line in result.debug:
            log(memory_dir, "prompt", line)
        return Answer(result.context, [h.rel_path for h in result.selected], "local", common=result.common)

    def prepare() -> None:
        import memdir.stages.recall.api  # noqa: F401  (what `local` imports first: most of its start)

    answer, reply = race(conn, local, grace=grace, expect=expect, prepare=prepare, ack_by=ack_by)
    for line in (reply or {}).get("debug") or []:
        log(memory_dir, "prompt", f"server: {line}")
    if reply is not None and "error" in reply:
        log(memory_dir, "prompt", f"recall server error ({reply['error']}); answered offline")
    elif reply is not None and any(reply.get(k) != v for k, v in expect.items()):
        log(memory_dir, "prompt", "the recall server resolved another folder, index or engine for this prompt "
            f"({', '.join(f'{k}={reply.get(k)!r}' for k in expect)}); answered here")
    return answer


def _ask_server(memory_dir: str, prompt: str, payload: HookPayload, index_loaded: bool, settings: Settings,
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
