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

Stdlib only and cheap to import: the prompt hook imports this module on every prompt.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import zlib

from memdir import constants as C
from memdir.switches import switched_on

DISABLE_ENV = C.RECALL_SERVER_ENV
IDLE_SECONDS_ENV = "MEMDIR_RECALL_SERVER_IDLE"
# sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, the final NUL included.
MAX_PATH_BYTES = 107 if sys.platform.startswith("linux") else 103
MAX_REPLY = 4 << 20  # the client reads at most this much: a reply is a few KB of rendered memories
# Read per request by the server, so they never split one user's server into several.
PER_REQUEST_ENV = frozenset({
    "MEMDIR_PATH", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",  # which memory folder (checked by the server)
    "MEMDIR_ENGINE", "MEMDIR_RECALL_MODEL", "MEMDIR_RECALL_TIMEOUT", "MEMDIR_EXTRACT_MODEL", "MEMDIR_JUDGE_MODEL",
    "MEMDIR_EXTRACT_LAST_N", "MEMDIR_EXTRACT_CHUNK_TOKENS", "MEMDIR_EXTRACT_EVERY", "MEMDIR_DAILY_TOKEN_BUDGET",
    "MEMDIR_MAX_ATTEMPTS",  # memdir.config.Settings, built from the request
    DISABLE_ENV, IDLE_SECONDS_ENV, "MEMDIR_WORKER_CWD",  # not read by a running server at all
})
REQUEST_ENV_PREFIX = "ANTHROPIC_"  # endpoint and credentials: one SDK client per distinct set


def enabled(env=None) -> bool:
    return hasattr(socket, "AF_UNIX") and switched_on(DISABLE_ENV, env)


def per_request(name: str) -> bool:
    return name.startswith(REQUEST_ENV_PREFIX) or name in PER_REQUEST_ENV


def request_env(env=None) -> dict[str, str]:
    """The part of the caller's environment that the server applies to this request only."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if per_request(k)}


def _key(env) -> str:
    from memdir import __version__
    from memdir.constants import CONFIG_HOME_ENV

    # HOME and CLAUDE_CONFIG_DIR: the memory root (config_home() reads HOME from os.environ, not `env`).
    facts = [__version__, sys.prefix, env.get("HOME", ""), env.get(CONFIG_HOME_ENV, "")]
    facts += [f"{k}={v}" for k, v in sorted(env.items()) if k.startswith("MEMDIR_") and not per_request(k)]
    data = "\x00".join(facts).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"  # hashlib's import costs the hook ~15 ms


def owned_private(folder: str) -> bool:
    """A real directory (not a symlink) owned by this uid, with no group or other permission bits."""
    try:
        info = os.lstat(folder)
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _runtime_dir(env) -> str | None:
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and owned_private(runtime):
        return os.path.join(os.path.normpath(runtime), "memdir")
    return None


def _cache_home(env) -> str | None:
    cache = env.get("XDG_CACHE_HOME", "")
    if os.path.isabs(cache):
        return os.path.normpath(cache)
    home = env.get("HOME", "")
    return os.path.join(os.path.normpath(home), ".cache") if os.path.isabs(home) else None


def socket_path(env=None) -> str | None:
    """The socket for this user and memory root, or None when no private folder gives a short
    enough path (then recall runs in the hook's process; never a shared folder such as /tmp)."""
    env = os.environ if env is None else env
    key = _key(env)
    candidates = []
    runtime = _runtime_dir(env)
    if runtime:
        candidates.append(os.path.join(runtime, f"recall-{key}.sock"))
    cache = _cache_home(env)
    if cache:
        candidates += [os.path.join(cache, "memdir", "run", f"recall-{key}.sock"),
                       os.path.join(cache, "memdir", "s", key)]  # the short form, for a long home path
    for path in candidates:
        if len(path.encode("utf-8", "surrogateescape")) <= MAX_PATH_BYTES:
            return path
    return None


def folder_state(path: str) -> str:
    """'private' (usable), 'missing' (the server will create it) or 'unsafe' (never used)."""
    folder = os.path.dirname(path)
    if owned_private(folder):
        return "private"
    return "missing" if not os.path.lexists(folder) else "unsafe"


def make_private_folder(path: str) -> bool:
    """Create the socket's folder 0700 if missing; True only when it then passes `owned_private`."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)
        os.mkdir(folder, 0o700)
        os.chmod(folder, 0o700)  # ours, just made: a umask of 0o7xx would otherwise lock us out
    except FileExistsError:
        pass  # checked below, as is: an existing folder is never loosened or taken over
    except OSError:
        return False
    return owned_private(folder)


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, or None where it cannot be known."""
    import struct

    try:
        if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid}
            return struct.unpack("iII", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if sys.platform == "darwin":  # SOL_LOCAL=0, LOCAL_PEERCRED=1: struct xucred {u_int version; uid_t uid; ...}
            return struct.unpack_from("=II", conn.getsockopt(0, 1, 76))[1]
    except OSError:
        return None
    return None


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


def receive(conn: socket.socket) -> dict | None:
    """The reply on a connection from `send`, within the timeout it was sent with; None on any failure."""
    try:
        chunks, size = [], 0
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY:
                return None
        reply = json.loads(b"".join(chunks))
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


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
        os.posix_spawn(sys.executable, [sys.executable, "-m", "memdir.stages.recall.server"], dict(env),
                       file_actions=devnull, setsid=True)
    except (OSError, AttributeError):
        return False
    return True
