"""Prompt templates rendered once and cached on disk, so the hooks need not import jinja2.

Core, not prompts: the cache lives in the memory folder's `.memdir/cache/` and is read and written
through safefs; `memdir.prompts` itself only knows its templates.
"""

from __future__ import annotations

import os
import re

from memdir.prompts import TEMPLATES_DIR, VARIANT_ENV, render

_SLOT = re.compile("\x00([a-z_]+)\x00")


_read: dict[tuple[str, str], str] = {}  # skeletons this process read and checked: a prompt renders ~6 alike


def render_slotted(
    template: str,
    /,
    *,
    slots: dict[str, str],
    cache_dir: str | os.PathLike | None,
    variant: str | os.PathLike | None = None,
    **context: object,
) -> str:
    """`render`, but the output skeleton is cached on disk so hot paths need not import jinja2.

    `slots` are values the template only prints (never tests): the template is rendered once with
    a marker in each slot's place, the result is cached under the template's name, a checksum of
    its source and the remaining `context`, and later calls fill the markers in with one regex pass.
    jinja2 costs ~35 ms to import, a third of the prompt hook's budget; a cache hit costs ~0.1 ms.
    """
    chosen = variant if variant is not None else os.environ.get(VARIANT_ENV) or None
    chosen_file = os.path.join(chosen, template) if chosen else None
    source_file = chosen_file if chosen_file and os.path.exists(chosen_file) else os.path.join(TEMPLATES_DIR, template)
    skeleton = None
    cache_file = None
    secret = _user_secret() if cache_dir is not None else None
    if cache_dir is not None and secret is not None:
        import zlib

        with open(source_file, "rb") as handle:
            source = handle.read()
        facts = ",".join(f"{k}={context[k]!r}" for k in sorted(context))
        key = f"{template}-{zlib.crc32(source):08x}-{len(source)}-{zlib.crc32(facts.encode()):08x}"
        # cache_dir is <memory>/.memdir/cache: opened from the memory folder down, never through a
        # symlink, and a skeleton is used only under this user's tag (see _tag).
        from memdir import safefs, safefs_write

        state_dir, cache_name = os.path.split(os.fspath(cache_dir).rstrip(os.sep))
        cache_root, state_name = os.path.split(state_dir)
        cache_file = f"{state_name}/{cache_name}/{key}"
        skeleton = _read.get((str(cache_root), cache_file))
        if skeleton is None:
            try:
                tag, _, skeleton = safefs.read_text(cache_root, cache_file, 1024 * 1024).partition("\n")
                if tag != _tag(secret, skeleton):
                    skeleton = None
            except OSError:
                skeleton = None
            if skeleton is not None:
                _read[(str(cache_root), cache_file)] = skeleton
    if skeleton is None:
        markers = {name: f"\x00{name}\x00" for name in slots}
        skeleton = render(template, variant=chosen, **context, **markers)
        if cache_file is not None and secret is not None:
            try:
                safefs_write.write_text(cache_root, cache_file, f"{_tag(secret, skeleton)}\n{skeleton}", durable=False)
            except OSError:
                pass  # a read-only folder only costs the next call a render
    return _SLOT.sub(lambda m: slots.get(m.group(1), m.group(0)), skeleton)


# A skeleton is the frame around recalled memories, and the memory folder may come from a cloned repository or
# a synced team folder: anyone can compute a cache file's name and plant one (a hostile review did, and its text
# reached the agent's context). So each skeleton carries a keyed hash under a secret that lives in this user's
# own cache home, outside every memory folder; a file without the right tag is rendered again.
SECRET_NAME = "template-cache.key"
_secret: bytes | None = None


def _user_secret() -> bytes | None:
    """This user's 32-byte key (created on first use, mode 0600), or None: then nothing is cached."""
    global _secret
    if _secret is None:
        home = os.environ.get("XDG_CACHE_HOME", "")
        if not os.path.isabs(home):
            user_home = os.environ.get("HOME", "")
            home = os.path.join(user_home, ".cache") if os.path.isabs(user_home) else ""
        if not home:
            return None
        path = os.path.join(home, "memdir", SECRET_NAME)
        try:
            with open(path, "rb") as handle:
                _secret = handle.read(64)
        except FileNotFoundError:
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(os.urandom(32))
            except OSError:
                pass  # created by another process meanwhile, or not writable: read whatever is there
            try:
                with open(path, "rb") as handle:
                    _secret = handle.read(64)
            except OSError:
                return None
        except OSError:
            return None
        if len(_secret or b"") < 16:
            _secret = None
    return _secret


def _tag(secret: bytes, skeleton: str) -> str:
    try:
        from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import
    except ImportError:  # pragma: no cover - CPython always has it
        from hashlib import blake2b
    return blake2b(skeleton.encode("utf-8", "surrogatepass"), key=secret[:64], digest_size=16).hexdigest()
