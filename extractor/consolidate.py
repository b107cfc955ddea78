"""`memdir consolidate`: memories that say the same thing become one; of two that contradict, the newer wins.

Offline, only exact and near-exact duplicates (memdir/stages/extractor/consolidate_text.py says what
that means) are merged; everything else that looks related is listed for the user. With the model
(the anthropic engine), the related memories are judged by it (consolidate_llm.py): it names the
duplicates, which name to keep, and the contradictions. Which of two contradicting memories is newer
is read from the files (their `modified` stamp, a date in the file name, the file time), and only
when they cannot tell is the model's word taken.

Nothing is lost: a merged memory's bytes and an overwritten version stay in `.memdir/history/`
(`memdir history`, `memdir restore`), and a superseded memory stays in the folder, marked.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

from memdir import githistory, write_mode
from memdir.config import Settings, choose_engine
from memdir.errors import MemdirError
from memdir.frontmatter_io import modified_of
from memdir.model import Memory, kebab_slug
from memdir.record import Record, field
from memdir.stages.extractor.consolidate_plan import (
    Edit,
    Listed,
    Merge,
    Plan,
    StoreWriter,
    Writer,
    apply_plan,
    edits,
    is_superseded,
)
from memdir.stages.extractor.consolidate_text import (
    NEAR_EXACT,
    RELATED,
    claim,
    content_words,
    critical_difference,
    related_pairs,
    similarity,
    words,
)
from memdir.store import MemoryStore

_NAME_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_LINK = re.compile(r"\[\[([^\[\]\n]{1,200})\]\]")
BLOCKING = 0.5  # word-set overlap below which two claims cannot reach NEAR_EXACT order-aware similarity


class Folder(Record):
    """The memories as read once: every later step works on these, and a save checks nothing changed since."""

    memories: dict[str, Memory]
    texts: dict[str, str]
    mtimes: dict[str, float]
    index: str
    skipped: list[str] = field(default_factory=list)


class Result(Record):
    plan: Plan
    edits: list[Edit]
    dry_run: bool
    done: list[str] = field(default_factory=list)  # what the writer did, one line each
    usage: dict = field(default_factory=dict)
    failed: str | None = None  # the model could not judge: only the offline plan was made


def read_folder(store: MemoryStore) -> Folder:
    scanned = store.scan()
    folder = Folder({}, {}, {}, store.index(), [f"{rel}: {why}" for rel, why in scanned.unreadable])
    for header in scanned.headers:  # a header read leniently (malformed YAML) is still a memory
        if not _utf8_name(header.rel_path):  # a merge names it in text (the note, MEMORY.md): it cannot be
            shown = header.rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            folder.skipped.append(f"{shown}: its file name is not UTF-8; rename it to merge it")
            continue
        try:
            folder.texts[header.rel_path] = store.read_file(header.rel_path)
            folder.memories[header.rel_path] = store.load(header.rel_path)
        except (OSError, MemdirError) as exc:
            folder.skipped.append(f"{header.rel_path}: {str(exc).splitlines()[0]}")
            folder.texts.pop(header.rel_path, None)
            continue
        folder.mtimes[header.rel_path] = header.mtime
    return folder


def _utf8_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def live(folder: Folder) -> dict[str, Memory]:
    """The memories consolidation may change: a superseded memory has been judged already."""
    return {rel: m for rel, m in sorted(folder.memories.items()) if not is_superseded(m)}


def newer_of(folder: Folder, a: str, b: str) -> str | None:
    """Which of two files is newer by their own evidence: the `modified` stamp both carry, else a date
    in both file names, else the file times. None when the evidence ties."""
    for evidence in (modified_stamp, name_date, lambda f, rel: f.mtimes.get(rel)):
        ta, tb = evidence(folder, a), evidence(folder, b)
        if ta is not None and tb is not None and ta != tb:
            return a if ta > tb else b
    return None


def modified_stamp(folder: Folder, rel: str) -> str | None:
    return modified_of(folder.memories[rel].extra)


def name_date(folder: Folder, rel: str) -> str | None:
    found = _NAME_DATE.findall(Path(rel).name)
    return found[-1] if found else None


def inbound_links(folder: Folder) -> Counter[str]:
    """How often each `[[target]]` appears across the memories, by its link form (a slug)."""
    found: Counter[str] = Counter()
    for memory in folder.memories.values():
        found.update(kebab_slug(target) for target in _LINK.findall(memory.body))
    return found


def best_name(folder: Folder, rels: list[str], links: Counter[str]) -> str:
    """The memory whose name a merge keeps: the one other memories link to most (no link breaks), then
    the one MEMORY.md lists, then the most descriptive name (more words), then the oldest."""

    def rank(rel: str) -> tuple:
        memory = folder.memories[rel]
        inbound = links[kebab_slug(memory.name)]
        return (-inbound, f"({rel})" not in folder.index, -len(words(memory.name)), folder.mtimes.get(rel, 0.0), rel)

    return min(rels, key=rank)


def offline_plan(folder: Folder, engine: str = "offline") -> Plan:
    """Exact and near-exact duplicates of one type merged; related memories listed for the user."""
    plan = Plan(engine, skipped=list(folder.skipped))
    memories = live(folder)
    claims = {rel: words(claim(m.body, m.description)) for rel, m in memories.items()}
    parent: dict[str, str] = {}

    def root(rel: str) -> str:
        while parent.get(rel, rel) != rel:
            rel = parent[rel]
        return rel

    exact: dict[tuple, list[str]] = defaultdict(list)
    for rel, said in claims.items():
        if said:
            exact[(memories[rel].type, tuple(said))].append(rel)
    for rels in exact.values():
        for rel in rels[1:]:
            parent[root(rel)] = root(rels[0])
    for a, b, _ in related_pairs({rel: frozenset(said) for rel, said in claims.items()}, BLOCKING):
        if memories[a].type != memories[b].type or root(a) == root(b):
            continue
        score = similarity(claims[a], claims[b])
        if score < NEAR_EXACT:
            continue
        differ = critical_difference(claims[a], claims[b])
        if differ:
            plan.listed.append(Listed([a, b], f"{score:.0%} the same words, but they differ in "
                                      f"{', '.join(dict.fromkeys(differ))}: one may contradict the other"))
        else:
            parent[root(b)] = root(a)
    _merges_from_groups(plan, folder, parent, root, claims)
    _list_related(plan, memories, root)
    return plan


def _merges_from_groups(plan: Plan, folder: Folder, parent: dict[str, str], root, claims) -> None:
    groups: dict[str, list[str]] = defaultdict(list)
    for rel in {*parent, *parent.values()}:
        groups[root(rel)].append(rel)
    links = inbound_links(folder)
    for rels in sorted(sorted(g) for g in groups.values() if len(g) > 1):
        keep = best_name(folder, rels, links)
        same = len({tuple(claims[rel]) for rel in rels}) == 1
        reason = ("the same text" if same else
                  f"near-exact duplicates (at least {NEAR_EXACT:.0%} the same words; no negation, number or name differs)")
        plan.merges.append(Merge(keep, [rel for rel in rels if rel != keep], reason))


def _list_related(plan: Plan, memories: dict[str, Memory], root) -> None:
    shown = {tuple(sorted(item.files)) for item in plan.listed}
    bags = {rel: content_words(f"{m.name}\n{m.description}\n{claim(m.body, m.description)}") for rel, m in memories.items()}
    for a, b, score in related_pairs(bags, RELATED):
        if root(a) != root(b) and (a, b) not in shown:
            plan.listed.append(Listed([a, b], f"{score:.0%} of their words shared: they may repeat or contradict "
                                              "each other; the model judges that (--engine anthropic), or you do"))


def consolidate(memory_dir: Path, *, settings: Settings | None = None, engine: str | None = None,
                dry_run: bool = False, client=None, today: date | None = None, writer: Writer | None = None) -> Result:
    """Plan, then (unless `dry_run`) carry the plan out through `writer` (default: the store itself)."""
    settings = settings or Settings.from_env()
    store = MemoryStore(memory_dir)
    folder = read_folder(store)
    chosen = choose_engine(engine or settings.engine, quiet=True)
    plan = offline_plan(folder, chosen)
    usage: dict = {}
    failed = None
    if chosen == "llm":
        from memdir.llm import describe_error
        from memdir.stages.extractor.consolidate_llm import judge

        try:
            usage = judge(plan, folder, settings, client=client)
        except Exception as exc:  # noqa: BLE001 - an API or answer failure: the offline plan stands, said once
            failed = describe_error(exc)
            plan = offline_plan(folder, "offline")
            plan.skipped.append(f"the model could not judge ({failed}): this is the offline plan")
    elif chosen == "claude-code":
        plan.skipped.append("the claude-code engine does not judge consolidation yet: related memories are "
                            "listed for you (use --engine anthropic for the model's judgement)")
    planned = edits(plan, folder.memories, folder.texts, today or date.today())
    result = Result(plan, planned, dry_run, usage=usage, failed=failed)
    if not dry_run:
        with githistory.batch(memory_dir, "consolidate: duplicate memories merged", run=githistory.new_run_id(),
                              engine=chosen):  # the whole plan is one commit of the git history
            result.done = apply_plan(planned, writer or StoreWriter(_store_for_mode(memory_dir)))
    return result


def _store_for_mode(memory_dir: Path) -> MemoryStore:
    """The user runs consolidate, so it writes in auto and manual mode, and is refused in one line in
    read-only; in confirm mode the plan becomes proposals for `memdir review` (issue 24)."""
    mode = write_mode.current(memory_dir)
    who = write_mode.AUTO if mode == "confirm" else write_mode.USER
    store = write_mode.Writers(memory_dir, "consolidate", mode=mode).store(who)
    return store if store is not None else MemoryStore(memory_dir)  # never None for these two; the type says maybe


def report_lines(result: Result) -> list[str]:
    """The plan in words; in a dry run every change is followed by its unified diff."""
    plan, out = result.plan, []
    for merge in plan.merges:
        out.append(f"merge {', '.join(merge.drop)} into {merge.keep}: {merge.reason}")
    for step in plan.supersedes:
        out.append(f"supersede {step.older} by the newer {step.newer}: {step.reason}")
    for item in plan.listed:
        out.append(f"for you to decide: {' and '.join(item.files)}: {item.note}")
    out += [f"skipped {line}" for line in plan.skipped]
    if result.dry_run:
        for edit in result.edits:
            out.append(f"would {'update' if edit.memory is not None else 'delete'} {edit.rel} ({edit.why})")
            out += ["    " + line for line in edit.diff().rstrip("\n").splitlines()]
    else:
        out += result.done
    if not plan.merges and not plan.supersedes:
        out.append("nothing to merge or supersede")
    return out
