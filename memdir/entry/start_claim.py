"""The SessionStart hook's last step: the session's start, claimed once (issue 21: each thing said once).

Claude Code merges only identical hook commands, so memdir registered with different commands in the user's and
the project's settings (two interpreters, `memdir` and a full path; `memdir doctor` names it) runs two
SessionStart hooks at once, and each printed memdir's whole session-start text: the model read it twice. As the
prompt hooks do (memdir.entry.prompt_claim), each takes the session's state lock (recall.state.held) for a read
and a write: the first records that the start was given, with its source and whether it held MEMORY.md; the
second, seeing that within C.SESSION_START_TWIN_SECONDS for the same source, says only what the first did not:
MEMORY.md when the first was registered with --no-index and it is not, else nothing.

The claim lives in the memory folder's state. Before the folder exists (Claude Code makes it with the first memory,
docs/claude-code.md) it lives in memdir's own folder under the config home (`~/.claude/memdir/`), where the hook log
goes then too: the memory folder is never made just for a claim, and the twins still find each other's.

A later start of the same session (resumed after quitting, compacted, cleared) is another start and says it all
again: the model's context no longer holds the first one's text. A lock not had within C.PROMPT_CLAIM_LOCK_SECONDS
gives the whole text: a repetition costs the model some context, a missing start costs the session its memory.
"""

from __future__ import annotations

import os
import posixpath
import time

from memdir import constants as C
from memdir.hooklog import log

ALL, INDEX, NOTHING = "all", "index", "nothing"


def start_part(memory_dir: str, session_id: str | None, source: str | None, with_index: bool) -> str:
    """What of its session-start text this hook may print: ALL, INDEX (only MEMORY.md, which the twin that
    spoke first left out) or NOTHING; what it prints is recorded as given. `with_index`: this hook's text
    holds MEMORY.md."""
    if not session_id:
        return ALL  # no session to claim for
    from memdir.errors import FolderBusy
    from memdir.stages.recall import state

    source = source or ""
    try:
        root = claim_root(memory_dir)
        with state.held(root, session_id, C.PROMPT_CLAIM_LOCK_SECONDS):
            now = time.time()
            said = state.start_said(root, session_id)
            if said is None or said[0] != source or not 0 <= now - said[1] < C.SESSION_START_TWIN_SECONDS:
                state.note_start(root, session_id, source, now, with_index)
                if root != memory_dir:  # memdir's own folder: claims of past sessions do not pile up there
                    prune_claims(root, posixpath.dirname(state._folder(session_id)), C.START_CLAIMS_KEPT)
                return ALL
            if with_index and not said[2]:
                state.note_start(root, session_id, source, said[1], True)
                log(memory_dir, "session-start", "another SessionStart hook gave this session's start without "
                    "MEMORY.md (memdir registered twice? see `memdir doctor`): only MEMORY.md added here")
                return INDEX
    except FolderBusy:
        log(memory_dir, "session-start", f"the session's state stayed locked for {C.PROMPT_CLAIM_LOCK_SECONDS}s by "
            "another memdir process: the session's start was given here whatever another hook said")
        return ALL
    except OSError as exc:
        log(memory_dir, "session-start", f"the session's start could not be claimed ({exc}): given here all the same")
        return ALL
    log(memory_dir, "session-start", "another SessionStart hook gave this session's start already (memdir registered "
        "twice? see `memdir doctor`): nothing said here")
    return NOTHING


def claim_root(memory_dir: str) -> str:
    """The folder whose state holds the claim: the memory folder, or memdir's own before the memory folder exists."""
    if os.path.isdir(memory_dir):
        return memory_dir
    from memdir import safefs_write
    from memdir.locate import config_home

    # Made without following a link, by descriptor or (native Windows) by checked path: safefs.open_dir alone
    # refused the latter, so there no claim was made and both twins gave the whole start.
    safefs_write.mkdirs(config_home(), C.MEMDIR_HOME_DIRNAME)
    return os.path.join(config_home(), C.MEMDIR_HOME_DIRNAME)


def prune_claims(root: str, base: str, keep: int) -> int:
    """Past 2 * `keep` session folders in `base` (inside `root`), the oldest (by when their start was given) beyond
    `keep` are removed; what cannot be removed stays. Only for memdir's own folder, where a session's folder holds
    nothing but its start claim (a memory folder's hold extraction cursors). How many were removed."""
    from memdir import safefs, safefs_write

    names = [name for name, kind in safefs.listdir(root, base) if kind == "dir"]
    if len(names) <= 2 * keep:
        return 0

    def given(name: str) -> float:
        st = safefs.lstat(root, f"{base}/{name}/started.json")
        return st.st_mtime if st else 0.0

    removed = 0
    for name in sorted(names, key=given)[: len(names) - keep]:
        try:
            for entry, kind in safefs.listdir(root, f"{base}/{name}"):
                if kind in ("file", "symlink"):  # a link itself is removed, never followed
                    safefs_write.unlink(root, f"{base}/{name}/{entry}")
            safefs_write.rmdir(root, f"{base}/{name}")
            removed += 1
        except OSError:
            continue
    return removed
