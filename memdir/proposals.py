"""Proposed memory changes, waiting in `.memdir/proposals/` for `memdir review` (write mode confirm).

One JSON file per proposal: the target memory file, the action (create, update or delete), the full
new text, the digest of the file's bytes when the proposal was made (so a file changed since shows as
stale), and the run that proposed it. Nothing here touches the memory folder itself; accepting goes
through the store (memdir/review.py). The secret guard runs before a proposal is written.

This module is on the prompt hook's path (`new_batch_notice`): it imports nothing heavy.
"""

from __future__ import annotations

import os
import re
import time

from memdir import constants as C, light_json, safefs
from memdir.errors import MemdirError
from memdir.record import Record

FOLDER = f"{C.STATE_DIRNAME}/proposals"
TOLD = f"{FOLDER}/.told"  # the proposals (file names) the hooks already told the user about
TOLD_LOCK = f"{FOLDER}/.told.lock"  # one hook at a time reads and notes what was told
LOCK = f"{C.STATE_DIRNAME}/proposals.lock"
ACTIONS = ("create", "update", "delete")
_ID_CHARS = r"[^A-Za-z0-9_.-]+"  # compiled (and cached by re) when a proposal is made, not by every prompt hook


class Proposal(Record):
    """`target` is relative to the store's root (team memory: to `team/`); `base` is the sha256 of the
    target's bytes when proposed, None when it did not exist; `run` groups one run's proposals."""

    id: str
    target: str
    action: str
    text: str | None = None
    base: str | None = None
    name: str = ""
    source: str = ""
    run: str = ""
    created: str = ""
    team: bool = False
    authored: bool = True  # written by memdir's extractor: it may update the memory later
    note: str = ""

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}

    @property
    def shown_target(self) -> str:
        return f"{C.TEAM_DIRNAME}/{self.target}" if self.team else self.target


def digest(text: str | None) -> str | None:
    import hashlib  # not at the top: OpenSSL's load costs the prompt hook ~10 ms

    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def new_run_id() -> str:
    import os

    return time.strftime("%Y%m%dT%H%M%S") + "-" + os.urandom(3).hex()


def _rel(proposal_id: str) -> str:
    return f"{FOLDER}/{proposal_id}.json"


def _from_json(data: object) -> Proposal | None:
    """A proposal from its file's data, or None when the file is not one (never a crash)."""
    if not isinstance(data, dict):
        return None
    try:
        proposal = Proposal(**{k: v for k, v in data.items() if k in Proposal._fields})
    except TypeError:
        return None
    if (not isinstance(proposal.id, str) or not isinstance(proposal.target, str) or proposal.action not in ACTIONS
            or (proposal.action != "delete" and not isinstance(proposal.text, str))):
        return None
    return proposal


def pending(memory_dir: str | os.PathLike) -> list[Proposal]:
    """The proposals waiting for review, oldest first. Unreadable or malformed files are left out."""
    if not safefs.exists(memory_dir, FOLDER):
        return []
    found = []
    for name, kind in safefs.listdir(memory_dir, FOLDER):
        if kind != "file" or not name.endswith(".json"):
            continue
        try:
            proposal = _from_json(light_json.loads(safefs.read_bytes(memory_dir, f"{FOLDER}/{name}").decode()))
        except (OSError, ValueError):
            continue
        if proposal is not None and proposal.id == name[: -len(".json")]:
            found.append(proposal)
    return sorted(found, key=lambda p: (p.created, p.id))


def _free_id(target: str, team: bool, taken: set[str]) -> str:
    stem = re.sub(_ID_CHARS, "-", target.removesuffix(".md").replace("/", "--")).strip("-.") or "memory"
    stem = ("team--" if team else "") + stem[:80]
    candidate, n = stem, 1
    while candidate in taken:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def propose(
    memory_dir: str | os.PathLike,
    *,
    target: str,
    action: str,
    text: str | None = None,
    base_text: str | None = None,
    name: str = "",
    source: str = "",
    run: str = "",
    team: bool = False,
    authored: bool = True,
    note: str = "",
) -> Proposal:
    """Record one proposed change to `target` (a memory file, relative to the store's root) and return it.

    `base_text` is the target's text now (None: absent). A later proposal of the same run for the same
    target replaces that run's earlier one; one identical to a pending proposal is not added twice.
    Text that looks like a secret is refused (one line), before anything is written."""
    from memdir import safefs_write
    from memdir.secrets import guard

    if action not in ACTIONS:
        raise MemdirError(f"proposal action {action!r} is unknown; use create, update or delete")
    if action != "delete":
        if text is None:
            raise MemdirError(f"a proposal to {action} {target} needs the new text")
        guard(text, f"a proposal for {target}")
    safefs_write.mkdirs(memory_dir, FOLDER)
    with safefs_write.locked(memory_dir, LOCK):
        waiting = pending(memory_dir)
        for p in waiting:
            if p.target == target and p.team == team and p.action == action and p.text == text:
                return p  # already waiting, word for word
        same_run = next((p for p in waiting if run and p.run == run and p.target == target and p.team == team), None)
        proposal_id = same_run.id if same_run else _free_id(target, team, {p.id for p in waiting})
        proposal = Proposal(
            id=proposal_id, target=target, action=action, text=text if action != "delete" else None,
            base=digest(base_text), name=name, source=source, run=run,
            created=time.strftime("%Y-%m-%dT%H:%M:%S%z"), team=team, authored=authored, note=note,
        )
        import json  # indent and non-ASCII kept: not light_json's

        safefs_write.write_text(memory_dir, _rel(proposal_id),
                                json.dumps(proposal.as_dict(), indent=1, ensure_ascii=False))
    return proposal


def find(memory_dir: str | os.PathLike, ref: str) -> Proposal:
    """A pending proposal by its id, or by its target (file name, path or stem) when one proposal has it."""
    waiting = pending(memory_dir)
    wanted = ref.strip().removesuffix(".json")
    for p in waiting:
        if p.id == wanted:
            return p
    matches = [p for p in waiting
               if wanted in (p.target, p.shown_target, p.target.removesuffix(".md"), *_name_and_stem(p.target), p.name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise MemdirError(f"{ref!r} names several proposals ({', '.join(p.id for p in matches)}); pass one id")
    shown = ", ".join(p.id for p in waiting) or "none"
    raise MemdirError(f"no pending proposal {ref!r} (pending: {shown}); see `memdir review --list`")


def _name_and_stem(target: str) -> tuple[str, str]:
    """`Path(target).name` and `.stem` in strings: os.path.splitext would make `foo.` the stem `foo` (and
    `..md` the stem `..md`), so `review foo` would name a second proposal that pathlib never matched."""
    from memdir.locate import clean

    cleaned = clean(target)
    name = "" if cleaned == "." else os.path.basename(cleaned)
    dot = name.rfind(".")
    return name, name[:dot] if 0 < dot < len(name) - 1 else name


def move_aside(memory_dir: str | os.PathLike, proposal: Proposal, where: str) -> str:
    """Move a proposal's file to `proposals/<where>/` (kept, never deleted); its new relative path."""
    from memdir import safefs_write

    dst = f"{FOLDER}/{where}/{proposal.id}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    safefs_write.rename(memory_dir, _rel(proposal.id), dst, create_dst_dir=True)
    return dst


def new_batch_notice(memory_dir: str | os.PathLike) -> str | None:
    """"3 memories proposed: `memdir review`" once per new set of proposals, else None.

    Told once per set: `.told` names the pending proposals already told about, so a proposal rewritten in place (a
    run's later proposal for the same file replaces its earlier one) is not news, and the check-and-note is done
    under a lock that a twin hook (memdir registered twice) finding taken leaves to its holder. The prompt hook
    calls this on every prompt: a directory listing and two small files, no parsing."""
    try:
        entries = {name for name, kind in safefs.listdir(memory_dir, FOLDER) if kind == "file" and name.endswith(".json")}
        if not entries and not safefs.exists(memory_dir, TOLD):
            return None
        from memdir import safefs_write  # only now: a prompt hook with no proposals never loads the writers

        with safefs_write.try_locked(memory_dir, TOLD_LOCK) as mine:
            if not mine:
                return None  # a twin hook is telling the user right now
            text = _told_text(memory_dir)
            told = _told(memory_dir, text.split(), entries)
            news = not entries <= told
            # what is told from now on: every pending one after a notice, else the told ones still pending (a
            # decided proposal's id can be given again to a new one, which is news)
            keep = "".join(f"{name}\n" for name in sorted(entries if news else told & entries))
            if keep != text:
                safefs_write.write_text(memory_dir, TOLD, keep, durable=False)
    except (OSError, ValueError):  # no folder yet, or it cannot be read: nothing to tell
        return None
    count = len(entries)
    return f"{count} memor{'y' if count == 1 else 'ies'} proposed: `memdir review`" if news else None


def _told_text(memory_dir: str | os.PathLike) -> str:
    """`.told`'s text; "" (nothing told) when absent or garbled: not UTF-8, or over the read cap, was an error read as
    nothing to tell, and the record was never rewritten, so no proposal was told of again. (A link or folder there
    still tells nothing: it cannot be rewritten, and the notice must not come with every prompt.)"""
    try:
        return safefs.read_bytes(memory_dir, TOLD, prefix=True).decode("utf-8")  # past the cap: its start, rewritten
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return ""


def _told(memory_dir: str | os.PathLike, words: list[str], entries: set[str]) -> set[str]:
    """The proposals told about, from `.told`'s words; as an older memdir wrote it (the newest proposal's mtime
    told about): all pending ones when none is newer, else none."""
    if len(words) != 1 or not words[0].isdigit():
        return set(words)
    mtimes = [st.st_mtime_ns for name in entries if (st := safefs.lstat(memory_dir, f"{FOLDER}/{name}"))]
    return entries if mtimes and max(mtimes) <= int(words[0]) else set()
