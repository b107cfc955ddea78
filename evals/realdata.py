"""`memdir eval run --suite realdata`: extraction over every real Claude Code session in the shared data.

Graded against evals/cases/realdata.yaml (what a careful reader would save, from the data's README):
recall over the expected memories, precision over what was saved (each unmatched memory is listed
verbatim so a person can judge it), memories saved on "nothing here" sessions, and a no-loss check
that extracts every session into a copy of a real hand-curated memory folder and then rebuilds its
index: every pre-existing file must be byte-identical unless memdir reported an update and kept the
old bytes. Held-out sessions are reported apart.

Two sets: `claude-code-log/` (graded from evals/cases/realdata.yaml) and `sessions2/` (graded from the
data's own items.json: an item is found when a saved memory of its type contains every keyword as a
case-insensitive substring, as that file's README prescribes). `only` runs the sessions whose key matches
a pattern (and skips the no-loss check); `loop` (evals/model_loop.py) is the relay or cassette behind the
anthropic engine, told which session each request belongs to. A session whose extraction fails ends the
run (`EvalError`): its figures would otherwise count a failure as "saved nothing".
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from memdir import constants as C, history
from memdir.evals.realdata_specs import (
    CASES,
    EvalError,
    SessionSpec,
    grade_session,
    items_specs,
    load_suite,
    sessions2_specs,
)

NO_LOSS_FOLDER = "memory-folders/application-pipeline"
NO_LOSS_PREFIX = "no-loss/"  # the model loop's name for the no-loss check's extractions (and a cassette's)


def run_folder(folder: Path, *, engine: str = "offline", settings=None, loop=None,
               only: Sequence[str] | None = None, into: Path | None = None, chain: bool = False) -> dict:
    """`--data DIR`: every `*.jsonl` of an outside folder graded from its items.json, reported as held out (a folder
    kept apart from tuning, such as a fresh set of sessions no rule was written against). No no-loss check.
    `only`: --session patterns, matched against `<folder name>/<file stem>` keys. `into` (--into): each session is
    extracted into a copy of that memory folder instead of an empty one, so the model meets memories to read and
    update; only what the run wrote or changed is graded. `chain` (--chain): the sessions of one project (the folder
    they ran in) are extracted one after another, oldest first, into one memory folder, as the Stop hook does for a
    user who comes back: a later session meets what the earlier ones saved. Each is graded on what it wrote or
    changed."""
    from memdir.config import Settings

    settings = settings or Settings.from_env().with_overrides(engine=engine)
    if not (folder / "items.json").is_file():
        raise EvalError(f"--data {folder}: no items.json (the sessions2/items.json format) beside the transcripts")
    if into is not None and not into.is_dir():
        raise EvalError(f"--into {into}: not a folder; pass a memory folder (e.g. shared/realdata/{NO_LOSS_FOLDER})")
    specs = items_specs(folder)
    if only is not None:
        unmatched = [p for p in only if not any(fnmatch.fnmatchcase(k, p) for k in specs)]
        if unmatched:
            raise EvalError(f"--session {unmatched[0]} matches no session of {folder}; keys look like "
                            f"{next(iter(specs), folder.name + '/<file stem>')} (shell patterns allowed)")
        specs = {k: v for k, v in specs.items() if any(fnmatch.fnmatchcase(k, p) for p in only)}
    part = _empty()
    transcripts = {key: folder / (key.split("/", 1)[1] + ".jsonl") for key in specs}
    for group in project_chains(transcripts) if chain else [[key] for key in specs]:
        with tempfile.TemporaryDirectory(prefix="memdir-realdata-") as tmp:
            memory_dir = Path(tmp) / "memory"
            before = copied_into(into, memory_dir) if into is not None else {}
            for key in group:
                result = _extract(transcripts[key], memory_dir, engine, settings, loop, key)
                written = written_since(memory_dir, before)
                graded = grade_session(specs[key], written)
                graded.update(session=key, prompts_seen=result.prompts_seen, nothing_session=not specs[key].expect,
                              status=result.status, reason=result.reason, model_calls=result.turns,
                              updated=sum(1 for m in written if m["file"] in before))
                _fold(part, graded)
                before = folder_bytes(memory_dir)
    return {"engine": engine, "root": str(folder), "tuning": _figures(_empty()), "held_out": _figures(part)}


def writable_copy(source: Path, folder: Path) -> None:
    """`source` copied to `folder`, links as links (never followed out of it), and writable by its owner: the shared
    data is read-only, and a copy keeps its modes (the folder itself too, where nobody but root could then write).
    A FIFO, socket or device is left out (no memory is one, and copying a FIFO fails); a file that cannot be read ends
    the run in one line."""
    try:
        shutil.copytree(source, folder, symlinks=True, ignore=_special_files)
    except (shutil.Error, OSError) as exc:
        first = exc.args[0][0] if isinstance(exc, shutil.Error) and exc.args and exc.args[0] else exc
        why = first[2] if isinstance(first, tuple) and len(first) == 3 else first  # copytree's (src, dst, why)
        raise EvalError(f"{source}: cannot copy it ({why}); pass a memory folder you can read whole") from None
    for p in (folder, *folder.rglob("*")):
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)


def _special_files(folder: str, names: list[str]) -> set[str]:
    """For copytree: the names in `folder` that are neither a folder, a regular file nor a link."""
    def special(name: str) -> bool:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            return False  # gone, or unreadable: copytree says so
        return not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode))

    return {name for name in names if special(name)}


def copied_into(source: Path, memory_dir: Path) -> dict[str, bytes | None]:
    """`source` copied to `memory_dir` (`writable_copy`); each file's bytes, by path."""
    writable_copy(source, memory_dir)
    return folder_bytes(memory_dir)


def folder_bytes(memory_dir: Path) -> dict[str, bytes | None]:
    """Each memory file's bytes, by path (links left out): what a next session is graded against."""
    if not memory_dir.is_dir():
        return {}
    return {p.relative_to(memory_dir).as_posix(): _bytes(memory_dir, p.relative_to(memory_dir).as_posix())
            for p in memory_dir.rglob("*.md") if p.is_file() and not p.is_symlink()}


def project_chains(transcripts: dict[str, Path]) -> list[list[str]]:
    """The session keys grouped by the folder each session ran in (its transcript's first `cwd`; a session that
    names none is alone), each group oldest first (by its last message), groups in the order their first key came."""
    from datetime import datetime

    from memdir.transcript import read_transcript

    groups: dict[str, list[tuple[datetime, str]]] = {}
    for key, path in transcripts.items():
        read = read_transcript(path)  # once: its cwd and its last message's time (session_time reads it again)
        group = f"cwd:{_spelled_once(read.cwd)}" if read.cwd else f"key:{key}"
        groups.setdefault(group, []).append((last_time(read.messages), key))
    return [[key for _, key in sorted(group, key=lambda pair: pair[0])] for group in groups.values()]


def _spelled_once(cwd: str) -> str:
    """A session's folder as memdir keys its memory folder (memdir.locate: the real path, in NFC), as far as a transcript
    from another machine tells: `/repo/`, `/repo/./` and `/repo` are one folder, and so are `C:\\Users\\x\\repo` and
    `c:/Users/x/repo/` (Windows' names are case-insensitive). hostile27: each spelling was a chain of its own."""
    from memdir.locate import clean, nfc
    from memdir.stages.extractor.platform_paths import is_windows_path

    spelled = clean(nfc(cwd).replace("\\", "/") if is_windows_path(cwd) else nfc(cwd))
    return spelled.casefold() if is_windows_path(cwd) else spelled


def written_since(memory_dir: Path, before: dict[str, bytes | None]) -> list[dict]:
    """The memories of `memory_dir` that are new, or whose bytes differ from `before` (`copied_into`'s)."""
    return [m for m in saved_memories(memory_dir) if before.get(m["file"]) != _bytes(memory_dir, m["file"])]


def _bytes(memory_dir: Path, rel: str) -> bytes | None:
    path = memory_dir / rel
    return None if path.is_symlink() or not path.is_file() else path.read_bytes()


def session_key(root: Path, transcript: Path) -> str:
    """`<project folder>/<first 8 chars of the session id>`, as the README names sessions; `sessions2/<stem>`."""
    if transcript.parent.name == "sessions2":
        return f"sessions2/{transcript.stem}"
    return f"{transcript.parent.name}/{transcript.stem[:8]}"


def choose_sessions(root: Path, sets: Sequence[str], only: Sequence[str] | None) -> list[Path]:
    """The transcripts of `sets` whose key matches a pattern of `only` (every one when `only` is None)."""
    from memdir.evals.realdata_path import main_sessions, sessions2

    found = (main_sessions(root) if "claude-code-log" in sets else []) + (sessions2(root) if "sessions2" in sets else [])
    if only is None:
        return found
    keys = {t: session_key(root, t) for t in found}
    unmatched = [p for p in only if not any(fnmatch.fnmatchcase(k, p) for k in keys.values())]
    if unmatched:
        raise EvalError(f"--session {unmatched[0]} matches no session; keys look like sessions2/ko-push-nothing or "
                        "-src-deep-manifest/a7da6a22 (shell patterns allowed)")
    return [t for t, k in keys.items() if any(fnmatch.fnmatchcase(k, p) for p in only)]


def saved_memories(memory_dir: Path) -> list[dict]:
    from memdir.store import MemoryStore

    store = MemoryStore(memory_dir)
    out = []
    for header in store.scan().headers:
        memory = store.load(header.rel_path)
        out.append({"file": header.rel_path, "type": memory.type.value, "description": memory.description,
                    "text": f"{memory.name}\n{memory.description}\n{memory.body}", "body": memory.body})
    return out


FALLBACK_TODAY = (2026, 3, 2)  # a session with no dated message


def session_day(transcript: Path):
    """The day the session's last message was written: "today" for its extraction, as for the Stop hook's
    worker, which runs right after a turn. (A fixed day told the model "Today is 2026-03-02" over messages
    written months later, found by a model answering fresh held-out sessions.) Fixed per session, so a
    recorded run replays."""
    from datetime import date

    from memdir.transcript import read_transcript

    return max((day for day, _ in message_times(read_transcript(transcript).messages)), default=date(*FALLBACK_TODAY))


def session_time(transcript: Path):
    """When the session's last message was written (UTC): the time its memories are stamped with (`modified:`), as
    the Stop hook's worker writes them right after the turn. The clock's time told the model, which reads them back,
    of a memory modified on 2026-11-27 in a session dated 2026-01-25 (relay14). Fixed per session, so a recorded run
    replays."""
    from memdir.transcript import read_transcript

    return last_time(read_transcript(transcript).messages)


def last_time(messages: list, default=None):
    """When the last of `messages` was written (UTC); when none says, `default` (a date) or FALLBACK_TODAY, at its start."""
    from datetime import UTC, datetime

    year, month, day = (default.year, default.month, default.day) if default is not None else FALLBACK_TODAY
    return max((moment for _, moment in message_times(messages)), default=datetime(year, month, day, tzinfo=UTC))


def message_times(messages: list) -> list:
    """(day, UTC time) of each message that carries a date; the time is the day's start when its stamp has none."""
    from datetime import UTC, date, datetime

    found = []
    for message in messages:
        stamp = message.timestamp or ""
        try:
            day = date.fromisoformat(stamp[:10])
        except ValueError:  # no stamp, or not one Claude Code writes: the message dates nothing
            continue
        try:
            moment = datetime.fromisoformat(stamp)
            moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        except (ValueError, OverflowError):  # a date alone, or a time past what UTC can show (year 1 at +14:00)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        found.append((day, moment))
    return found


def _extract(transcript: Path, memory_dir: Path, engine: str, settings, loop=None, label: str = ""):
    from memdir.model import stamped_at
    from memdir.stages.extractor.run import extract_transcript

    if loop is not None:
        loop.begin(label, memory_dir)
    with stamped_at(session_time(transcript)):
        result = extract_transcript(transcript, memory_dir, settings=settings, engine=engine,
                                    today=session_day(transcript), client=loop.client() if loop is not None else None)
    if result.status == "failed":
        failure = loop.failure if loop is not None else None
        raise EvalError(failure or f"{label}: the extraction failed: {result.reason}")
    return result


def no_loss_check(root: Path, sessions: list[Path], engine: str, settings, loop=None) -> dict:
    """Extract every session into a copy of a real memory folder, then rebuild its index."""
    from memdir.store import MemoryStore

    source = root / NO_LOSS_FOLDER
    with tempfile.TemporaryDirectory(prefix="memdir-noloss-") as tmp:
        folder = Path(tmp) / "memory"
        writable_copy(source, folder)
        # (a link in the copy is never read: what it points at is outside the folder, and no memory)
        before = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
                  if p.is_file() and not p.is_symlink()}
        reported: dict[str, list[str]] = {}
        for transcript in sessions:
            result = _extract(transcript, folder, engine, settings, loop, NO_LOSS_PREFIX + session_key(root, transcript))
            for change in result.changes:
                if change["action"] in ("updated", "deleted") and change.get("kept"):
                    reported.setdefault(change["file"], []).append(change["kept"])
        rebuilt = MemoryStore(folder).rebuild_index()
        if rebuilt.kept:
            reported.setdefault(C.INDEX_NAME, []).append(rebuilt.kept)
        lost_files, lost_bytes, changed = [], 0, []
        for rel, data in before.items():
            path = folder / rel
            if path.is_file() and path.read_bytes() == data:
                continue
            changed.append(rel)
            kept = [folder / k for k in reported.get(rel, [])]
            kept += [v.path for v in history.versions(folder / C.STATE_DIRNAME, rel)]
            if not any(k.is_file() and k.read_bytes() == data for k in kept) or rel not in reported:
                lost_files.append(rel)
                lost_bytes += len(data)
        return {"transcripts": len(sessions), "files": len(before), "changed": changed, "reported": sorted(reported),
                "lost_files": lost_files, "lost_bytes": lost_bytes}


def run_suite(root: Path, *, engine: str = "offline", settings=None, with_no_loss: bool = True,
              sets: Sequence[str] = ("claude-code-log", "sessions2"), only: Sequence[str] | None = None,
              loop=None) -> dict:
    from memdir.config import Settings

    settings = settings or Settings.from_env().with_overrides(engine=engine)
    suite = load_suite()
    specs = {**suite.sessions, **(sessions2_specs(root) if "sessions2" in sets else {})}
    sessions = choose_sessions(root, sets, only)
    known = {session_key(root, t) for t in choose_sessions(root, ("claude-code-log", "sessions2"), None)}
    unknown = sorted(set(suite.sessions) - known) + sorted(set(suite.held_out) - known)
    if unknown:
        raise ValueError(f"{CASES}: sessions not in {root}: {', '.join(unknown)}")
    parts: dict[str, dict] = {"tuning": _empty(), "held_out": _empty()}
    for transcript in sessions:
        key = session_key(root, transcript)
        spec = specs.get(key, SessionSpec())
        with tempfile.TemporaryDirectory(prefix="memdir-realdata-") as tmp:
            memory_dir = Path(tmp) / "memory"
            result = _extract(transcript, memory_dir, engine, settings, loop, key)
            graded = grade_session(spec, saved_memories(memory_dir))
        graded.update(session=key, prompts_seen=result.prompts_seen, nothing_session=not spec.expect and not spec.acceptable,
                      status=result.status, reason=result.reason, model_calls=result.turns)
        _fold(parts["held_out" if key in suite.held_out else "tuning"], graded)
    report = {"engine": engine, "root": str(root), **{name: _figures(p) for name, p in parts.items()}}
    if with_no_loss and only is None:  # every transcript, subagents included, into one copy of the real folder
        everything = sorted((root / "claude-code-log").rglob("*.jsonl"))
        report["no_loss"] = no_loss_check(root, everything, engine, settings, loop)
    return report


def _empty() -> dict:
    return {"sessions": [], "per_session": [], "expected": 0, "found": 0, "saved": 0, "unmatched": [], "forbidden": [],
            "nothing_sessions": 0, "nothing_saved": 0, "missed": [], "found_any_type": 0, "saved_right_any_type": 0}


def _fold(part: dict, graded: dict) -> None:
    part["sessions"].append(graded["session"])
    part["per_session"].append({k: graded[k] for k in ("session", "status", "reason", "model_calls", "expected", "found",
                                                       "saved", "missed", "memories") if k in graded}
                               | {"updated": graded.get("updated", 0)})
    for key in ("expected", "found", "saved", "found_any_type", "saved_right_any_type"):
        part[key] += graded[key]
    part["unmatched"] += [{**m, "session": graded["session"]} for m in graded["unmatched"]]
    part["forbidden"] += [{**m, "session": graded["session"]} for m in graded["forbidden"]]
    part["missed"] += [f"{graded['session']}: {what}" for what in graded["missed"]]
    if graded["nothing_session"]:
        part["nothing_sessions"] += 1
        part["nothing_saved"] += graded["saved"]


def _figures(part: dict) -> dict:
    judged = part["saved"]
    part["recall"] = part["found"] / part["expected"] if part["expected"] else None
    part["precision"] = (judged - len(part["unmatched"])) / judged if judged else None
    return part


def _pct(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def render(report: dict) -> str:
    lines = [f"# memdir eval: realdata suite, engine: {report['engine']}", f"data: {report['root']}", ""]
    for name, title in (("tuning", "Tuning sessions"), ("held_out", "Held-out sessions (never tuned on)")):
        p = report[name]
        lines += [
            f"## {title}: {len(p['sessions'])} sessions",
            f"recall {_pct(p['recall'])} ({p['found']} of {p['expected']} expected memories)",
            f"precision {_pct(p['precision'])} ({p['saved'] - len(p['unmatched'])} of {p['saved']} saved memories match an annotated item)",
            f"type ignored: {p['found_any_type']} of {p['expected']} found, {p['saved_right_any_type']} of {p['saved']} "
            "saved memories match an item's content",
            f"nothing-to-save sessions: {p['nothing_saved']} memories saved over {p['nothing_sessions']} sessions",
            f"forbidden memories (rewound branch, command output): {len(p['forbidden'])}",
        ]
        for one in p["per_session"]:
            why = f" ({one['reason']})" if one["reason"] else ""
            updates = f" ({one['updated']} of them existing files updated)" if one.get("updated") else ""
            lines.append(f"  {one['session']}: {one['status']}, {one['model_calls']} model calls, {one['saved']} saved"
                         f"{updates}, {one['found']} of {one['expected']} found{why}")
        for what in p["missed"]:
            lines.append(f"  missed: {what}")
        for m in p["unmatched"]:
            lines.append(f"  unmatched [{m['type']}] {m['session']} {m['file']}: {' '.join(m['body'].split())[:300]}")
        lines.append("")
    if "no_loss" in report:
        n = report["no_loss"]
        lines += [
            f"## No-loss check: {n['transcripts']} transcripts extracted into a copy of {NO_LOSS_FOLDER} "
            f"({n['files']} files), then its index rebuilt",
            f"lost bytes: {n['lost_bytes']} ({len(n['lost_files'])} files changed without a kept, reported copy)",
            f"changed files: {len(n['changed'])}, all reported with the previous version kept: "
            f"{'yes' if not n['lost_files'] else 'NO: ' + ', '.join(n['lost_files'])}",
        ]
    return "\n".join(lines) + "\n"
