"""Where a new memory goes: its own file and a name no other memory has (issue 22).

A save without a path (`memdir remember`, the API and MCP `remember`, promoted decisions, the
offline extractor) never lands on another memory. A memory of the same type and name that states
the same rule is this very memory (its Why/How may be updated). A name another memory already has,
about something else, is told apart by this memory's own words ("Staging DB" -> "Staging DB db2"),
so distinct facts stay distinct and a name (also the `[[link]]` target) finds one memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir import constants as C, naming
from memdir.errors import MemdirError
from memdir.frontmatter_io import parse_document
from memdir.model import Memory, kebab_slug

if TYPE_CHECKING:
    from memdir.scan import Header
    from memdir.store import MemoryStore


def names_in_use(store: MemoryStore, moving: str | None = None) -> dict[str, Header]:
    """Every memory by its name's link form (`Deploy: prod` and `deploy-prod` are one name);
    `moving`: a memory being renamed, whose own name does not count."""
    facts = store.facts()  # names of files unchanged since the last look come from .memdir/ (file_facts.py)
    headers = store.scan(facts).headers
    facts.save()
    return {kebab_slug(h.name): h for h in headers if h.name and h.rel_path != moving}


def place(store: MemoryStore, memory: Memory) -> tuple[str, bool, Memory]:
    """(rel_path, exists, memory as it will be written): this memory's own file, or a new one."""
    names = names_in_use(store)
    key = kebab_slug(memory.name)
    holder = names.get(key)
    # This name, or one told apart from it earlier ("deploys" -> "deploys-api-prod"), stating this rule.
    for found_key, h in sorted(names.items(), key=lambda kv: kv[0] != key):
        if (found_key == key or found_key.startswith(key + "-")) and h.type == memory.type.value \
                and same_rule(store.text_or_empty(h.rel_path), memory):
            return h.rel_path, True, memory.model_copy(update={"name": h.name})
    if holder is not None:
        memory = _renamed_apart(store, memory, holder.rel_path, set(names))
    return free_file(store, memory), False, memory


def free_file(store: MemoryStore, memory: Memory, moving: str | None = None) -> str:
    """`<type>_<slug>.md`, or `_2`, `_3`... when another file has it (`moving`: the memory's own file)."""
    from memdir.store import slugify

    base = f"{memory.type.value}_{slugify(memory.name)}"
    for n in range(1, 1000):
        rel = f"{base}.md" if n == 1 else f"{base}_{n}.md"
        if rel == moving or not store.exists(rel):
            return rel
    raise MemdirError(f"too many memories named like {memory.name!r}; choose a more specific name")


def _renamed_apart(store: MemoryStore, memory: Memory, holder_rel: str, taken: set[str]) -> Memory:
    """This memory under a name no other memory has, built from the words that tell it apart."""

    def in_form(name: str) -> str:  # the name as written: a kebab-case slug in Claude Code's current form
        return Memory.model_validate({**memory.model_dump(), "name": name}).name

    other = store.text_or_empty(holder_rel)
    text = f"{memory.description} {_rule_text(memory.body)}"
    name = naming.distinct_name(memory.name, text, other, lambda c: kebab_slug(in_form(c)) in taken)
    return memory.model_copy(update={"name": in_form(name)})


def _rule_text(body: str) -> str:
    """The rule or fact a body states, before its Why/How lines."""
    return body.split(C.WHY_PREFIX)[0].split(C.HOW_PREFIX)[0]


def same_rule(old_text: str, memory: Memory) -> bool:
    """The file states the same rule or fact as `memory`, spacing and case aside (its Why/How may differ)."""
    try:
        old_body = parse_document(old_text).body
    except Exception:  # noqa: BLE001 - an unreadable file is never taken for this memory
        return False

    def flat(body: str) -> str:
        return " ".join(_rule_text(body).split()).casefold()

    return flat(old_body) == flat(memory.body)
