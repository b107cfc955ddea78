"""`recall()`: a prompt in, the memories worth injecting out. The CLI, the hook and evals call this."""

from __future__ import annotations

import os
import time

from memdir import constants as C
from memdir.config import Settings, recall_engine
from memdir.prompt_scope import recall_text
from memdir.record import Record, field
from memdir.scan import Header, ScanResult, scan
from memdir.stages.recall import state
from memdir.stages.recall.inject import render_all
from memdir.stages.recall.manifest import candidates
from memdir.stages.recall.offline import common_words, select_offline

TYPE_CHECKING = False  # typing costs ~3 ms on the prompt hook's path
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from memdir.header_cache import HeaderCache
    from memdir.verdicts import Verdicts
    from memdir.verify import Evidence


class RecallResult(Record):
    """context: what gets injected ("" when nothing was selected); engine: whose answer was used."""

    selected: list[Header]
    context: str
    engine: str
    debug: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    unreadable: int = 0
    candidates: int = 0
    cost_usd: float = 0.0
    evidence: dict[str, Evidence] = field(default_factory=dict)  # by rel_path
    # The prompt's words (stems) common to the memories recall chose among (the offline selector's only): a recent
    # decision sharing only these with the prompt would not pass as a memory either (recall.decision_filter).
    common: set[str] = field(default_factory=set)

    def as_dict(self) -> dict:
        return {
            "selected": [
                {"file": h.rel_path, "path": str(h.path), "type": h.type, "description": h.description,
                 "verification": self.evidence[h.rel_path].as_dict() if h.rel_path in self.evidence else None}
                for h in self.selected
            ],
            "engine": self.engine,
            "candidates": self.candidates,
            "unreadable": self.unreadable,
            "usage": self.usage,
            "debug": self.debug,
            "context": self.context,
        }


VERIFY_BUDGET_S = 0.15  # the prompt path's share for checking names against the code


def verify_selected(project_root: str, memory_dir: str | os.PathLike, selected: list[Header], budget_s: float = VERIFY_BUDGET_S,
                    verdicts: Verdicts | None = None) -> dict:
    """Per selected memory, what it names checked against the project (memdir.verify.Evidence);
    `verdicts`: names already checked (the warm server's, memdir.verdicts)."""
    from memdir.verdicts import memory_texts
    from memdir.verify import check_many, holds_no_code, memory_folder_in

    if holds_no_code(memory_dir, project_root):
        return {}  # the memories themselves are all there is: nothing to check them against
    texts = memory_texts(memory_dir, [h.rel_path for h in selected])
    return check_many(project_root, texts, budget_s=budget_s, verdicts=verdicts,
                      skip=memory_folder_in(memory_dir, project_root))


def recall(
    memory_dir: str | os.PathLike,
    query: str,
    *,
    settings: Settings | None = None,
    engine: str | None = None,
    tools: list[str] | Callable[[], list[str]] | None = None,
    session_id: str | None = None,
    now: float | None = None,
    client=None,
    record: bool = True,
    dense=None,
    project_root: str | None = None,
    verify_budget_s: float = VERIFY_BUDGET_S,
    verdicts: Verdicts | None = None,
    env: Mapping[str, str] | None = None,
    index_loaded: bool = False,
    log_usage: bool | None = None,
    disk_cache: bool = False,
    scanner: Callable[[str | os.PathLike], ScanResult] | None = None,
) -> RecallResult:
    """`dense`: a loaded `memdir.embeddings.DenseModel` (the warm server's), whose cached vectors are fused
    with the lexical ranking; None means lexical only. `project_root`: when given, what each selected
    memory names is checked against that project (memdir.verify) and the result shown with it.
    `env`: the environment deciding the engine and endpoint (the warm server passes each session's own);
    None means this process's. `index_loaded`: the model already has this folder's MEMORY.md (Claude Code
    loaded it), so a memory's description is not repeated where its index line says it. `record`: note
    what was surfaced in the session's state; `log_usage`: log a model's usage and cost (default: `record`).
    `disk_cache`: headers and the older memories' words from `.memdir/cache` (memdir.header_cache,
    recall.older_words): for a process that recalls once (the prompt hook), not for the warm server.
    `scanner`: how the folder is scanned (the warm server's watched view, recall.server_watch; default `scan`).
    `verdicts`: names already checked against the project (the warm server's, memdir.verdicts)."""
    query = recall_text(query)
    if now is not None:
        _check_now(now)
    settings = settings or Settings.from_env(env)
    chosen_engine = recall_engine(engine or settings.engine, env)  # auto: never claude-code (a CLI start per prompt)
    tools = tools or []  # a callable: read only if a choice needs them (the offline engine, rarely)
    seen = state.load(memory_dir, session_id)
    if seen.bytes >= settings.recall_session_bytes:
        return RecallResult([], "", chosen_engine, [f"session already surfaced {seen.bytes} bytes; cap reached"])
    result, pool, headers_cache = _candidates(memory_dir, query, seen.paths, chosen_engine, disk_cache, scanner)
    if not pool:
        return result
    selected: list[Header] | None = None
    if chosen_engine in ("llm", "claude-code"):
        tools = tools() if callable(tools) else tools  # read once: the offline choice below reuses them
        selected = _select_by_model(chosen_engine, result, query, pool, tools, settings, client, env, memory_dir, now)
    if result.usage and (record if log_usage is None else log_usage):
        _log_model_use(memory_dir, result, settings, session_id)
    if selected is None:
        similarities = _dense_similarities(result, dense, memory_dir, query, pool) if dense is not None else None
        selected = select_offline(query, pool, settings.recall_max, tools, similarities, now, token_cache=memory_dir,
                                  common=result.common)
    if headers_cache is not None:
        selected = headers_cache.refreshed(selected)  # what is rendered comes from the files, never the cache
        headers_cache.close()
    result.selected = selected
    if selected:
        _render(result, memory_dir, now, project_root, verify_budget_s, verdicts, index_loaded)
        if record:
            state.record(memory_dir, session_id, [h.rel_path for h in selected], len(result.context.encode()))
    return result


def _check_now(now: float) -> None:
    """`now` must be a moment with a date: the request's "Today is" and the offline engine's named days are that date.
    NaN, an infinity or a moment past year 9999 made the llm selector fail into the offline one, which then raised."""
    from datetime import date

    from memdir.errors import MemdirError

    try:
        date.fromtimestamp(now)
    except (ValueError, OverflowError, OSError, TypeError):
        raise MemdirError(f"recall: now={now!r} is not a moment with a date; give seconds since 1970 "
                          "within years 1-9999 (or None for the clock's)") from None


def _candidates(memory_dir: str | os.PathLike, query: str, seen: list[str], engine: str, disk_cache: bool,
                scanner: Callable[[str | os.PathLike], ScanResult] | None) -> tuple[RecallResult, list[Header],
                                                                                   HeaderCache | None]:
    """The memories worth ranking for `query` (those the session has not `seen`), and the result they start; with
    `disk_cache`, the headers and the older memories' words come from `.memdir/cache` (memdir.header_cache,
    recall.older_words), and the header cache comes back too, for the caller to refresh the selected and close."""
    headers_cache = words = None
    if disk_cache:
        from memdir.header_cache import HeaderCache
        from memdir.stages.recall.older_words import WordIndex

        headers_cache = HeaderCache(memory_dir)
        scanned = headers_cache.scan()
        words = WordIndex(headers_cache)
    else:
        scanned = (scanner or scan)(memory_dir)
    pool = candidates(scanned.headers, query, set(seen), words)
    if not pool and headers_cache is not None:  # nothing to refresh: the caller returns at once
        headers_cache.close()
        headers_cache = None
    result = RecallResult([], "", engine, unreadable=len(scanned.unreadable), candidates=len(pool))
    if scanned.unreadable:
        result.debug.append(f"skipped {len(scanned.unreadable)} unreadable file(s); run `memdir doctor`")
    return result, pool, headers_cache


def _select_by_model(engine: str, result: RecallResult, query: str, pool: list[Header], tools: list[str],
                     settings: Settings, client, env: Mapping[str, str] | None,
                     memory_dir: str | os.PathLike, now: float | None = None) -> list[Header] | None:
    """`engine`'s selection (llm or claude-code), or None to use the offline one. When the model chose, the prompt's
    words common to the folder are still found: the decisions' common-word bar needs them."""
    if engine == "llm":
        selected = _select_llm(result, query, pool, tools, settings, client, env, memory_dir, now)
    else:
        selected = _select_claude_code(result, query, pool, tools, settings, client)
    if selected is not None:
        result.common = common_words(query, pool, memory_dir)
    return selected


def _dense_similarities(result: RecallResult, dense, memory_dir: str | os.PathLike, query: str,
                        pool: list[Header]) -> Callable[[], list[float | None] | None]:
    """The dense model's similarities of `pool` to `query`, asked after the lexical ranking (select_offline); a
    failure leaves recall lexical, with a debug line saying why."""
    def similarities() -> list[float | None] | None:
        try:
            return dense.similarities(memory_dir, query, pool)
        except Exception as exc:  # noqa: BLE001 - a failing optional model leaves recall lexical
            result.debug.append(f"dense stage failed ({type(exc).__name__}: {exc}); lexical only")
            return None

    return similarities


def _render(result: RecallResult, memory_dir: str | os.PathLike, now: float | None, project_root: str | None,
            verify_budget_s: float, verdicts: Verdicts | None, index_loaded: bool) -> None:
    """result.context from the selected memories: with what each names checked against `project_root` when given,
    and without the descriptions the loaded MEMORY.md already says when `index_loaded`."""
    if project_root:
        result.evidence = verify_selected(project_root, memory_dir, result.selected, verify_budget_s, verdicts)
    result.context = render_all(result.selected, now, cache_dir=os.path.join(memory_dir, C.STATE_DIRNAME, "cache"),
                                evidence=result.evidence,
                                known=loaded_index_lines(memory_dir) if index_loaded else None)


def loaded_index_lines(memory_dir: str | os.PathLike) -> dict[str, str]:
    """Per memory file, its MEMORY.md line as far as Claude Code loads the index (its line and size cap)."""
    from memdir import index, safefs

    try:
        text = safefs.read_text(memory_dir, C.INDEX_NAME, 4 * C.INDEX_MAX_CHARS, prefix=True, errors="replace")
    except OSError:
        return {}
    lines: dict[str, str] = {}
    for line in index.cap(text).text.splitlines():
        linked = index.entry_file(line)
        if linked:
            lines.setdefault(linked, line)
    return lines


def _select_llm(result: RecallResult, query: str, pool: list[Header], tools: list[str], settings: Settings, client,
                env: Mapping[str, str] | None = None, memory_dir: str | os.PathLike | None = None,
                now: float | None = None):
    """The API selector's answer, or None (and a debug line saying why) to use the offline answer. `now`: the
    moment the user asks (recall's own `now`), whose date the request gives the model."""
    from memdir import llm

    down = llm.unreachable(env)
    if down is not None:  # fail fast: no import, no connect timeout on every prompt
        result.engine = "offline"
        result.debug.append(f"endpoint {down['endpoint']} unreachable recently ({down['error']}); "
                            f"used the offline selector until {time.strftime('%H:%M:%S', time.localtime(down['until']))}")
        return None
    from datetime import date

    from memdir.stages.recall.llm_select import select_llm

    started = time.monotonic()
    try:
        today = date.fromtimestamp(now) if now is not None else None
        answer = select_llm(query, pool, tools, settings, client=client, token_cache=memory_dir, today=today)
    except Exception as exc:  # any failure: the offline answer is still a good answer
        if llm.is_connection_failure(exc):
            llm.mark_unreachable(llm.describe_error(exc), env=env)
        result.engine = "offline"
        result.debug.append(
            f"llm selector gave no usable answer after {time.monotonic() - started:.2f}s ({llm.describe_error(exc)}); "
            "used the offline selector"
        )
        return None
    result.usage = answer.usage
    result.cost_usd = answer.cost_usd
    if answer.unknown:
        result.debug.append(f"dropped unknown file names from the model: {', '.join(answer.unknown)}")
    return answer.selected


def _log_model_use(memory_dir: str | os.PathLike, result: RecallResult, settings: Settings, session_id: str | None) -> None:
    """Every model call's usage and estimated cost goes to runs.jsonl (`memdir doctor` sums it)."""
    from memdir import runlog

    try:
        runlog.append_run(memory_dir, {"kind": "recall", "session": session_id, "engine": result.engine,
                                       "model": settings.recall_model if result.engine == "llm" else None,
                                       "usage": {k: v for k, v in result.usage.items() if isinstance(v, (int, float))},
                                       "cost_usd": round(result.cost_usd, 6)})
    except OSError:
        pass  # accounting must never cost the user their recall


def _select_claude_code(result: RecallResult, query: str, pool: list[Header], tools: list[str], settings: Settings,
                        transport=None):
    """The selection through the user's own `claude` login, or None to use the offline answer."""
    from memdir.stages.recall.claude_code_select import select_claude_code

    started = time.monotonic()
    try:
        answer = select_claude_code(query, pool, tools, settings, transport=transport)
    except Exception as exc:  # noqa: BLE001 - same contract as the API selector
        result.engine = "offline"
        result.debug.append(f"claude-code selector gave no usable answer after {time.monotonic() - started:.2f}s "
                            f"({type(exc).__name__}: {str(exc)[:200]}); used the offline selector")
        return None
    result.usage, result.cost_usd = answer.usage, answer.cost_usd
    if answer.unknown:
        result.debug.append(f"dropped unknown file names from the model: {', '.join(answer.unknown)}")
    return answer.selected
