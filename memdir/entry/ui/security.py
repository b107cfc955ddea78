"""The browser's guard: the page shows text that transcripts and other agents wrote, on a port any local
process or web page could try to reach, so every request passes here first.

- Host must be this server's loopback address (a DNS-rebinding page names its own host).
- Everything is served under a random per-run path (`/<base>/`), and the cookie is scoped to that path.
  Browsers send a cookie to every port of a host (cookies ignore the port, and SameSite counts every port
  of 127.0.0.1 as the same site): scoped to `/`, any other server on 127.0.0.1 the browser visits would
  receive this run's token. Scoped to a path no one else knows, it goes only where this server is.
  The pages link relatively, so every link stays under that path.
- A random per-run token, given once in the URL the command prints, becomes an HttpOnly,
  SameSite=Strict cookie (as Jupyter does); the URL is then redirected to drop it. Without the cookie
  nothing is served.
- Every write (any method but GET/HEAD) needs a same-origin Origin header and the per-run CSRF token.
- Every answer carries a strict Content-Security-Policy: scripts and styles from this server's own files
  only, nothing inline, no framing, forms post only here.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # "no-referrer" makes Chromium send `Origin: null` on form posts
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
SAFE_METHODS = ("GET", "HEAD")


class Guard:
    """The per-run secrets and the checks; `port` is the port actually bound."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.token = token or secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.cookie = f"memdir_ui_{port}"
        self.base = f"/{secrets.token_urlsafe(18)}/"  # the run's path: the cookie goes nowhere else
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base}?{urlencode({'token': self.token})}"

    def _same(self, given: str | None, secret: str) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), secret.encode())

    def refusal(self, request: Request) -> Response | None:
        """None when the request may go on; else the answer that refuses it (or trades the token for a cookie)."""
        if request.headers.get("host", "") not in self.hosts:
            return PlainTextResponse("memdir ui: refused: unexpected Host header (open the URL `memdir ui` printed)",
                                     status_code=400)
        if not request.url.path.startswith(self.base):
            return PlainTextResponse("memdir ui: nothing here; open the URL `memdir ui` printed in the terminal",
                                     status_code=404)
        given = request.query_params.get("token")
        if given is not None:
            if not self._same(given, self.token):
                return PlainTextResponse("memdir ui: wrong token; open the URL `memdir ui` printed", status_code=403)
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = URL(str(request.url.path) + (f"?{urlencode(rest)}" if rest else ""))
            response = RedirectResponse(str(target), status_code=303)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path=self.base)
            return response
        if not self._same(request.cookies.get(self.cookie), self.token):
            return PlainTextResponse("memdir ui: no session here; open the URL `memdir ui` printed in the terminal "
                                     "(it holds this run's token)", status_code=403)
        if request.method not in SAFE_METHODS and request.headers.get("origin") not in self.origins:
            return PlainTextResponse("memdir ui: refused a write from another origin", status_code=403)
        return None

    def check_csrf(self, given: object) -> bool:
        return isinstance(given, str) and self._same(given, self.csrf)


class GuardMiddleware:
    """ASGI middleware: `Guard.refusal` before the app, the security headers on every answer."""

    def __init__(self, app, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        refused = self.guard.refusal(Request(scope))
        if refused is not None:
            await refused(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)
