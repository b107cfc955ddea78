"""The hook log (`.memdir/hook.log`): one redacted line per event, for `doctor` and for people.

Core, not entry: the embedding model and the background worker log here as well as the hooks.
"""

from __future__ import annotations

import os
import time

from memdir import constants as C


def log(memory_dir: str | os.PathLike | None, event: str, message: str) -> None:
    """Append one line to the hook log (secrets redacted, never through a symlink); never raises.

    The log goes into an existing memory folder's `.memdir/`, else `<config home>/memdir/`: logging
    never creates a memory folder.
    """
    try:
        from memdir import safefs_write
        from memdir.locate import config_home
        from memdir.secrets import redact

        if memory_dir is not None and os.path.isdir(memory_dir):
            root, rel = memory_dir, f"{C.STATE_DIRNAME}/{C.HOOK_LOG_NAME}"
        else:
            root, rel = config_home(), f"memdir/{C.HOOK_LOG_NAME}"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        flat = redact(" ".join(str(message).split())[:8000])[:2000]  # redacted before the cut: no half secret
        safefs_write.append_text(root, rel, f"{stamp} {redact(event)}: {flat}\n", rotate_at=C.HOOK_LOG_MAX_BYTES)
    except Exception:
        pass
