"""`memdir status`: each decision tier healthy / degraded / unavailable, with the reason (SPEC §8).

Read-only: it never creates, repairs or rewrites anything. `folder` is the decisions folder
(memdir.paths.decisions_dir): the memory folder's `.memdir/decisions/`, or the repository's
`.claude/memory/` in OrchestKit's layout.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from memdir import constants as C, graph, safefs
from memdir.decision_context import unread_repo_journal
from memdir.decisions import journal_path, read_journal
from memdir.paths import decisions_dir, orchestkit_compat


@dataclass(frozen=True)
class TierHealth:
    tier: str
    state: str  # healthy | degraded | unavailable
    reason: str

    def as_dict(self) -> dict:
        return asdict(self)


def _lines(path: Path) -> int:
    """Non-blank lines of the queue; a FIFO or device there raises UnsafePath (graph.open_read), for the reason."""
    try:
        with graph.open_read(path) as handle:
            return sum(1 for raw in handle if raw.strip())
    except safefs.UnsafePath:
        raise
    except OSError:
        return 0


def _dir_problem(folder: Path) -> str:
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    return ""


def graph_health(folder: Path) -> TierHealth:
    name = "1 graph"
    path, queue = graph.graph_path(folder), graph.queue_path(folder)
    try:
        depth = _lines(queue)
    except safefs.UnsafePath as exc:
        return TierHealth(name, "degraded", str(exc))
    if not path.exists() and not queue.exists() and not folder.is_dir():
        return TierHealth(name, "unavailable", f"no decisions folder {folder} yet: nothing captured yet")
    problem = graph.writable_problem(path)
    if problem:
        return TierHealth(name, "degraded", f"graph file unwritable ({problem}); {depth} operation(s) wait in {queue}")
    loaded = graph.load_graph(path)
    if loaded.corrupt_lines:
        return TierHealth(name, "degraded", f"{path}: {loaded.corrupt_lines} corrupt line(s) skipped")
    if depth > C.QUEUE_DEGRADED_DEPTH:
        return TierHealth(name, "degraded", f"queue depth {depth} > {C.QUEUE_DEGRADED_DEPTH}: the Stop worker is not "
                                            f"flushing (see .memdir/hook.log)")
    return TierHealth(name, "healthy", f"{len(loaded.entities)} entities, {len(loaded.relations)} relations, "
                                       f"queue depth {depth} ({path})")


def journal_health(folder: Path) -> TierHealth:
    name = "2 journal"
    if not folder.is_dir():
        return TierHealth(name, "unavailable", f"no decisions folder {folder} yet: nothing captured yet")
    problem = _dir_problem(folder)
    path = journal_path(folder)
    if not problem and path.exists() and not os.access(path, os.W_OK):
        problem = f"{path} is not writable"
    if problem:
        return TierHealth(name, "degraded", problem)
    read = read_journal(folder)
    if read.corrupt_lines:
        return TierHealth(name, "degraded", f"{path}: {read.corrupt_lines} corrupt line(s) skipped, "
                                            f"{len(read.decisions)} readable")
    return TierHealth(name, "healthy", f"{len(read.decisions)} decision(s) in {path}")


def memory_health(memory_dir: Path) -> TierHealth:
    name = "3 memory folder"
    if not memory_dir.is_dir():
        return TierHealth(name, "unavailable", f"{memory_dir} does not exist yet")
    index = memory_dir / C.INDEX_NAME
    try:
        if index.exists():
            safefs.read_bytes(memory_dir, C.INDEX_NAME, C.INDEX_READ_MAX_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return TierHealth(name, "degraded", f"{index}: unreadable ({exc})")
    problem = _dir_problem(memory_dir)
    if problem:
        return TierHealth(name, "degraded", problem)
    inbox = memory_dir / C.STATE_DIRNAME / C.DECISION_INBOX
    waiting = _lines(inbox)
    if inbox.exists() and inbox.stat().st_size >= C.INBOX_MAX_BYTES:
        return TierHealth(name, "degraded", f"{waiting} prompts wait in a full queue ({inbox}): the Stop worker is not "
                                            "running (is `memdir install` done? see .memdir/hook.log)")
    promoted = 0
    for entry in os.scandir(memory_dir):
        if entry.name.endswith(".md") and entry.name != C.INDEX_NAME and entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as handle:
                head = handle.read(2048)
            promoted += b"\ndecision_id:" in head
    return TierHealth(name, "healthy", f"{promoted} promoted decision memor{'y' if promoted == 1 else 'ies'}, "
                                       f"{waiting} prompt(s) waiting for the Stop worker")


def tier_status(project_root: Path, memory_dir: Path, *, compat: bool | None = None) -> list[TierHealth]:
    """The three tiers for this project and memory folder (`compat` None: the user's OrchestKit setting).
    A repository journal memdir no longer reads is named in the journal tier's reason, with the fix."""
    compat = orchestkit_compat(memory_dir, project_root).enabled if compat is None else compat
    folder = decisions_dir(memory_dir, project_root, compat=compat)
    journal = journal_health(folder)
    unread = "" if compat else unread_repo_journal(memory_dir, project_root)
    if unread:
        journal = TierHealth(journal.tier, journal.state, f"{journal.reason}; {unread}")
    return [graph_health(folder), journal, memory_health(memory_dir)]
