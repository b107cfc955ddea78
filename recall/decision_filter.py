"""Which recent decisions a prompt gets: those that clear recall's relevance bar, minus what a
recalled memory already says (issue 21: "write a short haiku about autumn leaves" got a block of
package-manager decisions, and "never use npm, use pnpm" reached the model from a decision line
and from the memory recalled for the same prompt)."""

from __future__ import annotations

from memdir.scan import Header
from memdir.stages.recall.inject import memory_blocks, says
from memdir.stages.recall.offline import select_offline
from memdir.words import meaning_tokens


def _text(record: dict, field: str) -> str:
    content = record.get("content")
    value = content.get(field) if isinstance(content, dict) else None
    return value if isinstance(value, str) else ""


def relevant_decisions(prompt: str, records: list[dict], recalled: str = "", common: set[str] | None = None) -> list[dict]:
    """The journal `records` (order kept) that clear the offline selector's bar for `prompt`, as a
    memory whose name is the decision, whose description is its reason and whose body lists what it
    is about, and that no memory in the `recalled` context (recall.inject.render_all) already states.

    `common`: the prompt's words (stems) common to the memory folder, as recall found them (RecallResult.common).
    A decision must share with the prompt a word outside them, as a memory of the folder must (`distinct` in
    recall.offline.relevant): a recent journal is a handful of records, too few to say which words are common, so
    "pipeline", which every note of the real job-search folder says and no memory is recalled on alone, let "run
    the nightly pipeline with --resume" through for "how is my application pipeline looking?" (user17). In a
    folder too small to say what is common (none is), one distinctive shared word passes, as for a memory there."""
    if not records:
        return []
    headers = []
    for i, record in enumerate(records):
        entities = record.get("entities")
        about = " ".join(e for e in entities if isinstance(e, str)) if isinstance(entities, list) else ""
        headers.append(Header(str(i), "", 0.0, _text(record, "what"), _text(record, "why"), "", excerpt=about))
    chosen = {int(h.rel_path) for h in select_offline(prompt, headers, limit=len(headers))}
    if chosen and common:
        asked = set(meaning_tokens(prompt)) - common
        chosen = {i for i in chosen if asked & set(meaning_tokens(f"{headers[i].name}\n{headers[i].description}\n"
                                                                 f"{headers[i].excerpt}"))}
    blocks = memory_blocks(recalled)
    return [record for i, record in enumerate(records)
            if i in chosen and not any(says(block, _text(record, "what")) for block in blocks)]
