"""What a name points at when it is not a memory memdir reads, said as it is.

A FIFO, a symlink, a folder, MEMORY.md or a team memory named from the personal folder is never
reported as "no memory named X": the user can see it, so the message says what it is and what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir import constants as C, safefs

if TYPE_CHECKING:
    from memdir.store_read import StoreReader


def refused_entry(rel_path: str, kind: str) -> str:
    return (f"{rel_path} is {kind}, not a regular file: memdir refuses symlinks, FIFOs and devices in the "
            "memory folder and never follows or replaces them; `memdir doctor` lists them")


def not_a_memory(store: StoreReader, wanted: str) -> str | None:
    """Why `wanted` names something in the folder that is not a memory memdir reads (None: nothing
    is there), so a refusal never reads as "no memory named" when there is one the user can see."""
    candidates = (wanted,) if wanted.endswith(".md") else (wanted, wanted + ".md")
    if wanted == C.INDEX_NAME:
        return f"{C.INDEX_NAME} is the index, not a memory; `memdir index` prints it"
    unreadable = dict(store.scan(store.facts()).unreadable)  # the cached scan: only unreadable files matter
    for rel in candidates:
        if rel in unreadable:
            return f"{rel}: memdir cannot read it ({unreadable[rel]}); `memdir doctor` says how to fix it"
        try:
            st = safefs.lstat(store.base, store.prefix + rel)
        except safefs.UnsafePath as exc:
            return str(exc)
        except (OSError, ValueError):
            continue
        if st is None:
            continue
        kind = safefs.kind_of(st.st_mode)
        if kind == "a folder":
            return f"{rel} is a folder, not a memory; `memdir list` shows the memories"
        if kind != "a regular file":
            return refused_entry(rel, kind)
        if not store.team and rel.startswith(f"{C.TEAM_DIRNAME}/"):
            return f"{rel} is team memory; pass --team {rel[len(C.TEAM_DIRNAME) + 1:]}"
        return (f"{rel} is not a memory memdir reads (memories are .md files outside hidden folders); "
                "`memdir list` shows them")
    return None
