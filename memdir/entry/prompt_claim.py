"""The prompt hook's last step: what this prompt says, claimed for the session (issue 21: each thing said once).

Claude Code runs every matching hook at once and merges only identical commands, so a memdir prompt hook
registered with different commands in the user's and the project's settings (`memdir doctor` names it) runs
twice for one prompt. Each process recalls on its own, without a lock: recall is the hook's expensive part, and
one must not wait for the other's. Then, under the session's state lock (recall.state.held, held for a read and
a write), each drops the memories and decisions the session was given meanwhile, records what it will say, and
only then prints it: the second process says only what the first did not, usually nothing.

A lock not had within C.PROMPT_CLAIM_LOCK_SECONDS (another process stuck holding it) costs this prompt its
memories and decisions, never the user a long wait nor the model a repetition. What was not said is not
recorded, so a later prompt can still bring it.
"""

from __future__ import annotations

import os

from memdir import constants as C
from memdir.hooklog import log

TYPE_CHECKING = False  # typing costs ~3 ms on the hook path
if TYPE_CHECKING:
    from memdir.entry.recall_race import Answer


def claimed_context(memory_dir: str, session_id: str | None, prompt: str, answer: Answer | None, journal: str,
                    index_loaded: bool) -> str:
    """The context this process may print for the prompt: `answer`'s memories and the relevant recent decisions
    of `journal` ("" for none), less what the session was given meanwhile; what is kept is recorded as given."""
    context = answer.context if answer is not None else ""
    selected = answer.selected if answer is not None else []
    common = answer.common if answer is not None else set()
    chosen = _relevant_decisions(memory_dir, session_id, journal, prompt, context, common) if journal else set()
    checks = answer.checks if answer is not None else {}

    def refit(kept: list[str], budget: int) -> str:  # the memories said, rendered again within `budget`
        return _rendered(memory_dir, kept, index_loaded, checks, budget)[1] if kept else ""

    if not session_id or not (selected or chosen):  # no session state to claim from, or nothing to claim
        return (_with_decisions(memory_dir, session_id, journal, chosen, context, lambda b: refit(selected, b))
                if chosen else context)
    from memdir.errors import FolderBusy
    from memdir.stages.recall import state

    try:
        with state.held(memory_dir, session_id, C.PROMPT_CLAIM_LOCK_SECONDS):
            kept = selected
            if selected and answer is not None:
                kept, context = _claim_memories(memory_dir, session_id, answer, index_loaded)
            return (_with_decisions(memory_dir, session_id, journal, chosen, context, lambda b: refit(kept, b))
                    if chosen else context)
    except FolderBusy:
        log(memory_dir, "prompt", f"the session's state stayed locked for {C.PROMPT_CLAIM_LOCK_SECONDS}s by another "
            "memdir process: this prompt's memories and decisions were left out rather than risk saying them twice")
        return ""


def _claim_memories(memory_dir: str, session_id: str, answer: Answer, index_loaded: bool) -> tuple[list[str], str]:
    """(the memories left, `answer`'s context without those the session was given since recall read its state (by
    another hook process for the same prompt)); the rest recorded as given. Under the session's lock."""
    from memdir.stages.recall import state

    selected, context = answer.selected, answer.context
    said = state.load(memory_dir, session_id)
    taken = set(said.paths)
    fresh = [rel for rel in selected if rel not in taken]
    if len(fresh) < len(selected):
        log(memory_dir, "prompt", f"{len(selected) - len(fresh)} of this prompt's {len(selected)} memories were "
            "said meanwhile by another prompt hook (memdir registered twice? see `memdir doctor`): left out here")
        fresh, context = _rendered(memory_dir, fresh, index_loaded, answer.checks) if fresh else ([], "")
    if fresh:
        state.add(memory_dir, session_id, said, fresh, len(context.encode()))
    return fresh, context


def _rendered(memory_dir: str, rels: list[str], index_loaded: bool, checks: dict[str, str],
              budget: int = C.HOOK_OUTPUT_BUDGET) -> tuple[list[str], str]:
    """(the memories rendered, their context), for what is left of an answer another hook said part of: rendered
    again from their files, as recall renders them, each with the line its check against the code gave in the
    answer (`checks`, the warm server's: the check itself is not repeated here), within `budget`."""
    from memdir.scan import read_header
    from memdir.stages.recall.api import loaded_index_lines
    from memdir.stages.recall.inject import render_all

    headers = []
    for rel in rels:
        try:
            headers.append(read_header(os.path.join(memory_dir, *rel.split("/")), memory_dir))
        except (OSError, ValueError):
            continue  # gone or unreadable since recall chose it: not said
    context = render_all(headers, cache_dir=os.path.join(memory_dir, C.STATE_DIRNAME, "cache"),
                         known=loaded_index_lines(memory_dir) if index_loaded else None, checks=checks, budget=budget)
    return [h.rel_path for h in headers], context


def _relevant_decisions(memory_dir: str, session_id: str | None, journal: str, prompt: str, context: str,
                        common: set[str]) -> set[str]:
    """The keys of the journal's recent decisions relevant to this prompt, not shown in this session yet and not
    already stated by a recalled memory: chosen before the lock, as the memories are. `common`: the prompt's
    words common to the memory folder, as recall found them."""
    from memdir.decision_context import decision_key, shown_in_session, tail_records
    from memdir.stages.recall.decision_filter import relevant_decisions

    shown = shown_in_session(memory_dir, session_id)
    records = [r for r in tail_records(journal, C.RECENT_DECISIONS_SHOWN)[0] if decision_key(r) not in shown]
    return {decision_key(r) for r in relevant_decisions(prompt, records, context, common)} if records else set()


def _with_decisions(memory_dir: str, session_id: str | None, journal: str, chosen: set[str], context: str,
                    refit) -> str:
    """The `chosen` decisions not shown in this session meanwhile, before `context`, and noted as shown. Under the
    session's lock when there is a session.

    Each one cleared the relevance bar and is a line: when the memories filled the output budget, they are fitted
    again (`refit(budget)`: render_all) into what the decisions leave, so the decisions' lines come before the last
    memories' body lines (every memory keeps its header and description first, and "read the rest at" its path).
    Left to the room the memories left, five long memories on the real folder crowded out a relevant decision."""
    from memdir.decision_context import (
        add_decisions,
        decision_key,
        decisions_block,
        note_shown,
        shown_in_session,
        units,
    )

    wanted = chosen - shown_in_session(memory_dir, session_id)
    if not wanted:
        return context

    def keep(records: list[dict]) -> list[dict]:
        return [r for r in records if decision_key(r) in wanted]

    if not context:
        combined, added = add_decisions(journal, context, keep=keep)
    else:
        block, added = decisions_block(journal, keep=keep)
        if block and units(context) + 2 + units(block) > C.HOOK_OUTPUT_BUDGET:
            context = refit(C.HOOK_OUTPUT_BUDGET - 2 - units(block))
        combined = f"{block}\n\n{context}" if block and context else block or context
    note_shown(memory_dir, session_id, [decision_key(r) for r in added])
    return combined
