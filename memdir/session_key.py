"""Where a session's state lives in a folder: `.memdir/sessions/<key>`, one rule for every writer.

Claude Code's session ids (UUIDs) are their own key. Any other id (a hook payload is untrusted input) is reduced to
`[A-Za-z0-9_-]` and cut at 100 characters, then given a short hash of the whole id: reduced alone, `a/b`, `a\\x00b`
and `a-b` shared one folder, so a twin SessionStart of one said nothing for the other (hostile20).
"""

from __future__ import annotations

import re

from memdir import constants as C

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
KEY_MAX = 100


def session_rel(session_id: str) -> str:
    """`.memdir/sessions/<key>` for `session_id`, relative to the folder (opened through memdir.safefs)."""
    return f"{C.STATE_DIRNAME}/sessions/{session_key(session_id)}"


def session_key(session_id: str) -> str:
    if session_id and _SAFE.issuperset(session_id) and len(session_id) <= KEY_MAX:
        return session_id  # no pattern to compile in the hook for Claude Code's own ids
    import hashlib

    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    reduced = re.sub(r"[^A-Za-z0-9_-]", "-", session_id)[: KEY_MAX - 13]
    return f"{reduced}-{digest}" if reduced else f"default-{digest}"
