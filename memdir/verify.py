"""Checking what a memory claims about the code against the code as it is today.

A memory names file paths, symbols (functions, classes, constants), commands and flags (memdir.claims finds
them). A refactor removes or renames them and the memory goes stale without anyone noticing; an agent that
trusts it then edits a file that no longer exists or calls a function that was renamed. This module checks
those names cheaply:
- paths: one `stat` each, relative to the project root;
- symbols and flags: one bounded walk over the project's text files, every name searched at once,
  stopping when all are found or the time budget runs out (unfound names then read
  "not checked (budget)", never "gone"); git-ignored files are skipped by reading `.gitignore`
  (no `git` process on the prompt path; the CLI may pass `git ls-files` output instead);
- commands: `make X`, `npm run X`, `just X` against the Makefile / package.json / justfile.

Only a memory's body is read, never its frontmatter. Plain functions: recall calls `check_many`
for the memories it injects; `memdir verify` and `doctor` call `verify_folder`.
"""

from __future__ import annotations

import json
import os
import re
import time

from memdir.claims import Claim, extract_claims
from memdir.project_files import BINARY_SUFFIXES, _read_project_text, git_files, read_project_file, walk_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memdir.verdicts import Verdicts

# --- checking ----------------------------------------------------------------------------------------
OK, STALE, UNCHECKED = "ok", "stale", "unchecked"


class Evidence:
    """The result for one memory: status ok | stale | unchecked, and one line per finding."""

    __slots__ = ("status", "gone", "found", "unchecked", "claims")

    def __init__(self, claims: list[Claim]) -> None:
        self.claims = claims
        self.gone: list[str] = []
        self.found: list[str] = []
        self.unchecked: list[str] = []
        self.status = UNCHECKED

    def finish(self) -> Evidence:
        self.status = STALE if self.gone else (OK if self.found and not self.unchecked else UNCHECKED)
        return self

    def summary(self) -> str:
        """One line for the injected header: what was checked and what is gone."""
        if not self.claims:
            return ""
        if self.gone:
            line = "; ".join(self.gone)
            if self.unchecked:
                line += f"; {len(self.unchecked)} other name(s) not checked (budget)"
            return line
        if self.unchecked:
            return "not checked (budget)" if not self.found else f"{len(self.found)} name(s) still there; others not checked (budget)"
        return "still there: " + ", ".join(f"`{f}`" for f in self.found[:6])

    def as_dict(self) -> dict:
        return {"status": self.status, "gone": self.gone, "found": self.found, "unchecked": self.unchecked,
                "summary": self.summary()}


_GONE_WORDS = {"path": "is not in the project", "symbol": "is not in the code",
               "flag": "is not in the code", "command": "is not in the project"}


_COMMAND_FILES = {"make": "Makefile", "just": "justfile", "npm": "package.json", "yarn": "package.json",
                  "pnpm": "package.json", "bun": "package.json"}


def _command_exists(root: str, command: str) -> bool | None:
    tool, target = command.split(" ", 1) if " " in command else (command, "")
    tool = tool.split()[0]
    where = _COMMAND_FILES.get(tool)
    text = _read_project_text(os.path.join(root, where)) if where else None
    if text is None:
        return None
    try:
        if tool == "make":
            return re.search(rf"^{re.escape(target)}\s*:", text, re.M) is not None
        if tool == "just":
            return re.search(rf"^{re.escape(target)}\b.*:", text, re.M) is not None
        scripts = json.loads(text).get("scripts") or {}
        return target in scripts
    except (ValueError, AttributeError, TypeError, RecursionError):
        return None


def check_claims(root: str, claims: list[Claim], *, budget_s: float = 0.2, files: list[str] | None = None,
                 verdicts: Verdicts | None = None, between_files: Callable[[], None] | None = None,
                 skip: str | None = None) -> dict[Claim, bool | None]:
    """True (still there), False (gone) or None (not checked) per claim.

    `files`: the project's file list (from `git ls-files`); when None the tree is walked, skipping
    what `.gitignore` names. Names are searched as whole words in every text file until all are found
    or `budget_s` runs out. `verdicts`: names already searched for (the warm server's, memdir.verdicts),
    used instead of searching again, and given what this search settles. `between_files`: called before
    each file is read (the warm server's background search waits there while a prompt is being answered).
    `skip`: the memory folder's path under `root` (`memory_folder_in`), whose files are never searched: a
    memory does not vouch for itself.
    """
    key = root if skip is None else f"{root}\0{skip}"  # verdicts found without the memory folder are its own
    deadline = time.monotonic() + budget_s
    result: dict[Claim, bool | None] = {}
    words: dict[str, list[Claim]] = {}
    for claim in claims:
        if claim.kind == "path":
            path = claim.text.lstrip("./") if claim.text.startswith("./") else claim.text
            if os.path.isabs(path):
                result[claim] = os.path.exists(path) if path.startswith(root + os.sep) else None
            elif "/" in path.strip("/"):  # `../x` names no file of the project: never looked up outside it
                inside = os.path.normpath(os.path.join(root, path)).startswith(root.rstrip(os.sep) + os.sep)
                result[claim] = os.path.exists(os.path.join(root, path)) if inside else None
            elif os.path.exists(os.path.join(root, path)):
                result[claim] = True
            else:
                words.setdefault("\0file:" + path, []).append(claim)  # a bare file name: anywhere in the tree
        elif claim.kind == "command":
            result[claim] = _command_exists(root, claim.text)
        else:
            needle = claim.text.rsplit(".", 1)[-1] if claim.kind == "symbol" else claim.text
            words.setdefault(needle, []).append(claim)
    if words and verdicts is not None:
        for needle in list(words):
            there = verdicts.get(key, needle)
            if there is not None:
                for claim in words.pop(needle):
                    result[claim] = there
    if words and budget_s > 0:
        found = _scan(root, set(words), deadline, files, between_files, skip)
        complete = found.pop("\0complete", False)
        for needle, owners in words.items():
            for claim in owners:
                result[claim] = True if needle in found else (False if complete else None)
        if verdicts is not None:
            verdicts.put(key, {needle: needle in found for needle in words} if complete else found)
    return result


def names_pattern(terms: list[str]) -> re.Pattern[str]:
    """Any of `terms` as a whole word (not inside a longer word or a --flag), the longest tried first. The
    boundaries stand once around the names, not in each (same matches): with a lookbehind opening each, re
    tried every name at every character, 1 s of CPU for 100 names over 512 KB, holding the GIL throughout."""
    alternatives = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


def _scan(root: str, needles: set[str], deadline: float, files: list[str] | None,
          between_files: Callable[[], None] | None = None, skip: str | None = None) -> dict[str, bool]:
    names = {n.split(":", 1)[1] for n in needles if n.startswith("\0file:")}
    terms = [n for n in needles if not n.startswith("\0file:")]
    pattern = names_pattern(terms) if terms else None
    found: dict[str, bool] = {}
    entries = ((rel, os.path.join(root, rel)) for rel in files) if files is not None else walk_files(root, None, deadline)
    for rel, path in entries:
        if skip is not None and rel.startswith(skip + "/"):
            continue
        if between_files is not None:
            between_files()
        if time.monotonic() > deadline:
            return found
        base = rel.rsplit("/", 1)[-1]
        if base in names:
            found["\0file:" + base] = True
        if pattern is None or os.path.splitext(base)[1].lower() in BINARY_SUFFIXES:
            continue
        data = read_project_file(path)  # a tracked symlink to a FIFO or device is skipped, never opened
        if data is None or b"\0" in data[:1024]:
            continue
        for match in pattern.finditer(data.decode("utf-8", "replace")):
            found[match.group(0)] = True
        if len(found) == len(needles):
            break
    if len(found) < len(needles) and time.monotonic() > deadline:
        return found  # the walk may have stopped at the deadline: what it did not find is not checked, not gone
    found["\0complete"] = True
    return found


def check_many(root: str, texts: dict[str, str], *, budget_s: float = 0.2, files: list[str] | None = None,
               ignore: frozenset[str] | set[str] = frozenset(), verdicts: Verdicts | None = None,
               between_files: Callable[[], None] | None = None, skip: str | None = None) -> dict[str, Evidence]:
    """Evidence per memory (keyed as given), all names checked in one walk of the project.

    Only the body is read: frontmatter keys and values (`node_type`, `originSessionId`, a `name` in
    snake_case) are the memory's own bookkeeping, in Claude Code's `metadata:` form and the older
    top-level one alike, never names of code. `ignore`: file names never checked (the memory folder's own files);
    `skip`: see check_claims."""
    claims = {key: [c for c in _claims_of(text, verdicts is not None)
                    if not (c.kind == "path" and os.path.basename(c.text) in ignore)]
              for key, text in texts.items()}
    results = check_claims(root, list(dict.fromkeys(c for cs in claims.values() for c in cs)),
                           budget_s=budget_s, files=files, verdicts=verdicts, between_files=between_files, skip=skip)
    out: dict[str, Evidence] = {}
    for key, own in claims.items():
        evidence = out[key] = Evidence(own)
        for claim in own:
            there = results.get(claim)
            if there is True:
                evidence.found.append(claim.text)
            elif there is False:
                evidence.gone.append(f"`{claim.text}` {_GONE_WORDS[claim.kind]}")
            else:
                evidence.unchecked.append(claim.text)
        evidence.finish()
    return out


CLAIMS_KEPT = 256  # memory texts whose names the warm server keeps
_claims_kept: dict[str, list[Claim]] = {}


def _claims_of(text: str, keep: bool) -> list[Claim]:
    """The names in a memory's body; kept by its whole text where names are checked prompt after prompt (the
    warm server, which passes `verdicts`): finding them took 1.6 ms per recalled memory of a real folder, after
    the answer was known (issue 26). An edited memory is another text: its names are found afresh."""
    from memdir.frontmatter_io import body_of

    if not keep:
        return extract_claims(body_of(text))
    found = _claims_kept.get(text)
    if found is None:
        if len(_claims_kept) >= CLAIMS_KEPT:
            _claims_kept.clear()
        found = _claims_kept[text] = extract_claims(body_of(text))
    return found


def check_text(root: str, text: str, *, budget_s: float = 0.2, files: list[str] | None = None,
               verdicts: Verdicts | None = None) -> Evidence:
    """Evidence for one memory's text (its body: see check_many)."""
    return check_many(root, {"": text}, budget_s=budget_s, files=files, verdicts=verdicts)[""]


# --- a whole memory folder ---------------------------------------------------------------------------
FOLDER_BUDGET_S = 20.0  # `memdir verify` and doctor: a big repository is still bounded


def verify_folder(memory_dir, root: str, *, use_git: bool = True, budget_s: float = FOLDER_BUDGET_S,
                  read_bytes: int = 8192, newest: int | None = None) -> dict[str, Evidence]:
    """Evidence per memory file (rel path) of the folder, checked against the project at `root`.

    Names of memory files themselves (`feedback_x.md`, MEMORY.md) are links between memories, not
    claims about the code, and are not checked. `newest`: check only that many, the most recently
    changed (reading the names of 20,000 memories takes half a minute). Nothing is checked (no evidence)
    when the project is the memory folder or lies inside it (`holds_no_code`).
    """
    from memdir import safefs
    from memdir.scan import iter_memory_files

    memory_dir = str(memory_dir)
    if holds_no_code(memory_dir, root):
        return {}
    paths = sorted(iter_memory_files(memory_dir))
    own_names = {os.path.basename(p) for p in paths} | {"MEMORY.md"}
    if newest is not None and len(paths) > newest:
        paths = sorted(sorted(paths, key=_mtime, reverse=True)[:newest])
    texts: dict[str, str] = {}
    for path in paths:
        rel = os.path.relpath(path, memory_dir).replace(os.sep, "/")
        try:  # never through a symlink, never a FIFO (safefs refuses both)
            texts[rel] = safefs.read_bytes(memory_dir, rel, read_bytes, prefix=True).decode("utf-8", "replace")
        except OSError:
            continue
    files = git_files(root) if use_git and os.path.exists(os.path.join(root, ".git")) else None
    return check_many(root, texts, budget_s=budget_s, files=files, ignore=own_names,
                      skip=memory_folder_in(memory_dir, root))


def memory_folder_in(memory_dir, root: str) -> str | None:
    """The memory folder's path under the project (posix), when it lies inside it: an agent's project-scope
    memory (`.claude/agent-memory/<agent>/`), a `--dir` inside the checkout. Else None."""
    try:
        rel = os.path.relpath(os.path.realpath(os.fspath(memory_dir)), os.path.realpath(root))
    except ValueError:  # another drive
        return None
    if rel in (".", os.pardir) or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def holds_no_code(memory_dir, root: str) -> bool:
    """Whether the project at `root` is the memory folder itself, or a folder inside it that is no checkout of its
    own (`--dir` the checkout's root, `--cwd` in the memory folder): its files are then the memories, and checked
    against them a memory vouched for every name it gives while each path it gives read as gone. There is no
    project code to check against."""
    try:
        rel = os.path.relpath(os.path.realpath(root), os.path.realpath(os.fspath(memory_dir)))
    except ValueError:  # another drive
        return False
    if rel == ".":
        return True
    inside = not (rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel))
    return inside and not os.path.exists(os.path.join(root, ".git"))


NO_PROJECT_CODE = "no project code to verify against: the project folder {root} is the memory folder or a part of it"


def _mtime(path: str) -> float:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def head_commit(root: str) -> str | None:
    import subprocess

    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode().strip() or None


def record_verified(store, rel_path: str, commit: str | None, date: str) -> None:
    """Note in the memory's frontmatter what it was checked against: `metadata.verified: {commit, date}`.

    Nested under `metadata:` like Claude Code's own `metadata.type`, so Claude Code still reads the
    file. The file's mtime is kept: being checked is not being re-saved, and recall shows age by it.
    """
    path = store.resolve_rel(rel_path)
    before = os.stat(path, follow_symlinks=False)
    text = store.read_file(rel_path)  # bounded, no symlink, no FIFO
    memory = store.load(rel_path)
    metadata = memory.extra.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    metadata["verified"] = {"commit": commit or "", "date": date}
    memory.extra["metadata"] = metadata
    from memdir.provenance import entry

    store.save(memory, rel_path=rel_path, expected_text=text, allow_secrets=True, provenance=entry("verify"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
