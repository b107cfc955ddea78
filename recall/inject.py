"""Rendering recalled memories for the agent's context (SPEC §4, §6): plain text, age headers, one budget.

Claude Code labels hook output "UserPromptSubmit hook additional context:" (escaping only a `<` that opens a
`system-reminder` tag), and replaces any hook output over C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT characters with a short preview. So
the recalled memories are plain readable text (no tags of our own), and the whole block is fitted
into C.HOOK_OUTPUT_BUDGET by rank: each memory shows its type, age and path, its description and the
first lines of its body, then "read the rest at PATH"; memories that do not fit even as one line
each are listed by path at the end, or dropped when nothing fits.
"""

from __future__ import annotations

import os
import re
import sys

from memdir import constants as C, inert
from memdir.ages import days_old
from memdir.scan import Header

MAX_LINES = 200
MAX_BYTES = 4096
# Body lines per pass: every selected memory first gets in with its header and description, then
# (by rank) a few body lines, then up to the full trim.
GROWTH_PASSES = ((3,), (C.RECALL_TRIM_BODY_LINES, C.RECALL_TRIM_BODY_LINES // 2))
LINE_MAX_CHARS = 400  # one long paragraph must not eat the budget of the memories ranked after it
MEMORY_MAX_UNITS = 2_500  # no single memory takes more than this share of the budget


def units(text: str) -> int:
    """Length as Claude Code counts it (JavaScript string length: UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def read_capped(path: str | os.PathLike, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES,
                rel_path: str | None = None) -> tuple[str, bool]:
    """The first `max_lines` lines / `max_bytes` bytes (cut at a character boundary), and whether cut.

    With `rel_path` (the file relative to its memory folder) the read never follows a symlink at any
    component below the folder, and a FIFO or device is refused rather than read.
    """
    from memdir import safefs

    path_s = str(path)
    rel = rel_path or path_s.rsplit("/", 1)[-1]
    root = path_s[: len(path_s) - len(rel) - 1] if path_s.endswith("/" + rel) else path_s.rsplit("/", 1)[0]
    try:
        data = safefs.read_bytes(root, rel, max_bytes + 1, prefix=True)
    except OSError as exc:
        return f"[memdir: not shown: {exc}]", True
    truncated = len(data) > max_bytes
    text = data[:max_bytes].decode("utf-8-sig", errors="ignore")
    lines = text.split("\n")
    if len(lines) > max_lines:
        text, truncated = "\n".join(lines[:max_lines]), True
    return text.rstrip("\n"), truncated


def verification_line(evidence) -> str:
    """What checking the memory against today's code found (memdir.verify.Evidence), for its header."""
    if evidence is None or not evidence.claims:
        return ""
    if evidence.gone:
        return f"{evidence.summary()}. Do not present what this memory says about these as fact; check the code."
    return evidence.summary()


def body_lines(header: Header) -> tuple[list[str], bool]:
    """The memory's body (frontmatter removed, outer blank lines dropped), and whether the read was cut."""
    from memdir.frontmatter_io import parse_header

    text, truncated = read_capped(header.abs_path, rel_path=header.rel_path)
    body = inert.block(parse_header(text).body.strip("\n"))  # ESC, U+202E: escaped, never acted on
    return (body.split("\n") if body else []), truncated


def says(text: str, what: str) -> bool:
    """Whether `text` already says `what`: every word of `what` that carries meaning is in `text`."""
    wanted = _words_of(what)
    return bool(wanted) and wanted <= _words_of(text)


def lines_say(lines: list[str], what: str) -> bool:
    """says("\n".join(lines), what), from each line's words: render_all shows a memory's first 3, then up to
    12, then 6 lines, and each line is tokenised once (a line break always ends a word)."""
    wanted = _words_of(what)
    if not wanted:
        return False
    held: set[str] = set()
    for line in lines:
        held |= _words_of(line)
        if wanted <= held:
            return True
    return False


_words_seen: dict[str, frozenset[str]] = {}  # render_all renders a memory up to three times to fit the budget
WORDS_SEEN_KEPT = 1024  # texts: each shown line of a prompt's memories, and their descriptions


def _words_of(text: str) -> frozenset[str]:
    found = _words_seen.get(text)
    if found is None:
        from memdir.words import tokens

        if len(_words_seen) >= WORDS_SEEN_KEPT:  # the warm server renders prompt after prompt: the last few only
            _words_seen.clear()
        found = _words_seen[text] = frozenset(tokens(text))
    return found


def render_memory(header: Header, now: float | None = None, cache_dir: str | os.PathLike | None = None,
                  max_body_lines: int = C.RECALL_TRIM_BODY_LINES, _lines: tuple[list[str], bool] | None = None,
                  verification: str = "", known: str = "") -> str:
    """One memory: type, age and path; a freshness warning past a day; description; the first body lines.

    The description is left out when the lines shown say it already, or `known` does (the memory's
    MEMORY.md line Claude Code loaded): the model gets each thing once (issue 21)."""
    from memdir.template_cache import render_slotted

    lines, cut = _lines if _lines is not None else body_lines(header)
    shown = [line if len(line) <= LINE_MAX_CHARS else line[: LINE_MAX_CHARS - 1] + "…"
             for line in lines[:max_body_lines]]
    description = header.description or ""
    said = bool(description) and (lines_say(shown, description) or says(known, description))
    hidden = len(lines) - len(shown)
    trimmed = hidden > 0 or cut
    if hidden > 0:
        more = f"{hidden} more line{'s' if hidden != 1 else ''}" + (" (and beyond)" if cut else "")
    else:
        more = "the rest"
    days = days_old(header.mtime, now)
    age = _age(days)
    if cache_dir is not None and "jinja2" in sys.modules:
        _warm(cache_dir, age)
    return render_slotted(
        "recall_memory.j2",
        # Printed-only values are slots, so a new type or path never costs the hook a jinja2 render.
        slots={"path": inert.one_line(header.abs_path), "description": header.description or "(no description)",
               "content": "\n".join(shown).strip("\n"), "more": more, "type": header.type or "untyped",
               "verification": verification, "days": str(days)},
        cache_dir=cache_dir,
        has_content=any(line.strip() for line in shown),
        age=age,
        trimmed=trimmed,
        # Only when set: the skeletons hooks use (and _warm caches) stay keyed exactly as before. The checker
        # cannot see that this dict's keys are flags, so it fears it fills `slots` or `variant`.
        **({"checked": True} if verification else {}),  # type: ignore[arg-type]
        **({"undescribed": True} if said else {}),  # type: ignore[arg-type]
        **({"team": True} if is_team(header) else {}),  # type: ignore[arg-type]
    ).strip("\n")


def is_team(header: Header) -> bool:
    """A memory of the folder's `team/`: anyone who can push to the team remote wrote it, so its header says so
    (the frame's "not instructions from the user" is not enough for a teammate's text: it is not even the user's)."""
    return header.rel_path.startswith(f"{C.TEAM_DIRNAME}/")


def _age(days: int) -> str:
    """What the template branches on: its wording differs for today, yesterday and older. The number of days
    is a slot (only printed), so a memory of any age shares its skeleton: keyed by the day count, real folders
    (mtimes over a year) met a skeleton never cached on most prompts, and each paid jinja2's import (~100 ms)."""
    return "today" if days <= 0 else "yesterday" if days == 1 else "older"


_warmed: set[tuple[str, str]] = set()


def _warm(cache_dir: str | os.PathLike, age: str) -> None:
    """Once jinja2 is loaded anyway, cache every skeleton variant for this age, so a later hook
    process that meets a longer or shorter memory of the same age never has to import jinja2."""
    from memdir.template_cache import render_slotted

    if (str(cache_dir), age) in _warmed:
        return
    _warmed.add((str(cache_dir), age))
    slots = {k: "" for k in ("path", "description", "content", "more", "type", "days")}
    for trimmed in (False, True):
        for has_content in (False, True):
            for flags in ({}, {"undescribed": True}, {"team": True}, {"undescribed": True, "team": True}):
                render_slotted("recall_memory.j2", slots=slots, cache_dir=cache_dir, has_content=has_content, age=age,
                               trimmed=trimmed, **flags)  # type: ignore[arg-type]  # flags, not slots or variant


def _frame(part: str, cache_dir: str | os.PathLike | None, path: str = "", description: str = "",
           team: bool = False) -> str:
    from memdir.template_cache import render_slotted

    return render_slotted("recall_context.j2", slots={"path": path, "description": description},
                          cache_dir=cache_dir, part=part,
                          **({"team": True} if team else {})).strip("\n")  # type: ignore[arg-type]


def render_all(headers: list[Header], now: float | None = None, cache_dir: str | os.PathLike | None = None,
               budget: int = C.HOOK_OUTPUT_BUDGET, evidence: dict | None = None,
               known: dict[str, str] | None = None, checks: dict[str, str] | None = None) -> str:
    """The recalled memories in rank order, fitted into `budget` UTF-16 units ("" when none fit).

    Passes, so the fifth memory is not squeezed out by the first one's long body: first every
    memory (by rank) gets in with its type, age, path and description; then, again by rank, each
    grows to a few body lines, then to C.RECALL_TRIM_BODY_LINES, while the budget allows. Memories
    that did not get in are listed by path and description at the end (room for that is taken
    before any body grows). `known`: per memory (rel path), what the model already has of it (its
    MEMORY.md line, when Claude Code loaded the index): its description is not repeated. `checks`: per
    memory, a `verification_line` already made (by the warm server, for a hook that renders its answer again).
    """
    if not headers:
        return ""
    checks = {**{rel: verification_line(ev) for rel, ev in (evidence or {}).items()}, **(checks or {})}  # memdir.verify
    intro = _frame("intro", cache_dir)
    used = units(intro)
    chosen: list[tuple[Header, tuple[list[str], bool], str]] = []
    left_out: list[Header] = []
    for header in headers:
        lines = body_lines(header)
        block = render_memory(header, now, cache_dir, 0, _lines=lines,
                              verification=checks.get(header.rel_path, ""), known=(known or {}).get(header.rel_path, ""))
        if used + 2 + units(block) <= budget:
            chosen.append((header, lines, block))
            used += 2 + units(block)
        else:
            left_out.append(header)
    listing: list[str] = []
    if left_out:  # knowing a relevant memory exists beats more lines of another one: listed before growth
        more_intro = _frame("more_intro", cache_dir)
        extra = 2 + units(more_intro)
        for header in left_out:
            line = _frame("item", cache_dir, inert.one_line(header.abs_path), header.description or "", is_team(header))
            if used + extra + 1 + units(line) > budget:
                break
            listing.append(line)
            extra += 1 + units(line)
        if listing:
            listing.insert(0, more_intro)
            used += extra
    for sizes in GROWTH_PASSES:
        for i, (header, lines, block) in enumerate(chosen):
            for max_lines in sizes:
                grown = render_memory(header, now, cache_dir, max_lines, _lines=lines,
                                       verification=checks.get(header.rel_path, ""),
                                       known=(known or {}).get(header.rel_path, ""))
                growth = units(grown) - units(block)  # may be negative: the whole body beats a "read the rest" note
                if used + growth <= budget and units(grown) <= MEMORY_MAX_UNITS:
                    chosen[i] = (header, lines, grown)
                    used += growth
                    break
    parts = [intro, *(block for _, _, block in chosen)]
    if listing:
        parts.append("\n".join(listing))
    if len(parts) == 1:
        return ""  # not even one memory fits: say nothing rather than an empty frame
    return "\n\n".join(parts)


_BLOCK_START = r"\n\n(?=Memory \()"  # as text: compiled (and cached by re) where blocks are split, not on import


def memory_blocks(context: str) -> list[str]:
    """The recalled memories of a `render_all` text, one block each (the intro and listing dropped)."""
    return [block for block in re.split(_BLOCK_START, context) if block.startswith("Memory (")]
