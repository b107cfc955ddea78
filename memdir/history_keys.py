"""The name of a memory's history folder: one key per path, and back, and the names an older memdir used.

The key is the path relative to the memory folder with `%`, `/` and every second `_` of a run escaped
(`team/notes.md` -> `team%2Fnotes.md`, `a__b.md` -> `a_%5Fb.md`), so no two paths share a folder and a deleted
memory's history is still found by its name. A path that looks like a secret, or whose key would not fit in a folder
name, gets a hash instead. Before this scheme the key was the path with `/` turned into `__` (`legacy_key`): those
folders are still read, and `spellings` lists the paths one of them may have been. Pure string work: where the
folders are and what is in them is memdir/history.py's.
"""

from __future__ import annotations

import hashlib
import itertools
import re

_SECRET_KEY_PREFIX = "%secret-"  # never produced by the escaping below (`%` is always `%25`, `%2F`, `%5F`)
_LONG_KEY_PREFIX = "%long-"  # a path whose escaped key would not fit in a folder name: its hash
_MAX_KEY_BYTES = 200
_ESCAPED = {"%25": "%", "%2F": "/", "%5F": "_"}
_MAX_SPELLINGS = 64  # bound on the old-scheme spellings checked for one path
_MAX_RUN = 32  # longer runs of `_` are checked as written only
# The prefixes of a key that is a hash of its path, not the path escaped: such a key cannot be read back.
HASHED_KEY_PREFIXES = (_SECRET_KEY_PREFIX, _LONG_KEY_PREFIX)


def legacy_flat(rel_path: str) -> str:
    """The old scheme's key: the path with `/` as `__`."""
    return rel_path.replace("/", "__")


def secret_name(rel_path: str) -> bool:
    """Does the path look like a secret (then its key, new or old, is a hash of it)?"""
    from memdir.secrets import looks_secret

    flat = legacy_flat(rel_path)
    return looks_secret(flat) or looks_secret(flat.replace("_", "-"))


def file_key(rel_path: str) -> str:
    """The history folder name for `rel_path`, one per path (decoded by `decode_key`). A name that
    looks like a secret is replaced by a hash, so no secret (or slug of one) ever becomes a file name
    under .memdir/ (issue 9)."""
    if secret_name(rel_path):
        return f"{_SECRET_KEY_PREFIX}{hashlib.sha256(rel_path.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    escaped = _escape(rel_path)
    if len(escaped.encode("utf-8", "surrogatepass")) > _MAX_KEY_BYTES:  # a folder name has 255 bytes at most
        return f"{_LONG_KEY_PREFIX}{hashlib.sha256(rel_path.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"
    return escaped


def _escape(rel_path: str) -> str:
    out, previous = [], ""
    for ch in rel_path:
        if ch == "%":
            out.append("%25")
        elif ch == "/":
            out.append("%2F")
        elif ch == "_" and previous == "_":
            out.append("%5F")  # so a key never holds `__`, the old scheme's separator
        else:
            out.append(ch)
        previous = ch
    return "".join(out)


def decode_key(key: str) -> str:
    """The path whose key is `key` (not for a hashed key: HASHED_KEY_PREFIXES)."""
    return re.sub("%(25|2F|5F)", lambda m: _ESCAPED[m.group(0)], key)


def legacy_key(rel_path: str) -> str:
    """The key memdir wrote before the injective scheme (read only, never written)."""
    flat = legacy_flat(rel_path)
    if secret_name(rel_path):
        return f"memory-{hashlib.sha256(flat.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}.md"
    return flat


def spellings(flat: str) -> list[str]:
    """Paths whose old key is `flat` (at most _MAX_SPELLINGS): each run of `_` may have been `_`s and
    `/`s (`/` = `__`)."""
    found = [""]
    for run in re.split(r"(_{2,})", flat):
        ways = list(itertools.islice(_runs(len(run)), _MAX_SPELLINGS)) if run.startswith("__") else [run]
        found = [f + w for f in found for w in ways][:_MAX_SPELLINGS]
    return found


def _runs(n: int):
    """Each way to write a run of `n` underscores as `_` and `/` (lazily: a long run has very many)."""
    if n < 2 or n > _MAX_RUN:
        yield "_" * n  # past _MAX_RUN only the literal run: the recursion stays shallow
        return
    for rest in _runs(n - 1):
        yield "_" + rest
    for rest in _runs(n - 2):
        yield "/" + rest
