"""The relay engine: a Messages API on 127.0.0.1 whose model is a person, or another agent, reading files.

memdir runs unchanged: its anthropic engine is pointed at this server through ANTHROPIC_BASE_URL. Each
`POST /v1/messages` is checked by the strict validator (evals/api_validator.py: what the real API would
reject is answered with its 400 and fails the run), then handed to whatever answers it (`answer`): the
relay folder, a cassette or the real API (evals/model_loop.py chains them).

The relay folder (`RelayDir`): request NNNN is written as `NNNN.request.json` (the body as sent) and
`NNNN.request.md` (what the model sees, with how to answer), and the server waits for
`NNNN.response.json`: a Messages API response body, or the short form `{"content": [...], "stop_reason":
...}` with id, model, usage and tool_use ids filled in; a request that asks for a structured output
(`output_config.format`) takes its JSON as the text, checked against the schema (evals/structured_answer.py).
An answer that is not valid yet is reported in
`NNNN.response.problem.txt` and read again when the file changes. No answer within MEMDIR_RELAY_TIMEOUT
seconds (default 1800) fails the run with one line.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from memdir.errors import MemdirError
from memdir.evals.api_validator import validate
from memdir.evals.request_text import render_for_relay, session_tag
from memdir.evals.structured_answer import answer_problem, output_schema
from memdir.fsio import atomic_write_text
from memdir.record import Record

TIMEOUT_ENV = "MEMDIR_RELAY_TIMEOUT"
DEFAULT_TIMEOUT = 1800.0
POLL_SECONDS = 0.2
SHUTDOWN_POLL_SECONDS = 0.05  # the loopback's serve_forever: how soon a finished run's server is gone
SETTLE_SECONDS = 1.0  # an answer file that fails to parse this soon after a write may be half written


class LoopError(Exception):
    """Ends the eval run: the message is the one line it prints. Answered to memdir as a non-retryable error."""

    def __init__(self, message: str, status: int = 500, kind: str = "api_error") -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


class PassThrough(Exception):  # noqa: N818 - not an error of the loop: an upstream answer passed on as is
    """An upstream (real API) error answer, passed on unchanged so memdir's own retry rules apply."""

    def __init__(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        super().__init__(f"upstream answered {status}")
        self.status, self.body, self.headers = status, body, dict(headers)


class Incoming(Record):
    path: str  # with its query string
    body: dict
    headers: dict


def relay_timeout(env: Mapping[str, str] | None = None) -> float:
    env = os.environ if env is None else env
    raw = env.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise MemdirError(f"${TIMEOUT_ENV}={raw!r} must be a positive number of seconds, e.g. {TIMEOUT_ENV}=1800")
    return value


class LoopbackAPI:
    """The HTTP side: validation, routing, and the first failure (`failure`) that ends the run."""

    def __init__(self, answer: Callable[[Incoming], dict]) -> None:
        self.answer = answer
        self.failure: str | None = None
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        # Polled every 50 ms for shutdown, not every 500: each run's end waited up to half a second for it.
        self.thread = threading.Thread(target=self.server.serve_forever, args=(SHUTDOWN_POLL_SECONDS,),
                                       name="memdir-eval-loopback", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> LoopbackAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail(self, message: str) -> None:
        with self._lock:
            self.failure = self.failure or message

    def reply(self, method: str, raw_path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, dict]:
        """(status, body, headers) for one HTTP request."""
        path = raw_path.split("?")[0].rstrip("/")
        if method == "POST" and path.endswith("/v1/messages/count_tokens"):
            return 200, json.dumps({"input_tokens": max(1, len(raw) // 4)}).encode(), {}
        if method != "POST" or not path.endswith("/v1/messages"):
            return self._error(404, "not_found_error", f"the eval loopback answers POST /v1/messages only, "
                                                       f"not {method} {path} (batches are not relayed)")
        beta = bool(headers.get("anthropic-beta")) or "beta=true" in raw_path
        errors = validate("POST", path, raw, beta=beta)
        if errors:
            return self._error(400, "invalid_request_error",
                               "memdir sent a request the real API would reject: " + "; ".join(errors))
        try:
            body = self.answer(Incoming(path=raw_path, body=json.loads(raw), headers=dict(headers)))
        except PassThrough as upstream:
            return upstream.status, upstream.body, upstream.headers
        except LoopError as exc:
            return self._error(exc.status, exc.kind, str(exc))
        except Exception as exc:  # noqa: BLE001 - a fault of the loop itself ends the run in one line, not a hang
            return self._error(500, "api_error", f"the eval loop failed: {type(exc).__name__}: {exc}")
        return 200, json.dumps(body, ensure_ascii=False).encode("utf-8"), {}

    def _error(self, status: int, kind: str, message: str) -> tuple[int, bytes, dict]:
        self.fail(message)
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return status, json.dumps(body).encode(), {"x-should-retry": "false"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload, extra = api.reply(method, self.path, raw, headers)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for name, value in extra.items():
                        if name.lower() in ("retry-after", "retry-after-ms", "x-should-retry", "request-id"):
                            self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout) and asks again: the retry gets the same answer

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def log_message(self, *args: object) -> None:
                pass

        return Handler


class ResponseError(ValueError):
    """An answer file that is not a usable Messages API response; one line, naming the field."""


def complete_response(answer: object, request: dict, number: str) -> dict:
    """A full Messages API response from an answer file (the full form or the short form)."""
    if not isinstance(answer, dict):
        raise ResponseError('must be a JSON object such as {"content": [...], "stop_reason": "end_turn"}')
    content = answer.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise ResponseError('`content` must be a list of blocks, e.g. [{"type": "text", "text": "..."}]')
    tools = sorted(str(t.get("name")) for t in request.get("tools") or [])
    blocks = []
    for i, block in enumerate(content):
        block = dict(block)
        if block.get("type") == "tool_use":
            if block.get("name") not in tools:
                raise ResponseError(f"content.{i}: tool {block.get('name')!r} is not one of this request's tools "
                                    f"({', '.join(tools) or 'none'})")
            if not isinstance(block.get("input"), dict):
                raise ResponseError(f"content.{i}: a tool_use needs `input`, a JSON object of the tool's arguments")
            block.setdefault("id", f"toolu_relay_{number}_{i}")
        blocks.append(block)
    calls = any(b.get("type") == "tool_use" for b in blocks)
    full = {
        "id": answer.get("id") or f"msg_relay_{number}", "type": "message", "role": "assistant",
        "model": answer.get("model") or request.get("model"), "content": blocks,
        "stop_reason": answer.get("stop_reason") or ("tool_use" if calls else "end_turn"),
        "stop_sequence": answer.get("stop_sequence"),
        "usage": answer.get("usage") or {"input_tokens": len(json.dumps(request)) // 4,
                                         "output_tokens": max(1, len(json.dumps(blocks)) // 4)},
    }
    schema = output_schema(request)
    problem = answer_problem(blocks, schema) if schema is not None and full["stop_reason"] == "end_turn" else None
    if problem:
        raise ResponseError(f"content: {problem}")
    from anthropic.types import Message
    from pydantic import ValidationError

    try:
        Message.model_validate(full)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ResponseError(f"{where}: {first['msg']}") from None
    return full


def _say(message: str) -> None:
    print(f"memdir relay: {message}", file=sys.stderr, flush=True)


class RelayDir:
    """Hands requests to whoever acts as the model, as files in `folder`, and waits for each answer."""

    def __init__(self, folder: Path, timeout: float, poll: float = POLL_SECONDS) -> None:
        self.folder, self.timeout, self.poll = folder, timeout, poll
        folder.mkdir(parents=True, exist_ok=True)
        numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9].request.json")]
        self._next = max(numbers, default=0) + 1  # a second run in the same folder never overwrites the first
        self._asked: dict[str, tuple[str, float]] = {}  # request key -> (number, deadline): the SDK's retries wait too
        self._lock = threading.Lock()

    def ask(self, body: dict, key: str, session: str, note: str = "") -> dict:
        """The answer to `body` (the SDK's retries of one request share it); `note`: why it was not replayed."""
        with self._lock:
            if key not in self._asked:
                number = f"{self._next:04d}"
                self._next += 1
                self._asked[key] = (number, time.monotonic() + self.timeout)
                self._write(number, body, session, note)
            number, deadline = self._asked[key]
        return self._wait(number, body, deadline)

    def _write(self, number: str, body: dict, session: str, note: str) -> None:
        # Each file whole or not at all, and the `.md` (the one we tell whoever answers to read) last: once it
        # exists, so does the body as sent.
        atomic_write_text(self.folder / f"{number}.request.json", json.dumps(body, indent=1, ensure_ascii=False) + "\n",
                          durable=False)
        atomic_write_text(self.folder / f"{number}.request.md",
                          render_for_relay(body, number=number, session=session), durable=False)
        _say(f"request {number}{f' (session {session_tag(session)})' if session else ''}: read {self.folder / f'{number}.request.md'}, "
             f"answer in {number}.response.json" + (f" (not in the cassette: {note})" if note else ""))

    def _wait(self, number: str, body: dict, deadline: float) -> dict:
        answer = self.folder / f"{number}.response.json"
        problem = self.folder / f"{number}.response.problem.txt"
        seen: tuple[int, int] | None = None
        while time.monotonic() <= deadline:
            try:
                stat = answer.stat()
            except FileNotFoundError:
                stat = None
            if stat is not None and (stat.st_mtime_ns, stat.st_size) != seen:
                outcome = self._read(answer, body, number, settled=time.time() - stat.st_mtime >= SETTLE_SECONDS)
                if isinstance(outcome, dict):
                    problem.unlink(missing_ok=True)
                    return outcome
                if outcome is not None:  # a problem to fix, said once per version of the file
                    seen = (stat.st_mtime_ns, stat.st_size)
                    message = f"{answer.name}: {outcome}; fix the file (it is read again when it changes)"
                    # Whole or not at all: whoever answers (and the tests) may read it the moment it appears.
                    partial = problem.with_name(problem.name + ".part")
                    partial.write_text(message + "\n", encoding="utf-8")
                    os.replace(partial, problem)
                    _say(message)
            time.sleep(self.poll)
        raise LoopError(f"no answer in {answer} within {self.timeout:g} s (${TIMEOUT_ENV}); answer the request "
                        f"in {number}.request.md and run again", status=504, kind="timeout_error")

    @staticmethod
    def _read(answer: Path, body: dict, number: str, *, settled: bool) -> dict | str | None:
        """The full response, or what is wrong with the file, or None: not JSON yet but perhaps half written."""
        try:
            return complete_response(json.loads(answer.read_text(encoding="utf-8")), body, number)
        except json.JSONDecodeError as exc:
            return f"not valid JSON ({exc})" if settled else None
        except (ValueError, OSError) as exc:
            return " ".join(str(exc).split())
