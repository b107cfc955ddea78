"""The read path of the decision journal: the last decisions as markdown for a session's first prompt.

Stdlib only (json, os, re): it runs inside the prompt hook, whose budget has no room for pydantic.
It reads only the journal's tail (JOURNAL_TAIL_BYTES), so a years-long journal costs what a new one does.

Journal text is data, never trusted markup: in OrchestKit's layout it comes from the repository, which
may be a hostile clone. Every entry is rendered on one line, under a frame that calls it notes, with
line breaks, control and format characters and heading markers neutralised.
"""

from __future__ import annotations

import os
import re
import time

from memdir import constants as C, light_json, safefs

TYPE_CHECKING = False  # typing's own import is not free on the hook path
if TYPE_CHECKING:
    pass

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MIN_DECISIONS_ROOM = 300  # less room than this: no decisions block at all rather than a stub


def _open_regular(path: str, flags: int, mode: int = 0o644) -> int:
    """`path` opened as safefs opens a memory, without following a link nor waiting on a FIFO (one planted at the
    inbox or a session marker held every prompt until the hook's timeout), refused unless it is a regular file; for
    writing, also when it has another name (a hard link: appended through, the prompt would land in that file).
    Without O_NOFOLLOW (native Windows) the name is lstat-checked and the file opened must be the one checked."""
    if not NOFOLLOW:
        from memdir import safefs_paths, safefs_pathwrite

        folder, name = os.path.split(path)
        if flags & (os.O_WRONLY | os.O_RDWR):
            return safefs.only_name(safefs_pathwrite.open_file(folder, name, flags, mode), path)
        return safefs_paths.open_read(folder, name)
    fd = safefs.open_file_at(None, path, path, flags, mode)
    return safefs.only_name(fd, path) if flags & (os.O_WRONLY | os.O_RDWR) else fd


def _refuse_symlinks(*folders: str) -> None:
    """Nothing memdir writes in the memory folder follows a symlink out of it (the final name: O_NOFOLLOW, or
    where it is missing, native Windows, an lstat check that also refuses a junction)."""
    for folder in folders:
        if NOFOLLOW:
            if os.path.islink(folder):
                raise OSError(f"{folder} is a symlink; memdir does not write through it")
            continue
        from memdir import safefs_paths

        try:
            safefs_paths.not_a_link(os.lstat(folder), folder)
        except FileNotFoundError:
            pass


LABELS = {"decision": "Decision", "preference": "Preference", "pattern": "Pattern", "anti-pattern": "Anti-pattern",
          "problem": "Problem", "note": "Note"}


def tail_records(path: str, wanted: int) -> tuple[list[dict], bool]:
    """(up to `wanted` newest well-formed records oldest first, whether older ones exist)."""
    try:
        # a repository's journal may be a FIFO or a symlink: opened only as a regular file
        fd = safefs.open_file(os.path.dirname(path) or ".", os.path.basename(path))
        with open(fd, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            start = max(0, size - C.JOURNAL_TAIL_BYTES)
            handle.seek(start)
            data = handle.read()
    except OSError:
        return [], False
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # the first line of a tail read is usually cut
    records: list[dict] = []
    for raw in reversed(lines):
        if not raw.strip():
            continue
        try:
            record = light_json.loads(raw.decode())
            if not isinstance(record, dict):
                continue
            what = record["content"]["what"]
        except (ValueError, KeyError, TypeError):
            continue  # corrupt lines are counted by `memdir status`, not here
        if isinstance(what, str) and what.strip():
            records.append(record)
            if len(records) > wanted:
                break  # one beyond what is shown proves "more available"; older lines are not parsed
    more = len(records) > wanted or bool(start)
    return list(reversed(records[:wanted])), more


# C0/C1 controls, line and paragraph separators, zero-width and bidirectional format characters, BOM.
# Patterns as text, compiled by re (and kept in its cache) when a decision is first shown: most prompts show
# none, and compiling them cost every prompt hook about half a millisecond.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]+"
_HEADING = r"(?<!\S)(#{1,6})(?=\s|$)"  # a markdown heading marker, wherever a line break once was
ENTITIES_MAX_CHARS = 200


def one_line(text: object, limit: int = C.DECISION_TEXT_MAX_CHARS) -> str:
    """`text` as inert single-line prose: unsafe characters become spaces, heading markers are escaped,
    and at most `limit` characters are kept. Anything not a string is dropped."""
    if not isinstance(text, str):
        return ""
    flat = " ".join(re.sub(_UNSAFE, " ", text).split())
    flat = re.sub(_HEADING, lambda m: "\\#" * len(m.group(1)), flat)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def entry_markdown(record: dict) -> str:
    found = record.get("content")
    content = found if isinstance(found, dict) else {}
    kind = record.get("type")
    label = LABELS.get(kind, "Note") if isinstance(kind, str) else "Note"
    line = f"- **[{label}]** {one_line(content.get('what'))}"
    why = one_line(content.get("why"))
    if why:
        line += f" _(because: {why})_"
    listed = record.get("entities")
    raw_entities = listed if isinstance(listed, list) else []
    names = [name for name in (one_line(e, 60) for e in raw_entities) if name]
    entities = one_line(", ".join(names), ENTITIES_MAX_CHARS)
    if entities:
        line += f" [{entities}]"
    return line


def recent_decisions_markdown(journal: str, limit: int = C.RECENT_DECISIONS_SHOWN,
                              max_chars: int = C.RECENT_DECISIONS_MAX_CHARS, keep=None) -> str:
    """The newest `limit` decisions, newest first, at most `max_chars` with the hint when any are left out."""
    return decisions_block(journal, limit, max_chars, keep)[0]


def decisions_block(journal: str, limit: int = C.RECENT_DECISIONS_SHOWN, max_chars: int = C.RECENT_DECISIONS_MAX_CHARS,
                    keep=None) -> tuple[str, list[dict]]:
    """`recent_decisions_markdown` and the records it shows. `keep`: a filter over the newest `limit`
    records (oldest first), e.g. only those relevant to the prompt; "" when it keeps none."""
    records, more = tail_records(journal, limit)
    if keep is not None and records:
        records = keep(records)
    if not records:
        return "", []
    hint = C.MORE_DECISIONS_HINT.format(journal=one_line(journal, 1000))
    lines = [C.RECENT_DECISIONS_HEADING, C.RECENT_DECISIONS_FRAME]
    size = units(lines[0]) + 1 + units(lines[1])
    cut = False
    shown: list[dict] = []
    for record in reversed(records):
        line = entry_markdown(record)
        if size + 1 + units(line) + 1 + units(hint) > max_chars:
            cut = True
            break
        lines.append(line)
        shown.append(record)
        size += 1 + units(line)
    if cut or more:
        lines.append(hint)
    return ("\n".join(lines), shown) if shown else ("", [])


def decision_key(record: dict) -> str:
    """What names a journal record across prompts: its id, else its text."""
    found = record.get("id")
    if isinstance(found, str) and found:
        return found[:200]
    content = record.get("content")
    return one_line(content.get("what") if isinstance(content, dict) else "", 200)


def shown_in_session(memory_dir: str, session_id: str | None) -> set[str]:
    """The decisions already shown in this session (one key a line in the session's marker file)."""
    marker = _session_marker(memory_dir, session_id)
    if marker is None:
        return set()
    try:
        fd = _open_regular(marker, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(C.JOURNAL_TAIL_BYTES)
    except OSError:
        return set()
    return {line for line in data.decode("utf-8", "replace").split("\n") if line}


def note_shown(memory_dir: str, session_id: str | None, keys: list[str]) -> None:
    """Remember that these decisions were shown in this session, so no later prompt repeats them."""
    marker = _session_marker(memory_dir, session_id)
    if marker is None or not keys:
        return
    try:
        _refuse_symlinks(os.path.dirname(os.path.dirname(marker)), os.path.dirname(marker))
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        fd = _open_regular(marker, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except OSError:
        return
    try:
        os.write(fd, "".join(one_line(key, 200) + "\n" for key in keys).encode("utf-8"))
    finally:
        os.close(fd)


def _session_marker(memory_dir: str, session_id: str | None) -> str | None:
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    return os.path.join(memory_dir, C.STATE_DIRNAME, C.DECISION_SESSIONS_DIRNAME, session_id)


def first_prompt_of_session(state_dir: str, session_id: str | None) -> bool:
    """True exactly once per session id (an O_EXCL marker file); False without a session id."""
    if not session_id or "/" in session_id or session_id.startswith("."):
        return False
    folder = os.path.join(state_dir, C.DECISION_SESSIONS_DIRNAME)
    try:
        _refuse_symlinks(state_dir, folder)
        os.makedirs(folder, exist_ok=True)
        fd = os.open(os.path.join(folder, session_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    except FileExistsError:
        return False
    except OSError:
        return False
    os.close(fd)
    return True


def prune_session_markers(state_dir: str, max_age_days: float = 30.0) -> int:
    """Markers of long-finished sessions go (run by the Stop worker, never on the prompt path)."""
    folder = os.path.join(state_dir, C.DECISION_SESSIONS_DIRNAME)
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


def enqueue_prompt(state_dir: str, prompt: str, cwd: str | None, session_id: str | None) -> None:
    """Queue the prompt for decision capture by the Stop worker: one small O_APPEND write, no parsing here.

    The queue is a file, so the prompt is queued redacted: a secret typed in a prompt never reaches the
    disk through it (the worker then skips any decision holding [redacted]). Redacted a little beyond the
    cut, so a secret the cut would halve is still recognised whole."""
    from memdir.secrets import redact

    kept = redact(prompt[: C.INBOX_MAX_PROMPT_CHARS + C.INBOX_REDACT_MARGIN_CHARS])[: C.INBOX_MAX_PROMPT_CHARS]
    record = {"prompt": kept, "cwd": cwd, "session_id": session_id,
              "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _refuse_symlinks(state_dir)
    os.makedirs(state_dir, exist_ok=True)
    fd = _open_regular(os.path.join(state_dir, C.DECISION_INBOX), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_size < C.INBOX_MAX_BYTES:  # no Stop worker draining it: stop growing, status says so
            os.write(fd, (light_json.dumps(record) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def for_prompt_hook(memory_dir: str, cwd: str | None, prompt: str, session_id: str | None) -> tuple[str, str]:
    """The prompt hook's share of the decision tiers, kept cheap: queue the prompt for capture (the Stop
    worker does the parsing and writing) and return (the journal whose recent decisions may be shown,
    a one-time notice for the user on the session's first prompt), each "" when there is none. Which
    decisions the prompt gets is the caller's choice (those relevant to it, each once a session:
    `decisions_block` with a filter). A repository's own journal is shown only when the user opted in
    to OrchestKit's layout. Never raises: decisions must not cost the user their prompt."""
    state_dir = os.path.join(memory_dir, C.STATE_DIRNAME)
    try:
        enqueue_prompt(state_dir, prompt, cwd, session_id)
    except OSError:
        pass
    try:
        if _session_marker(memory_dir, session_id) is None:
            return "", ""
        first = first_prompt_of_session(state_dir, session_id)
        from memdir.enablement import orchestkit_compat
        from memdir.locate import decisions_dir, project_root

        root = project_root(cwd if cwd and os.path.isdir(cwd) else os.getcwd())
        compat = orchestkit_compat(memory_dir, root).enabled
        journal = os.path.join(decisions_dir(memory_dir, root, compat=compat), C.DECISIONS_JOURNAL)
        notice = "" if compat or not first else _say_once(memory_dir, unread_repo_journal(memory_dir, root))
        return (journal if os.path.isfile(journal) else ""), notice
    except (OSError, ValueError):
        return "", ""


def unread_repo_journal(memory_dir: str | os.PathLike, root: str | os.PathLike) -> str:
    """When the repository holds `.claude/memory/decisions.jsonl` (OrchestKit's layout, or memdir before it
    kept decisions in the memory folder) and the user has not chosen a layout: what to tell them, starting
    with the journal's path. memdir neither reads nor writes it (a cloned repository's journal is not
    trusted), and never moves or deletes it. "" when there is no such journal or the user chose."""
    from memdir.enablement import orchestkit_setting
    from memdir.locate import decisions_dir, orchestkit_journal

    memory_dir, root = os.fspath(memory_dir), os.fspath(root)
    legacy = orchestkit_journal(root)
    if not os.path.isfile(legacy) or orchestkit_setting(memory_dir, root) is not None:
        return ""
    here = decisions_dir(memory_dir, root, compat=False)
    config = os.path.join(memory_dir, C.STATE_DIRNAME, C.MEMDIR_CONFIG_NAME)
    return (f"{legacy} is not read: memdir keeps this project's decisions in {here} unless you opt in to "
            f"OrchestKit's layout. To keep using that journal, set {C.ORCHESTKIT_COMPAT_ENV}=1 or put "
            f'{{"{C.ORCHESTKIT_COMPAT_KEY}": true}} in {config} (false there says you chose this layout)')


def _say_once(memory_dir: str, message: str) -> str:
    """`message` the first time for this memory folder (an O_EXCL marker in its state dir), then ""."""
    if not message:
        return ""
    state_dir = os.path.join(memory_dir, C.STATE_DIRNAME)
    try:
        _refuse_symlinks(state_dir)
        marker = os.path.join(state_dir, C.ORCHESTKIT_NOTICE_MARKER)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644))
    except OSError:
        return ""  # said before (or cannot remember saying it: doctor and `memdir status` still say it)
    return f"memdir: {message}"


def units(text: str) -> int:
    """Length as Claude Code counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def with_recent_decisions(journal: str, context: str, budget: int = C.HOOK_OUTPUT_BUDGET, keep=None) -> str:
    """The recent decisions before `context`, in whatever room the hook's one output budget leaves
    (at most RECENT_DECISIONS_MAX_CHARS): recalled memories answer this prompt, so they keep their room."""
    return add_decisions(journal, context, budget, keep)[0]


def add_decisions(journal: str, context: str, budget: int = C.HOOK_OUTPUT_BUDGET, keep=None) -> tuple[str, list[dict]]:
    """`with_recent_decisions`, and the records it added (`keep` as for `decisions_block`)."""
    if not journal:
        return context, []
    room = budget - (units(context) + 2 if context else 0)
    if room < MIN_DECISIONS_ROOM:
        return context, []
    block, shown = decisions_block(journal, max_chars=min(C.RECENT_DECISIONS_MAX_CHARS, room), keep=keep)
    if not block:
        return context, []
    return (f"{block}\n\n{context}" if context else block), shown
