"""Start `memdir ui`: bind 127.0.0.1 only, print the one URL with this run's token, open the browser."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from memdir.errors import MemdirError

LOOPBACK = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on loopback (port 0: any free one). Never another interface."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        raise MemdirError(f"--port {port}: cannot listen on {LOOPBACK}:{port} ({exc.strerror}); "
                          "pick another port or leave --port out for a free one") from None
    sock.listen(64)
    return sock


def serve(memory_dir: Path, *, port: int = 0, open_browser: bool = True, project_root: Path | None = None,
          user_home: Path | None = None) -> int:
    import uvicorn

    from memdir.entry.ui.app import Shell, build_app
    from memdir.entry.ui.security import Guard

    if port and not 1 <= port <= 65535:
        raise MemdirError(f"--port {port}: use a port from 1 to 65535, or leave it out for a free one")
    sock = bind(port)
    guard = Guard(sock.getsockname()[1])
    app = build_app(Shell(memory_dir, guard, project_root, user_home))

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            announce(memory_dir, guard.url, open_browser)  # only once it answers: the URL works when shown

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    Server(config).run(sockets=[sock])
    return 0


def announce(memory_dir: Path, url: str, open_browser: bool) -> None:
    print(f"memdir ui: serving {memory_dir} at {url} (Ctrl-C stops it)", flush=True)
    if open_browser:
        import webbrowser

        try:
            webbrowser.open(url)
        except Exception as exc:  # noqa: BLE001 - no browser here: the printed URL is enough
            print(f"memdir ui: could not open a browser ({exc}); open the URL above", file=sys.stderr)
