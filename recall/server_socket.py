"""Where the warm recall server's socket lives, who may use it, and the client end (issue 22 #3, issue 21).

The socket carries the user's prompts one way and text injected into them the other, so only its
user may reach it:
- It lives in a folder only the user owns: `$XDG_RUNTIME_DIR/memdir/` when that runtime folder is the
  user's own and 0700, else `<cache home>/memdir/run/` (`$XDG_CACHE_HOME` or `~/.cache`), created 0700.
  Both ends check the folder before use: a real directory (not a symlink), owned by this uid, no group
  or other permission bits. A folder that fails is never used, and never repaired.
- Never a shared, world-writable place such as /tmp: when no private folder gives a path within
  AF_UNIX's limit, there is no server and the hook answers in its own process.
- Both ends check the peer's uid (SO_PEERCRED; LOCAL_PEERCRED on macOS): the server drops a connection
  from another uid, the client refuses a server of another uid. Where neither exists, both refuse.
- Both ends derive the path from the environment; it is never in argv, which `ps` shows every user.

One server per user and memory root: the name hashes only what the server reads once, at start
(memdir's version, the Python, HOME, Claude's config home, the server-wide MEMDIR_* settings). The
endpoint, credentials and per-request settings travel with each request (`request_env`), so
sessions with different ANTHROPIC_BASE_URL ports share one server instead of each starting its own.

Stdlib only. Where the socket is, and the uid check, live in recall.socket_place, which the prompt hook
imports before anything else to send its question; this module is the rest of the client and the checks.
"""

from __future__ import annotations

import json
import os
import socket
import sys

from memdir import constants as C
from memdir.stages.recall import socket_place
from memdir.stages.recall.socket_place import (  # noqa: F401  (this module's names before the split)  # noqa: F401  (the client's reply reader)
    DISABLE_ENV,
    IDLE_SECONDS_ENV,
    MAX_PATH_BYTES,
    MAX_REPLY,
    PER_REQUEST_ENV,
    REQUEST_ENV_PREFIX,
    _key,
    enabled,
    folder_state,
    make_private_folder,
    owned_private,
    per_request,
    receive,
    request_env,
    socket_path,
)


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, or None where it cannot be known."""
    return socket_place.peer_uid(conn)


def same_user(conn: socket.socket) -> bool:
    uid = peer_uid(conn)
    return uid is not None and uid == os.getuid()


# --- client (runs in the prompt hook) -----------------------------------------------------------
def ask(request: dict, timeout: float, env=None) -> dict | None:
    """The server's answer, or None (no server, an unsafe folder, another user's server, too slow,
    or any error): the caller answers offline."""
    conn = send(request, timeout, env)
    if conn is None:
        return None
    with conn:
        return receive(conn)


def send(request: dict, timeout: float, env=None) -> socket.socket | None:
    """The connection `request` was sent on, for `receive`; None when there is no server to ask
    (none running, an unsafe folder, another user's server) or sending failed."""
    env = os.environ if env is None else env
    path = socket_path(env)
    if path is None or folder_state(path) != "private":
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path)
        if not same_user(conn):
            conn.close()
            return None  # never send a prompt to, or take text from, another user's process
        conn.sendall(json.dumps({**request, "env": request_env(env)}).encode() + b"\n")
    except (OSError, ValueError, RecursionError):
        conn.close()
        return None
    return conn


def start_in_background(env=None) -> bool:
    """Spawn a detached server (it exits by itself when idle); False when none can run safely here.

    The server finds its socket from the environment it inherits, as the client does: no path in argv.
    """
    env = os.environ if env is None else env
    path = socket_path(env)
    if path is None or not make_private_folder(path):
        return False
    try:
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        # -P: not the cwd (the project whose prompt started it) first on sys.path, for as long as it serves; nor
        # through an empty PYTHONPATH entry (child_env)
        from memdir.prompt_scope import child_env

        argv = [sys.executable, *C.PYTHON_UTF8_MODE, "-P", "-m", "memdir.stages.recall.server"]
        os.posix_spawn(sys.executable, argv, child_env(env), file_actions=devnull, setsid=True)
    except (OSError, AttributeError):
        return False
    return True
