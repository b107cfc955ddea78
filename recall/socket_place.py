"""Where the warm recall server's socket lives and who may use it (recall.server_socket has the rules).

Split from the socket client so the prompt hook can find the server and send its question (memdir.entry.
early_ask) before it imports anything else: `socket` and `json` pull in `enum` and `re`, some 10 ms of a
hook whose whole budget is four bare Python starts. Stdlib only: os, stat, sys, zlib and `_socket`.
"""

from __future__ import annotations

import os
import stat
import sys
import zlib

from memdir import constants as C
from memdir.switches import SWITCHES, switched_on

DISABLE_ENV = C.RECALL_SERVER_ENV
IDLE_SECONDS_ENV = "MEMDIR_RECALL_SERVER_IDLE"
# sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, the final NUL included.
MAX_PATH_BYTES = 107 if sys.platform.startswith("linux") else 103
# Read per request by the server, so they never split one user's server into several.
PER_REQUEST_ENV = frozenset({
    "MEMDIR_PATH", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",  # which memory folder (checked by the server)
    "MEMDIR_ENGINE", "MEMDIR_RECALL_MODEL", "MEMDIR_RECALL_TIMEOUT", "MEMDIR_EXTRACT_MODEL", "MEMDIR_JUDGE_MODEL",
    "MEMDIR_EXTRACT_LAST_N", "MEMDIR_EXTRACT_CHUNK_TOKENS", "MEMDIR_EXTRACT_EVERY", "MEMDIR_DAILY_TOKEN_BUDGET",
    "MEMDIR_MAX_ATTEMPTS",  # memdir.config.Settings, built from the request
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE",  # whether Claude Code loaded the index (early questions)
    DISABLE_ENV, IDLE_SECONDS_ENV, "MEMDIR_WORKER_CWD",  # not read by a running server at all
})
REQUEST_ENV_PREFIX = "ANTHROPIC_"  # endpoint and credentials: one SDK client per distinct set


def enabled(env=None) -> bool:
    import _socket

    return hasattr(_socket, "AF_UNIX") and switched_on(DISABLE_ENV, env)


def per_request(name: str) -> bool:
    return name.startswith(REQUEST_ENV_PREFIX) or name in PER_REQUEST_ENV


def request_env(env=None) -> dict[str, str]:
    """The part of the caller's environment that the server applies to this request only."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if per_request(k)}


def _key(env) -> str:
    import memdir
    from memdir.constants import CONFIG_HOME_ENV

    # HOME and CLAUDE_CONFIG_DIR: the memory root (config_home() reads HOME from os.environ, not `env`). The
    # install is told by where memdir runs from and the folder of the Python running it, not sys.prefix: a hook
    # runs without `site` (memdir.entry.install), which is what sets sys.prefix to a virtual environment's, and must
    # find the server its session started (with this very interpreter). The interpreter's folder tells apart two
    # environments with one checkout installed editable, where memdir's folder is the same; its folder, not its
    # path: `python` and `python3` there are one environment.
    facts = [memdir.__version__, os.path.dirname(memdir.__file__ or ""), os.path.dirname(sys.executable or ""),
             env.get("HOME", ""), env.get(CONFIG_HOME_ENV, "")]
    facts += [f"{k}={v}" for k, v in sorted(env.items())
              if k.startswith("MEMDIR_") and not per_request(k) and k not in SWITCHES]
    # an on/off setting as what it means: MEMDIR_DENSE unset, `1` or `yes` reach one server (unset and `1` started two)
    facts += [f"{k}=off" for k in sorted(SWITCHES) if not per_request(k) and not switched_on(k, env)]
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


def peer_uid(conn) -> int | None:
    """The uid of the process at the other end of a Unix socket (a `socket.socket` or a bare `_socket`
    one), or None where it cannot be known."""
    import _socket

    try:
        if hasattr(_socket, "SO_PEERCRED"):  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid}
            return int.from_bytes(conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)[4:8], sys.byteorder)
        if sys.platform == "darwin":  # SOL_LOCAL=0, LOCAL_PEERCRED=1: struct xucred {u_int version; uid_t uid; ...}
            return int.from_bytes(conn.getsockopt(0, 1, 76)[4:8], sys.byteorder)
    except OSError:
        return None
    return None


MAX_REPLY = 4 << 20  # the client reads at most this much: a reply is a few KB of rendered memories


def receive(conn) -> dict | None:
    """The reply on a connection from server_socket.send or early_ask (a `socket.socket` or a bare `_socket`
    one), within the timeout it was sent with; None on any failure."""
    try:
        chunks, size = [], 0
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY:
                return None
    except OSError:
        return None
    return parse_reply(b"".join(chunks))


def parse_reply(data: bytes) -> dict | None:
    """A whole reply's bytes as the dict the server sent (whitespace before it allowed), or None."""
    from memdir import light_json  # not json: with a stuck server this runs beside the local recall, and importing
    # json there (re, its scanner) cost the race ~1.5 ms of CPU that no server at all never pays

    try:
        reply = light_json.loads(data.decode("utf-8"))  # not UTF-8: UnicodeDecodeError, a ValueError
    except (ValueError, RecursionError):
        return None
    return reply if isinstance(reply, dict) else None
