"""One question to the warm recall server, answered: the session's environment and SDK client, the folder's
watched view, the dense model's part, and the checks of what recalled memories name against the project.

Part of the server (recall/server.py, which reads questions off the socket and writes the replies): split
out so each module keeps one job.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading

from memdir import constants as C
from memdir.prompt_scope import recall_text
from memdir.stages.recall.server_dense import Embedder, QueryAhead
from memdir.stages.recall.server_socket import REQUEST_ENV_PREFIX, per_request

CLIENTS_KEPT = 8  # SDK clients, one per endpoint and credentials, most recently used kept
_ENVIRON_LOCK = threading.Lock()  # os.environ is briefly swapped while an SDK client is built


# --- per-request configuration ------------------------------------------------------------------
def effective_env(request: dict) -> dict[str, str]:
    """The server's own environment with the request's per-request part (server_socket.request_env)
    in place of its own: the endpoint, credentials and settings of the session that asked."""
    sent = request.get("env") or {}
    if not isinstance(sent, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in sent.items()):
        raise ValueError("the request's 'env' must map names to strings")
    with _ENVIRON_LOCK:
        base = {k: v for k, v in os.environ.items() if not per_request(k)}
    return {**base, **{k: v for k, v in sent.items() if per_request(k)}}


@contextlib.contextmanager
def _sdk_environment(values: dict[str, str]):
    """The SDK reads its endpoint and credentials from os.environ while a client is built (profiles,
    federation and custom headers have no other way in), so it is shown exactly one request's
    ANTHROPIC_* variables for that moment, and the server's own afterwards."""
    with _ENVIRON_LOCK:
        saved = {k: v for k, v in os.environ.items() if k.startswith(REQUEST_ENV_PREFIX)}
        for name in saved:
            del os.environ[name]
        os.environ.update(values)
        try:
            yield
        finally:
            for name in [k for k in os.environ if k.startswith(REQUEST_ENV_PREFIX)]:
                del os.environ[name]
            os.environ.update(saved)


class ClientCache:
    """One SDK client per endpoint, credentials and timeout; the few most recently used are kept."""

    def __init__(self, limit: int = CLIENTS_KEPT) -> None:
        from collections import OrderedDict

        self.limit = limit
        self.lock = threading.Lock()
        self.clients: OrderedDict = OrderedDict()

    def get(self, env: dict[str, str], timeout: float):
        from memdir.llm import make_client

        sdk_env = tuple(sorted((k, v) for k, v in env.items() if k.startswith(REQUEST_ENV_PREFIX)))
        key = (sdk_env, timeout)
        with self.lock:
            if key in self.clients:
                self.clients.move_to_end(key)
                return self.clients[key]
            with _sdk_environment(dict(sdk_env)):
                client = make_client(timeout=timeout, env=env)
            self.clients[key] = client
            while len(self.clients) > self.limit:
                self.clients.popitem(last=False)  # dropped, not closed: a thread may still be using it
            return client


# --- the folders served ---------------------------------------------------------------------------
_views = None  # recall.server_watch.FolderViews, once serve() keeps them


def keep_folder_views() -> None:
    """Scan each folder served through a view kept current by change events (recall.server_watch)."""
    global _views
    if _views is None:
        from memdir.stages.recall.server_watch import FolderViews

        _views = FolderViews()


def scan_folder(memory_dir):
    """The folder's scan: from its watched view when the server keeps them, else a plain `scan`."""
    if _views is not None:
        return _views.scan(memory_dir)
    from memdir.scan import scan

    return scan(memory_dir)


# --- names checked against the code -------------------------------------------------------------
_rechecker = None  # memdir.verdicts.Rechecker, once serve() keeps verdicts
_answering = [0]  # prompts being answered now (handle); the background search gives way to them
_answering_lock = threading.Lock()


def keep_verdicts() -> None:
    """Remember names checked against each project, and check the rest after replying (memdir.verdicts)."""
    global _rechecker
    if _rechecker is None:
        from memdir.verdicts import Rechecker, Verdicts

        # At normal priority: the search holds the GIL while it matches (re never releases it), and a thread
        # niced below the request threads could be descheduled holding it, stalling every answer meanwhile.
        _rechecker = Rechecker(Verdicts(), busy=answering_now)


def answering_now() -> bool:
    """Whether a prompt is being answered (`handle`): the server's background work gives way meanwhile."""
    return _answering[0] > 0


def _verify_options() -> dict:
    if _rechecker is None:
        return {}
    return {"verdicts": _rechecker.verdicts, "verify_budget_s": C.VERIFY_PROMPT_BUDGET_S}


def _check_later(result, root: str, memory_dir: str) -> None:
    """The recalled memories with names the prompt's budget left unchecked, checked in the background."""
    if _rechecker is None or not result.evidence:
        return
    unfinished = [h.rel_path for h in result.selected
                  if h.rel_path in result.evidence and result.evidence[h.rel_path].unchecked]
    if unfinished:
        _rechecker.later(root, memory_dir, unfinished)


# --- one request --------------------------------------------------------------------------------
def handle(request: dict, clients: ClientCache | None = None, embedder: Embedder | None = None) -> dict:
    """The reply to one question (a dict for the socket); background work gives way while it runs."""
    with _answering_lock:
        _answering[0] += 1
    try:
        return _handle(request, clients, embedder)
    finally:
        with _answering_lock:
            _answering[0] -= 1


def _handle(request: dict, clients: ClientCache | None, embedder: Embedder | None) -> dict:
    from memdir.config import Settings
    from memdir.project_files import project_root
    from memdir.stages.recall.api import recall
    from memdir.stages.recall.server_scope import servable_folder

    if isinstance(request, dict) and isinstance(request.get("hook_payload"), str):
        request = from_hook_payload(request)
    if not isinstance(request, dict) or not isinstance(request.get("query"), str):
        raise ValueError("a request is a JSON object with a 'query' string")
    # First: the query's embedding is the longest part of an answer, and runs beside everything below.
    dense = QueryAhead(embedder.model, request["query"]) if embedder else None
    env = effective_env(request)
    if request.get("resolve") is True and request.get("memory_dir") is None:
        # A prompt hook's question sent before it resolved anything (memdir.entry.early_ask): resolved here as
        # the hook resolves it, and named in the reply, which the hook uses only if it resolved the same.
        from memdir.prompt_scope import resolve_for_server

        folder, index_loaded, engine = resolve_for_server(request.get("cwd"), env)
        memory_dir = servable_folder(str(folder), env)
    else:
        memory_dir = servable_folder(request.get("memory_dir"), env)
        engine = str(request.get("engine") or "llm")
        index_loaded = request.get("index_loaded") is True
    settings = Settings.from_env(env).with_overrides(engine=engine)
    client = clients.get(env, settings.recall_timeout) if clients is not None and engine == "llm" else None
    cwd = request.get("cwd")
    root = project_root(cwd) if isinstance(cwd, str) and os.path.isdir(cwd) else None
    result = recall(
        memory_dir,
        request["query"],
        settings=settings,
        engine=engine,
        tools=lambda: _tools(request),  # the transcript's tail, read only if a how-to is among the best
        session_id=request.get("session_id"),
        client=client,
        dense=dense,
        project_root=root,
        env=env,
        index_loaded=index_loaded,
        record=request.get("record") is not False,  # False: the hook records the answer it uses
        log_usage=True,
        scanner=scan_folder,
        **_verify_options(),
    )
    if embedder is not None:
        embedder.refresh_later(str(memory_dir))
    if root is not None:
        _check_later(result, root, str(memory_dir))
    from memdir.stages.recall.inject import verification_line

    checks = {rel: line for rel, evidence in result.evidence.items() if (line := verification_line(evidence))}
    return {"context": result.context, "engine": result.engine, "debug": result.debug,
            "selected": [h.rel_path for h in result.selected], "dense": embedder is not None, "checks": checks,
            "common": sorted(result.common),
            "memory_dir": str(memory_dir), "index_loaded": index_loaded, "asked_engine": engine}


def from_hook_payload(request: dict) -> dict:
    """A question sent as the prompt hook's raw payload (memdir.entry.early_ask) as the fields it holds:
    the query is the prompt as the hook asks it (stripped); a prompt of one word ("y", "continue", a slash
    command) asks for nothing, as in the hook."""
    payload = json.loads(request["hook_payload"])  # within the request's own size limit
    if not isinstance(payload, dict):
        raise ValueError("the hook payload is not a JSON object")

    def text(name: str) -> str | None:
        value = payload.get(name)
        return value if isinstance(value, str) else None

    query = recall_text(text("prompt") or "")
    if not any(ch.isspace() for ch in query):
        raise ValueError("nothing to recall for a one-word prompt")
    fields = {"query": query, "transcript_path": text("transcript_path"), "session_id": text("session_id"),
              "cwd": text("cwd")}
    return {**{k: v for k, v in request.items() if k != "hook_payload"}, **fields}


def _tools(request: dict) -> list[str]:
    """The tools in use: sent as they are, or read from the transcript's tail here, so the prompt
    hook need not read it while the server answers."""
    if request.get("tools"):
        return [str(t) for t in request["tools"]]
    transcript = request.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return []
    from pathlib import Path

    from memdir.transcript import read_transcript, recent_tool_names

    try:
        from memdir.constants import HOOK_TRANSCRIPT_READ_MAX_BYTES

        recent = read_transcript(Path(transcript), last_n=10, max_bytes=HOOK_TRANSCRIPT_READ_MAX_BYTES)
        return recent_tool_names(recent.messages)
    except Exception:  # noqa: BLE001 - an unreadable transcript only loses the tool hint
        return []
