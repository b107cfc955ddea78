"""The model's judgement for `memdir consolidate`: which related memories repeat or contradict each other.

The memories that share many words (consolidate_text.related_pairs) are grouped and sent, a batch of
groups per request, with one structured-output answer each (`Judgement`, validated with pydantic).
Everything the model says is checked against what it was shown: a file it was not shown, a file
named twice, a merge that keeps nothing, is left out and said in the plan. Which of two contradicting
memories is newer is the files' own evidence first (consolidate.newer_of), the model's word only on a tie.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from memdir.config import Settings
from memdir.llm import call_with_retries, make_client, thinking_options
from memdir.stages.extractor.consolidate import Folder, live, modified_stamp, name_date, newer_of
from memdir.stages.extractor.consolidate_plan import Merge, Plan, Supersede

BATCH_CHARS = 60_000  # memory text per request: a few dozen memories, well inside every model's context
BODY_CHARS = 4_000  # a memory is a short note; a longer body is cut for judging (never when written)
MAX_TOKENS = 8_000
EFFORT = "medium"


class Duplicates(BaseModel):
    files: list[str] = Field(description="the file names of the memories that state the same thing")
    keep: str = Field(description="the one of `files` whose name says best what the note is about")
    merged_text: str = Field(description="the merged rule or fact; empty to keep the kept memory's text")
    reason: str


class Contradiction(BaseModel):
    newer: str = Field(description="the file name of the memory that replaces the other")
    older: str = Field(description="the file name of the memory it replaces")
    reason: str


class Judgement(BaseModel):
    duplicates: list[Duplicates]
    contradictions: list[Contradiction]


def _output_format() -> dict:
    from anthropic import transform_schema

    return {"type": "json_schema", "schema": transform_schema(Judgement.model_json_schema())}


def groups(plan: Plan, folder: Folder) -> list[list[str]]:
    """The related memories as connected groups (a file in one group only), biggest first; files that a
    merge already folds away are not shown again."""
    gone = {rel for merge in plan.merges for rel in merge.drop}
    parent: dict[str, str] = {}

    def root(rel: str) -> str:
        while parent.get(rel, rel) != rel:
            rel = parent[rel]
        return rel

    for item in plan.listed:
        files = [rel for rel in item.files if rel not in gone and rel in folder.memories]
        for rel in files[1:]:
            parent[root(rel)] = root(files[0])
    found: dict[str, list[str]] = {}
    for rel in sorted({*parent, *parent.values()}):
        found.setdefault(root(rel), []).append(rel)
    return sorted(found.values(), key=lambda g: (-len(g), g))


def shown(folder: Folder, rel: str) -> dict:
    memory = folder.memories[rel]
    body = memory.body if len(memory.body) <= BODY_CHARS else memory.body[:BODY_CHARS] + "\n[... cut for judging]"
    stamp = modified_stamp(folder, rel)
    return {"file": rel, "type": memory.type.value, "date": (stamp or "")[:10] or name_date(folder, rel) or "",
            "name": memory.name, "description": memory.description, "body": body}


def batches(found: list[list[str]], folder: Folder) -> list[list[list[str]]]:
    """Groups packed into requests of about BATCH_CHARS; a group bigger than that is split."""
    out: list[list[list[str]]] = []
    size = BATCH_CHARS
    for group in found:
        for start in range(0, len(group), 30):
            part = group[start:start + 30]
            chars = sum(len(shown(folder, rel)["body"]) + 400 for rel in part)
            if size + chars > BATCH_CHARS:
                out.append([])
                size = 0
            out[-1].append(part)
            size += chars
    return out


def ask(batch: list[list[str]], folder: Folder, settings: Settings, client) -> tuple[Judgement, dict]:
    from memdir.prompts import render

    system = render("consolidate_system.j2")
    user = render("consolidate_user.j2", groups=[[shown(folder, rel) for rel in group] for group in batch])
    options = thinking_options(settings.extract_model, think=False, effort=EFFORT)
    output_config = {**options.pop("output_config", {}), "format": _output_format()}

    def call():
        return client.messages.create(model=settings.extract_model, max_tokens=MAX_TOKENS, system=system,
                                      messages=[{"role": "user", "content": user}], output_config=output_config,
                                      **options)

    response = call_with_retries(call, max_attempts=settings.max_attempts)
    usage = response.usage.model_dump(exclude_none=True) if response.usage else {}
    return _parsed(response), usage


class UnusableAnswer(RuntimeError):
    """The model answered, but not with a judgement to use (truncated, refused, unparsable)."""


def _parsed(response) -> Judgement:
    if response.stop_reason not in ("end_turn", "stop_sequence"):
        raise UnusableAnswer(f"the model's answer stopped early (stop_reason={response.stop_reason})")
    text = "".join(b.text for b in response.content if getattr(b, "type", "") == "text").strip()
    try:
        return Judgement.model_validate_json(text)
    except ValueError as exc:
        raise UnusableAnswer(f"the model's answer is not a judgement ({str(exc).splitlines()[0][:160]})") from None


def judge(plan: Plan, folder: Folder, settings: Settings, client=None) -> dict:
    """Ask the model about the related memories and put its checked answer into `plan`. Returns the usage.
    The pairs it judged leave the "for you to decide" list: it decided them."""
    found = groups(plan, folder)
    if not found:
        return {}
    client = client or make_client()
    usage: dict[str, int] = {}
    judged: set[str] = set()
    for batch in batches(found, folder):
        answer, used = ask(batch, folder, settings, client)
        for key, value in used.items():
            if isinstance(value, int):
                usage[key] = usage.get(key, 0) + value
        files = {rel for group in batch for rel in group}
        judged |= files
        _take(plan, folder, answer, files)
    plan.listed = [item for item in plan.listed if not set(item.files) <= judged]
    return usage


def _take(plan: Plan, folder: Folder, answer: Judgement, files: set[str]) -> None:
    """The model's answer, each item checked against what it was shown and what the plan already does."""
    used = {rel for merge in plan.merges for rel in (merge.keep, *merge.drop)}
    memories = live(folder)
    for dup in answer.duplicates:
        group = list(dict.fromkeys(rel.strip() for rel in dup.files))
        problem = _problem(group, files, used, memories) or (
            None if dup.keep.strip() in group else f"it keeps {dup.keep!r}, not one of them")
        if problem:
            plan.skipped.append(f"the model's merge of {', '.join(group)}: {problem}")
            continue
        keep = dup.keep.strip()
        text = dup.merged_text.strip() or None
        if text and any(len(folder.memories[rel].body) > BODY_CHARS for rel in group):
            # The model saw a cut body: its rewrite could leave out the rest. The kept memory's own text stays.
            plan.skipped.append(f"the model's merged text for {keep}: a body it saw was cut for judging, "
                                "so the kept memory's own text stays")
            text = None
        plan.merges.append(Merge(keep, [rel for rel in group if rel != keep], dup.reason.strip(), text))
        used |= set(group)
    for item in answer.contradictions:
        pair = list(dict.fromkeys((item.newer.strip(), item.older.strip())))
        problem = _problem(pair, files, used, memories)
        if problem:
            plan.skipped.append(f"the model's contradiction {' / '.join(pair)}: {problem}")
            continue
        newer = newer_of(folder, *pair) or pair[0]
        older = pair[1] if newer == pair[0] else pair[0]
        plan.supersedes.append(Supersede(newer, older, item.reason.strip()))
        used |= set(pair)


def _problem(group: list[str], files: set[str], used: set[str], memories: dict) -> str | None:
    if len(group) < 2:
        return "it names fewer than two different memories"
    unknown = [rel for rel in group if rel not in files or rel not in memories]
    if unknown:
        return f"{', '.join(unknown)} was not among the memories shown"
    twice = [rel for rel in group if rel in used]
    if twice:
        return f"{', '.join(twice)} is already part of another change"
    return None
