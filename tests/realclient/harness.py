"""Real-client harness: the pinned `claude` CLI from npm against a scripted Messages API on 127.0.0.1.

Three parts, usable from any test (fixtures in conftest.py wrap them):
- `claude_code_bin()` installs a pinned `@anthropic-ai/claude-code` into a cache folder outside the
  repo (reused when present) and returns the `claude` executable;
- `ScriptedAPI` is a loopback Anthropic Messages API: streaming SSE exactly as Claude Code consumes it,
  non-streaming JSON, `/v1/messages/count_tokens`; it logs every request and answers from a script;
- `run_claude()` runs `claude -p` in a temp HOME and a temp git repo with a timeout.

No traffic leaves 127.0.0.1: ANTHROPIC_BASE_URL points at the fake and nonessential traffic is off.

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
import os
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


# --- the scripted Messages API ----------------------------------------------------------------

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


class ScriptedAPI:
    """A loopback Messages API. Use as a context manager; `url` goes into ANTHROPIC_BASE_URL."""

    def __init__(self, script: Callable[[Request], Reply] | None = None, model: str = "claude-sonnet-5-5") -> None:
        self.script = script or Script()
        self.model = model
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _record(self) -> Request:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with api._lock:
                    api.requests.append(request)
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
                        reply = api.script(request)
                        if (request.body or {}).get("stream"):
                            self._stream(request, reply)
                        else:
                            self._json(200, api._message(request, reply))
                    else:
                        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
                except BrokenPipeError:
                    pass
                except Exception as exc:  # a script bug must show in the test, not hang the CLI
                    api.errors.append(f"{type(exc).__name__}: {exc}")
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
                for event in api._events(request, reply):
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

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
