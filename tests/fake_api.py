"""A local stand-in for the Messages API, for tests that run memdir in real subprocesses.

respx can only patch the test's own process; a hook or worker started as a process reaches this
server instead through ANTHROPIC_BASE_URL (on loopback, as the network rules require).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Imported here, not per request: the validator reads the SDK's types (anthropic's ~2 s import),
# which would otherwise delay the first answer and skew tests that time concurrent processes.
from memdir.evals.api_validator import error_body, validate


class FakeAPI:
    def __init__(self, respond, delay: float = 0.0) -> None:
        """`respond(body: dict, n: int) -> dict` builds the JSON answer to the n-th request (0-based)."""
        self.respond, self.delay = respond, delay
        self.requests: list[dict] = []
        self.violations: list[str] = []  # requests the real API would reject (evals/api_validator.py)
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                errors = validate("POST", self.path.split("?")[0], raw)
                with api._lock:
                    n = len(api.requests)
                    api.requests.append(body)
                    if errors:
                        api.violations.append(f"POST {self.path}: " + "; ".join(errors))
                if api.delay:
                    time.sleep(api.delay)
                status, answer = (400, error_body(errors)) if errors else (200, api.respond(body, n))
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)  # quick shutdown

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.violations and exc[0] is None:
            raise AssertionError("requests the real API would reject:\n" + "\n".join(self.violations))
