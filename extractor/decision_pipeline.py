"""Captured decisions through the three tiers: journal (Tier 2), graph queue (Tier 1), promotion (Tier 3).

The journal and graph live in the folder memdir.paths.decisions_dir names: the memory folder's state
dir by default, the repository's `.claude/memory/` only in OrchestKit's layout (an opt-in).
Each tier fails on its own: a graph file that cannot be written never stops the journal or the
promotion, and the reason comes back in `TierOutcome.errors` (and in `memdir status`).
Called by `memdir remember --success|--failed|--global`, the Stop worker (prompts the prompt hook
queued) and the extraction agent's RecordDecision tool.
"""

from __future__ import annotations

import glob
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C, decisions as journal, graph, write_mode
from memdir.decision_context import prune_session_markers, tail_records
from memdir.errors import MemdirError, os_error_line
from memdir.paths import decisions_dir, orchestkit_compat
from memdir.said import users_words
from memdir.secrets import REDACTED, find_secrets
from memdir.stages.extractor.capture import Captured, capture_text
from memdir.stages.extractor.promote import Promotion, promote


def compat_enabled(memory_dir: Path, project_root: Path) -> bool:
    """OrchestKit's layout, as the user set it (flag aside): MEMDIR_ORCHESTKIT_COMPAT or a config key."""
    return orchestkit_compat(memory_dir, project_root).enabled


def folder_for(memory_dir: Path, project_root: Path, compat: bool | None = None) -> Path:
    """The decisions folder for this memory folder and project (`compat` None: the user's setting)."""
    compat = compat_enabled(memory_dir, project_root) if compat is None else compat
    return decisions_dir(memory_dir, project_root, compat=compat)


def _reason(exc: Exception) -> str:
    """An OSError's plain reason and fix ("the disk is full; free some space..."), else the error's own
    one line (a lock held too long)."""
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, MemdirError):
        return os_error_line(OSError(exc.errno, exc.strerror))  # the caller names the file
    return str(exc)


@dataclass
class TierOutcome:
    journaled: list[str] = field(default_factory=list)
    queued_ops: int = 0
    promotions: list[Promotion] = field(default_factory=list)
    flush: graph.FlushResult | None = None
    errors: list[str] = field(default_factory=list)


def record(captured: list[Captured], *, folder: Path, memory_dir: Path | None, compat_section: bool = False,
           flush_graph: bool = False, team: bool = False, who: str = write_mode.AUTO) -> TierOutcome:
    """Journal and queue in the decisions `folder`, and (with `memory_dir`) promote into that memory folder;
    `team` promotes into the folder's team memory. `who` asks for the promotion (memdir/write_mode.py): a
    person's `memdir remember --success` (USER) or the Stop worker (AUTO), which the write mode may turn
    into proposals or drop."""
    outcome = TierOutcome()
    recent = {r.get("id") for r in tail_records(str(journal.journal_path(folder)), 10_000)[0]}
    fresh = []
    for c in captured:
        held = _secret_held(c)
        if held:  # the journal may live in the repo: a secret typed in a prompt must never land there
            outcome.errors.append(f"skipped a {c.decision.kind}: it {held}")
        elif c.decision.id not in recent:
            fresh.append(c)
    try:
        journal.append(folder, [c.decision for c in fresh])
        outcome.journaled = [c.decision.id for c in fresh]
    except (OSError, MemdirError) as exc:  # unwritable, or a lock held too long: the other tiers go on
        outcome.errors.append(f"journal {journal.journal_path(folder)}: {_reason(exc)}")
    shared = [c.decision.model_copy(update={"project": ""}) for c in fresh if c.decision.scope == "global"]
    if shared:
        try:  # cross-project best practices, anonymised: no project name
            journal.append_lines(global_journal_path(), [d.to_record() for d in shared])
        except (OSError, MemdirError) as exc:
            outcome.errors.append(f"global journal {global_journal_path()}: {_reason(exc)}")
    ops = [op for c in fresh for op in graph.ops_for_decision(c.decision, c.relations, c.entity_types)]
    try:
        graph.enqueue(folder, ops)
        outcome.queued_ops = len(ops)
    except (OSError, MemdirError) as exc:  # unwritable, or a lock held too long: the other tiers go on
        outcome.errors.append(f"graph queue {graph.queue_path(folder)}: {_reason(exc)}")
    store = write_mode.Writers(memory_dir, "decision promotion", team=team).store(who) if memory_dir else None
    if store is not None:
        for c in fresh:
            try:
                outcome.promotions.append(promote(store, c.decision, compat_section=compat_section))
            except Exception as exc:  # noqa: BLE001 - one bad promotion must not lose the others
                outcome.errors.append(f"promotion of {c.decision.id}: {_reason(exc)}")
    if flush_graph:
        outcome.flush = flush(folder, memory_dir)
        if outcome.flush.error:
            outcome.errors.append(outcome.flush.error)
    return outcome


def _secret_held(c: Captured) -> str:
    """Why this decision may not be written ("" when it may): every text of it goes to the journal or graph.
    A prompt is queued redacted, so [redacted] in a decision means a secret was cut out of it."""
    texts = [c.decision.what, c.decision.why or "", c.decision.category, *c.decision.entities, *c.entity_types,
             *(name for r in c.relations for name in (r.from_, r.to))]
    text = "\n".join(texts)
    found = find_secrets(text)
    if found:
        return f"looks like it contains {found[0].kind}"
    return "held a secret (redacted when the prompt was queued)" if REDACTED in text else ""


def global_journal_path() -> Path:
    from memdir.paths import config_home

    return config_home() / "memdir" / C.GLOBAL_DECISIONS_FILE


def flush(folder: Path, memory_dir: Path | None) -> graph.FlushResult:
    """Queue and memory-file links into the graph in the decisions `folder`; never raises.

    Links are added only once the project uses the decision tiers (its decisions folder exists):
    memdir never starts a graph (in OrchestKit's layout: never writes into a repository) on its own
    just because memory files link each other.
    """
    try:
        in_use = Path(folder).is_dir() or graph.graph_path(folder).exists()
        links = graph.ops_for_links(memory_dir) if memory_dir is not None and in_use else None
        return graph.flush(folder, links=links)
    except Exception as exc:  # noqa: BLE001
        return graph.FlushResult(error=f"graph flush failed: {exc}")


def _project_of(cwd: str | None) -> Path:
    from memdir.paths import project_root

    path = Path(cwd) if cwd and os.path.isdir(cwd) else Path.cwd()
    return project_root(path)


def _inbox_item(raw: bytes, default_cwd: str | None) -> tuple[Path, list[Captured], bool] | None:
    """(project root, captured, from the agent) for one inbox line; None for a line that is not one."""
    try:
        item = json.loads(raw)
        root = _project_of(item.get("cwd") or default_cwd)
        if "decision" in item:  # the extraction agent's RecordDecision: already structured
            decision = journal.Decision.from_record(item["decision"]).model_copy(update={"project": root.name})
            relations = [journal.Relation.model_validate(r) for r in item.get("relations") or []]
            return root, [Captured(decision, relations)], True
        # What UserPromptSubmit hands the hook can be harness text (a task notification, another agent's
        # message, IDE context around the prompt): only the words the person typed are captured.
        return root, capture_text(users_words(str(item["prompt"])), source="prompt", project=root.name), False
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def drain_inbox(memory_dir: Path, *, compat: bool | None = None, settle: float = 0.05,
                default_cwd: str | None = None) -> list[TierOutcome]:
    """Capture decisions from the prompts the prompt hook queued (and record what the extraction agent
    queued through RecordDecision), then empty the queue. Agent decisions are not promoted: the agent
    writes its memory files itself.

    The queue is renamed first (the hook's O_APPEND writers then start a new one), read after a short
    settle for a write already in flight, and deleted only once every prompt went through the tiers.
    `compat`: OrchestKit's layout on or off for every project (None: the user's setting, per project).
    """
    state = memory_dir / C.STATE_DIRNAME
    inbox = state / C.DECISION_INBOX
    if state.is_symlink() or inbox.is_symlink():
        return []  # never read or move anything through a symlink in the memory folder
    taken = f"{inbox}.processing-{os.getpid()}-{int(time.time() * 1000)}"
    try:
        os.replace(inbox, taken)
        time.sleep(settle)
    except FileNotFoundError:
        pass
    outcomes: list[TierOutcome] = []
    for path in sorted(glob.glob(f"{glob.escape(str(inbox))}.processing-*")):  # also what a killed worker left
        groups: dict[tuple[Path, bool], list[Captured]] = {}
        with open(path, "rb") as handle:
            for raw in handle:
                parsed = _inbox_item(raw, default_cwd)
                if parsed is not None:
                    groups.setdefault((parsed[0], parsed[2]), []).extend(parsed[1])
        for (root, from_agent), captured in groups.items():
            on = compat_enabled(memory_dir, root) if compat is None else compat
            outcomes.append(record(captured, folder=folder_for(memory_dir, root, on),
                                   memory_dir=None if from_agent else memory_dir, compat_section=on))
        os.unlink(path)
    return outcomes


UNSEEN_BY_PROMPT_HOOK = ("rejection", "queued")  # the user's words that never pass through UserPromptSubmit
TRANSCRIPT_TAIL = 50


def capture_transcript_tail(transcript: str | None, cwd: str | None, memory_dir: Path,
                            compat: bool | None = None) -> list[TierOutcome]:
    """Decisions in the user's words the prompt hook never sees: the reason typed when rejecting a tool
    call ("use pnpm"), messages queued while the agent worked. The transcript reader decides what the
    user's words are. Re-reading the same tail is harmless: a decision already journaled is not repeated."""
    if not transcript or not os.path.isfile(transcript):
        return []
    from memdir.transcript import read_transcript

    root = _project_of(cwd)
    captured: list[Captured] = []
    for message in read_transcript(Path(transcript), last_n=TRANSCRIPT_TAIL, max_bytes=C.TRANSCRIPT_READ_MAX_BYTES).messages:
        if message.role == "user" and message.kind in UNSEEN_BY_PROMPT_HOOK:
            captured += capture_text(message.user_text(), source="prompt", project=root.name)
    if not captured:
        return []
    on = compat_enabled(memory_dir, root) if compat is None else compat
    return [record(captured, folder=folder_for(memory_dir, root, on), memory_dir=memory_dir, compat_section=on)]


def stop_step(memory_dir: Path, cwd: str | None, transcript: str | None = None) -> list[str]:
    """The Stop worker's share: queued prompts (and rejection reasons in the transcript) through the
    tiers, the graph flushed. Log lines back."""
    lines: list[str] = []
    outcomes = drain_inbox(memory_dir, default_cwd=cwd)
    try:
        outcomes += capture_transcript_tail(transcript, cwd, memory_dir)
    except Exception as exc:  # noqa: BLE001 - a transcript problem must not stop the flush below
        lines.append(f"decisions: transcript not read ({type(exc).__name__}: {exc})")
    for outcome in outcomes:
        if outcome.journaled or outcome.errors:
            made = [f"{p.action} {p.rel_path}" for p in outcome.promotions if p.action != "skipped"]
            lines.append(f"decisions: journaled {len(outcome.journaled)}" + (f", {', '.join(made)}" if made else ""))
        lines += [f"decisions: {e}" for e in outcome.errors]
    result = flush(folder_for(memory_dir, _project_of(cwd)), memory_dir)
    if result.error:
        lines.append(f"graph: {result.error}")
    elif result.changed:
        lines.append(f"graph: merged {result.changed} change(s)")
    prune_session_markers(str(memory_dir / C.STATE_DIRNAME))
    return lines
