"""A loopback Anthropic Messages API for the real-client suite, answering from a script and logging every request.

`ScriptedAPI` serves streaming SSE exactly as Claude Code consumes it, non-streaming JSON and
`/v1/messages/count_tokens`; `Script` answers the main agent's turns in order, Claude Code's side queries and
memdir's own SDK calls from callables; `text` and `tool_use` build the Replies. Starting the CLI against it is
tests/realclient/harness.py's job.

What 2.1.328 sends, seen with this harness (`claude -p`, nonessential traffic off):
- one streaming `POST /v1/messages?beta=true` per main-loop turn, model `claude-opus-5-5`, 12 tools
  (Agent, Bash, Edit, Read, Write, ...), headers `user-agent: claude-cli/2.1.328 (external, sdk-cli)`,
  `x-app: cli`, `anthropic-beta: claude-code-20250219,...`, `x-claude-code-session-id`;
- no title, summary or memory-extraction side query in `-p` mode, and no count_tokens call (both are
  still answered, so a version that sends them passes);
- hook output arrives as a `system` message "<Event> hook additional context: ..." after the prompt;
  MEMORY.md arrives in the first user message ("Contents of .../MEMORY.md (user's auto-memory ...)");
- requests from memdir's own hooks (Python SDK user-agent) reach the same URL: see `Script.memdir_reply`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """One assistant message: content blocks (text / tool_use) and how it stopped."""

    content: list[dict]
    stop_reason: str = "end_turn"
    usage: dict = field(default_factory=lambda: {"input_tokens": 120, "output_tokens": 12,
                                                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})


def text(message: str) -> Reply:
    return Reply([{"type": "text", "text": message}])


_ids = itertools.count(1)


def tool_use(name: str, tool_input: dict, preface: str | None = None) -> Reply:
    blocks = [{"type": "text", "text": preface}] if preface else []
    blocks.append({"type": "tool_use", "id": f"toolu_fake{next(_ids):06d}", "name": name, "input": tool_input})
    return Reply(blocks, stop_reason="tool_use")


@dataclass
class Request:
    """One logged request: method, path, headers and JSON body (None for non-JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict | None

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0] == "/v1/messages"

    @property
    def has_tools(self) -> bool:
        return bool((self.body or {}).get("tools"))

    def system_text(self) -> str:
        system = (self.body or {}).get("system") or ""
        if isinstance(system, list):
            return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return str(system)

    def message_texts(self) -> list[str]:
        """Every text the request carries in its messages, in order (strings and text/tool_result blocks)."""
        out: list[str] = []
        for message in (self.body or {}).get("messages", []):
            out.extend(_texts(message.get("content")))
        return out

    def all_text(self) -> str:
        return self.system_text() + "\n" + "\n".join(self.message_texts())


def _texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content")))
    return out


def is_claude_code(request: Request) -> bool:
    """Sent by the CLI itself (`claude-cli/<version> ...`), not by memdir's own SDK calls from a hook."""
    return request.headers.get("user-agent", "").startswith("claude-cli/")


def is_main_agent(request: Request) -> bool:
    """The main conversation loop: the request that carries Claude Code's tool set.

    Side queries (title/summary generation, memory selection or extraction, ...) carry no tools or
    a tool set without the main agent's Bash/Edit tools.
    """
    if not is_claude_code(request):
        return False
    names = {t.get("name") for t in (request.body or {}).get("tools") or []}
    return "Bash" in names or "Edit" in names or "Write" in names


class Script:
    """Answers the main agent's turns in order and every other request from a callable.

    `main` holds Replies (or callables request -> Reply) for successive main-agent requests; past its
    end the main agent gets `fallback`. Claude Code's side queries (no main tool set: title, summary,
    memory selection/extraction where the version runs them) get `side_reply(request)`; requests that
    memdir itself sends from a hook or worker (the Python SDK, not `claude-cli/...`) get
    `memdir_reply(request)`.
    """

    def __init__(self, main: list | None = None, fallback: Reply | None = None,
                 side_reply: Callable[[Request], Reply] | None = None,
                 memdir_reply: Callable[[Request], Reply] | None = None) -> None:
        self.main = list(main or [])
        self.fallback = fallback or text("Done.")
        self.side_reply = side_reply or (lambda request: text("Done."))
        self.memdir_reply = memdir_reply or (lambda request: text("Done."))
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        if not is_claude_code(request):
            return self.memdir_reply(request)
        if not is_main_agent(request):
            return self.side_reply(request)
        with self._lock:
            step = self.main.pop(0) if self.main else self.fallback
        return step(request) if callable(step) else step


class _Handler(BaseHTTPRequestHandler):
    """One request to a ScriptedAPI (`self.server.api`): logged, then answered from its script."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def _record(self) -> Request:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        with self.server.api._lock:
            self.server.api.requests.append(request)
        return request

    def do_GET(self):  # noqa: N802
        self._record()
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

    def do_HEAD(self):  # noqa: N802
        self._record()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):  # noqa: N802
        request = self._record()
        path = self.path.split("?")[0]
        try:
            if path == "/v1/messages/count_tokens":
                size = len(json.dumps(request.body or {}))
                self._json(200, {"input_tokens": max(1, size // 4)})
            elif path == "/v1/messages":
                reply = self.server.api.script(request)
                if (request.body or {}).get("stream"):
                    self._stream(request, reply)
                else:
                    self._json(200, self.server.api._message(request, reply))
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
        except BrokenPipeError:
            pass
        except Exception as exc:  # a script bug must show in the test, not hang the CLI
            self.server.api.errors.append(f"{type(exc).__name__}: {exc}")
            self._json(500, {"type": "error", "error": {"type": "api_error", "message": str(exc)}})

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake{next(_ids):06d}")
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, request: Request, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_fake{next(_ids):06d}")
        self.send_header("connection", "close")
        self.end_headers()
        for event in self.server.api._events(request, reply):
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    """The loopback HTTP server of one ScriptedAPI, on a free port of 127.0.0.1."""

    def __init__(self, api: ScriptedAPI) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api


class ScriptedAPI:
    """A loopback Messages API. Use as a context manager; `url` goes into ANTHROPIC_BASE_URL."""

    def __init__(self, script: Callable[[Request], Reply] | None = None, model: str = "claude-sonnet-5-5") -> None:
        self.script = script or Script()
        self.model = model
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self.server = _Server(self)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)  # quick shutdown

    def _model(self, request: Request) -> str:
        return (request.body or {}).get("model") or self.model

    def _message(self, request: Request, reply: Reply) -> dict:
        return {"id": f"msg_fake{next(_ids):06d}", "type": "message", "role": "assistant",
                "model": self._model(request), "content": reply.content, "stop_reason": reply.stop_reason,
                "stop_sequence": None, "usage": reply.usage}

    def _events(self, request: Request, reply: Reply):
        start_usage = dict(reply.usage, output_tokens=1)
        message = dict(self._message(request, reply), content=[], stop_reason=None, usage=start_usage)
        yield {"type": "message_start", "message": message}
        for index, block in enumerate(reply.content):
            if block["type"] == "text":
                yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                yield {"type": "ping"}
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": block["text"]}}
            elif block["type"] == "tool_use":
                yield {"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
            else:
                raise ValueError(f"unsupported block type {block['type']!r}")
            yield {"type": "content_block_stop", "index": index}
        yield {"type": "message_delta", "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
               "usage": {"output_tokens": reply.usage.get("output_tokens", 1),
                         "input_tokens": reply.usage.get("input_tokens", 0),
                         "cache_creation_input_tokens": reply.usage.get("cache_creation_input_tokens", 0),
                         "cache_read_input_tokens": reply.usage.get("cache_read_input_tokens", 0)}}
        yield {"type": "message_stop"}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def messages(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_messages]

    def main_requests(self) -> list[Request]:
        return [r for r in self.messages() if is_main_agent(r)]

    def side_requests(self) -> list[Request]:
        """Claude Code's own requests other than the main loop's."""
        return [r for r in self.messages() if is_claude_code(r) and not is_main_agent(r)]

    def memdir_requests(self) -> list[Request]:
        """Requests memdir's hooks or worker sent (through the Python SDK)."""
        return [r for r in self.messages() if not is_claude_code(r)]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def __enter__(self) -> ScriptedAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
