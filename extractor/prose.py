"""The user's own prose in a message, cut into sentences the way a reader would.

People paste documentation, logs, diffs and stack traces into prompts; those are not their words,
so only the prose they wrote before the pasted part is read. A line break inside one thought (a
terminal's `\\` continuation, or wrapping) does not end a sentence; a blank line, a list item or
sentence punctuation does.
"""

from __future__ import annotations

import re

PROSE_MAX_CHARS = 1200  # beyond this much leading prose, the rest of a message is material, not talk
_CONTINUATION = re.compile(r"\\\r?\n")  # a terminal line continuation: the same thought goes on
_PARAGRAPHS = re.compile(r"\n\s*\n")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_ENDS_SENTENCE = re.compile(r"[.!?;:)]\s*$")
# Chinese and Japanese end a sentence with 。！？ and no space after it: "どんなメッセージにする？コミットはしないで" is two.
_SENTENCE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<=[.!?])\s+|(?<=[。！？])\s*")
_LEAD_IN = re.compile(r"^(?:(?:also|and|plus|oh|btw|by the way|ok|okay|so|one more thing|hey claude|wait)[,:]?\s+)+", re.I)


# What a terminal or a dev server prints: status glyphs, "WARNING:"/"npm ERR!" prefixes, " * Running on ...", a shell
# prompt ("(.venv) me@host:~/x$ ..."). A person writes none of these lines.
_LOG_LINE = re.compile(r"^\s*(?:[⚠✓✔✗✘×●▲▶›»]|\* \S|(?:npm |yarn |pnpm )?(?:ERR!|WARN\b)|\(\.?venv\)|[\w.-]+@[\w.-]+:\S*[$#]"
                       r"|(?:error|warning|warn|info|debug|fatal|unhandled rejection|traceback)\b\s*[:\[(])", re.I)


# (a line opened by ";" is a comment of dig, an .ini file, Lisp or assembly: ";; QUESTION SECTION:", relay14)
_CODE_LIKE = re.compile(r"^\s{2,}\S|^\s*[{}\[\]<>$#|`;]|^\s*\w+\(|^\s*(?:at |File \"|GET |POST |\d{2}:\d{2})")


_HEADING = re.compile(r"^#{1,6}[ \t]+[^\W\d_][^\n]{0,80}$")


def _looks_pasted(paragraph: str) -> bool:
    """Code, logs, JSON, tables, stack traces: lines a person pasted rather than wrote."""
    lines = [line for line in paragraph.splitlines() if line.strip()]
    if not lines:
        return False
    # a Markdown heading of the user's own ("## Model" over their rule) is no code line (hostile20)
    symbolic = sum(1 for line in lines if (_CODE_LIKE.match(line) or _LOG_LINE.match(line)) and not _HEADING.match(line))
    if symbolic * 2 >= len(lines):
        return True
    letters = sum(c.isalpha() or c.isspace() for c in paragraph)
    return letters < 0.75 * len(paragraph)


# What the extraction request marks as pasted: a run of paragraphs a person pastes rather than types (code, a log, a
# stack trace, command output, JSON, a table), wherever it sits in a message: before the user's own line as after it.
# Stricter than _looks_pasted, which only has to stop reading: a heading, a list item, a rule line or a short line
# ("`npm test` fails") is the user's own prose, however many symbols it holds.
PASTE_MIN_LINES = 3
# A bare link is the user's pointer, not material; a line of its own is the user's too when it ends handing over
# ("`make test` prints this:"). A line whose leading "name:" another line repeats is a program's ("debconf: ...").
_OWN_LINE = re.compile(r"^(?:#{1,6}\s|\s*(?:[-*•]\s|\d{1,2}[.)]\s|[-*_=]{3,}\s*$|https?://\S+\s*$))")
_HANDS_OVER = re.compile(r"[:?]\s*$")
_PREFIX = re.compile(r"^\s*([\w.-]+):\s")


def _material(paragraph: str) -> bool:
    lines = [line for line in paragraph.splitlines() if line.strip() and not _OWN_LINE.match(line)]
    if not lines or (len(lines) == 1 and _HANDS_OVER.search(lines[0])):
        return False
    prefixes = [m.group(1) for m in map(_PREFIX.match, lines) if m]
    symbolic = sum(1 for line in lines if _CODE_LIKE.match(line) or _LOG_LINE.match(line)
                   or ((m := _PREFIX.match(line)) and prefixes.count(m.group(1)) > 1))
    if symbolic * 2 >= len(lines):
        return True
    letters = sum(c.isalpha() or c.isspace() for c in "\n".join(lines))
    return len(lines) >= PASTE_MIN_LINES and letters < 0.75 * len("\n".join(lines))


# Claude Code's prompt box wraps a long line for the terminal: copied back, each wrapped line is padded with spaces to
# the width and the next one indented by two. That is one line the user typed, not an indented block.
_SOFT_WRAP = re.compile(r"(?<=\S) {3,}\n(?=  \S)")
# A line of the user's own around a fenced paste in one paragraph ("running `cdang` gives this error:" / the fenced
# paste / "why?"): words, not code (no `=`, `;` or braces) nor a program's "SomeError:" line, in a script of letters.
_CODE_MARKS = re.compile(r"[=;{}]|^\s*```|^\s*[\w.]*(?:Error|Exception|Warning)\b")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _own_line(line: str) -> bool:
    if not line.strip() or _CODE_LIKE.match(line) or _LOG_LINE.match(line) or _CODE_MARKS.search(line):
        return False
    visible = [c for c in line if not c.isspace()]
    letters = sum(c.isalpha() for c in visible)
    words = len(re.findall(r"[^\W\d_]{2,}", line))
    return letters >= 0.6 * len(visible) and (words >= 3 or bool(_CJK.search(line)))


def _paste_within(paragraph: str) -> tuple[int, int]:
    """(start, end) of the paste inside a pasted-looking paragraph. Where it is fenced (```), the user's own lines
    before the opening fence and after the closing one are theirs, not the paste's (a question after a fenced log);
    without fences a log's first line can read as prose ("Processing triggers for man-db ..."), so all of it stays."""
    lines = paragraph.splitlines(keepends=True)
    fences = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
    first, last = 0, len(lines)
    if len(fences) >= 2:
        while first < fences[0] and _own_line(lines[first]):
            first += 1
        while last > fences[-1] + 1 and _own_line(lines[last - 1]):
            last -= 1
    start = sum(len(line) for line in lines[:first])
    return start, start + len("".join(lines[first:last]).rstrip())


# A conversation exported from another agent or chat ("## Assistant (Plan · Some Model · 14.2s)", "**User:**",
# "_Thinking:_"), pasted into a prompt: every turn of it reads as prose, so no paragraph of it looks pasted, and the
# other agent's "The user wants me to ..." reached the model as the user's words (relay13). An agent's role on a line
# of its own starts a transcript running to the end of the message, when the user's side answers it, a thinking
# marker follows, or it names the model as an export does ("(Plan · DeepSeek ...)"). A heading of the user's own
# ("## Model", "## User", "# AI") is none of these (hostile20).
_ROLE_LINE = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?(?:(?P<agent>assistant|claude(?: code)?|chatgpt|gpt-?[\w.]*|"
                        r"gemini|copilot|cursor|opencode)|(?P<person>user|human))(?:\*\*|__)?[ \t]*"
                        r"(?P<named>\([^)\n]{0,80}\))?[ \t]*:?(?:\*\*|__)?[ \t]*$", re.I | re.M)
_THINKING_LINE = re.compile(r"^[ \t]*(?:_thinking:?_:?|\*\*thinking:?\*\*:?|<thinking>)[ \t]*$", re.I | re.M)


def transcript_start(text: str) -> int | None:
    """Where a pasted conversation's first role line starts in `text`, or None."""
    roles = list(_ROLE_LINE.finditer(text))
    agents = [m for m in roles if m.group("agent")]
    if not agents:
        return None
    answered = any(m.group("person") for m in roles)
    if answered or any(m.group("named") for m in agents) or _THINKING_LINE.search(text):
        return roles[0].start()
    return None


def pasted_spans(text: str) -> list[tuple[int, int]]:
    """Where the pasted material of a message is: (start, end) of each run of pasted-looking paragraphs of at
    least PASTE_MIN_LINES lines (a terminal's `\\` continuation read as a line break, as own_prose does, and a line
    the prompt box wrapped read as one line), without the user's own lines at a paragraph's edges."""
    plain = _CONTINUATION.sub(lambda m: " " * (len(m.group()) - 1) + "\n", text)  # the same length as `text`
    plain = _SOFT_WRAP.sub(lambda m: " " * len(m.group()), plain)  # the same length again
    spans: list[tuple[int, int]] = []
    at = 0
    for gap in [*_PARAGRAPHS.finditer(plain), None]:
        end = gap.start() if gap else len(plain)
        paragraph = plain[at:end]
        if paragraph.strip() and _material(paragraph):
            inner_start, inner_end = _paste_within(paragraph)
            leading = paragraph[inner_start:inner_end]
            start = at + inner_start + len(leading) - len(leading.lstrip())
            start = max(at, plain.rfind("\n", 0, start) + 1)
            if spans and not plain[spans[-1][1]:start].strip():
                start = spans[-1][0]
                spans.pop()
            if at + inner_end > start:
                spans.append((start, at + inner_end))
        at = gap.end() if gap else len(plain)
    spans = [(a, b) for a, b in spans if len(text[a:b].strip().splitlines()) >= PASTE_MIN_LINES]
    if (exported := transcript_start(plain)) is not None:
        end = len(text.rstrip())
        start = min([exported, *(a for a, b in spans if b > exported)])
        spans = [(a, b) for a, b in spans if b <= exported] + [(start, end)]
    return spans


# A line that hands over material without a colon: "Here is the README", "Pasted from the wiki", "what the other agent
# wrote", "Can you summarize this?", a file's name as a heading ("# CLAUDE.md"). What follows is a page's, a file's
# or an agent's words (a README's "The main goal of this project is ..." or "We are running on ..." read as the
# user's own), as after a colon.
_INTRODUCES = re.compile(
    r"^(?:(?:ok|okay|so|also|and|please|hey)[, ]+)?(?:here(?:'s| is| are)\b|(?:pasted|copied|quoted|forwarded) from\b|"
    r"(?:this is |these are )?(?:what|the text|the message|the output) (?:the |my |our |an? )?[\w -]{0,30}? (?:says|said|wrote|"
    r"writes|replied|returned|printed)\b|(?:can you |could you |please )?(?:summari[sz]e|translate|proofread|explain|"
    r"analy[sz]e) (?:this|these|it|the following|the text|the (?:doc|page|readme|message|article)\w*)\b)[^.!\n]{0,60}"
    r"[?.]?\s*$"
    # "Does this doc page help?", "Is this article right?": a question about the text that follows it
    r"|^(?:(?:does|do|would|will|can|could|is|are)\s+)(?:this|these|the following)\s+(?:[\w-]+\s+)?(?:docs?|"
    r"documentation|page|article|post|text|snippet|section|excerpt|readme|answer|thread|comment|guide)s?\b[^.!\n]{0,40}"
    r"\?\s*$"
    r"|^#{1,6}\s+[\w./-]+\.(?:md|markdown|txt|rst)\s*$", re.I)  # "# CLAUDE.md": a file's text follows its name


def _introduced_at(paragraph: str) -> int | None:
    """Where the material a line of this paragraph hands over starts (the end of that line), or None."""
    at = 0
    for line in paragraph.splitlines(keepends=True):
        at += len(line)
        said = line.strip()
        # the line, or its last sentence: "We need a cleaner way to reinstall. Does this doc page help?"
        if _INTRODUCES.match(said) or _INTRODUCES.match(re.split(r"(?<=[.!?])\s+", said)[-1]):
            return at
    return None


def own_prose(text: str) -> str:
    """The leading paragraphs the person wrote, up to the first pasted block (or what follows a colon, or a line
    such as "Here is the README")."""
    text = _CONTINUATION.sub("\n", text)
    if (exported := transcript_start(text)) is not None:
        text = text[:exported]  # another agent's conversation, pasted: its turns are not the user's words
    kept: list[str] = []
    size = 0
    for paragraph in _PARAGRAPHS.split(text):
        if not paragraph.strip():
            continue
        if _looks_pasted(paragraph):
            break
        introduced = _introduced_at(paragraph)
        if size + len(paragraph) > PROSE_MAX_CHARS:
            # A message that opens with one long paragraph of the user's own words: its leading sentences are still
            # theirs (a 1,285-character request held a standing rule); later paragraphs past the limit are material,
            # and so is what a line of it hands over ("Here is the README" and the README's text right below).
            if not kept:
                kept.append(_leading_sentences(paragraph[:introduced], PROSE_MAX_CHARS))
            break
        kept.append(paragraph if introduced is None else paragraph[:introduced].rstrip() + "\n")
        size += len(paragraph)
        if introduced is not None or paragraph.rstrip().endswith(":"):
            break  # "This is the relevant CSS:" — what follows is quoted material
    return "\n\n".join(kept)


def _leading_sentences(paragraph: str, limit: int) -> str:
    """The whole sentences a paragraph opens with, within `limit` characters and before any "[Pasted text ...]"
    marker (Claude Code's stand-in for a paste); nothing if the first sentence alone is longer."""
    head = paragraph[:limit].split("[Pasted text", 1)[0]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)|[。！？]", head)]
    return paragraph[: ends[-1]] if ends else ""


def _join_soft_breaks(paragraph: str) -> list[str]:
    """Lines of one paragraph joined where a thought continues; list items stay apart."""
    units: list[str] = []
    for line in paragraph.splitlines():
        if not line.strip():
            continue
        if (units and not _LIST_ITEM.match(line) and not _ENDS_SENTENCE.search(units[-1])
                and not _HEADING.match(units[-1]) and not _HEADING.match(line)):  # a heading is a line of its own
            units[-1] = f"{units[-1].rstrip()} {line.strip()}"
        else:
            units.append(line.strip())
    return units


def sentences(text: str) -> list[str]:
    out = []
    for paragraph in _PARAGRAPHS.split(_CONTINUATION.sub("\n", text)):
        for unit in _join_soft_breaks(paragraph):
            for raw in _SENTENCE.split(unit):
                sentence = _LEAD_IN.sub("", raw.strip(" -*•\t"))
                if len(sentence) > 3:
                    out.append(sentence[:1].upper() + sentence[1:])
    return out


# "I don't think we can change the tc-table component, so we're stuck with <tr> - how does that affect the cdk option?":
# a statement with a question tacked on after a dash; the question does not make the statement one.
# A tail that asks whether the statement itself holds ("Always force-push to main - is that ok?", "... - what do you
# think?") leaves it a question, never a rule.
_ASKS_IF_SO = (r"(?!(?:is|would|does|could|will|can) (?:that|this|it) (?:be |really )?(?:ok|okay|fine|right|correct|good|"
               r"better|wise|safe|work|make sense|a good idea|possible|acceptable|allowed)\b|(?:should|shall|can|could) (?:we|i)\b"
               r"|(?:do|would) you (?:agree|think|recommend|suggest|mind)\b|what do you (?:think|say)\b|(?:are|is) (?:you|that) "
               r"(?:sure|ok|okay)\b)")
_QUESTION_TAIL = re.compile(r"\s+[-–—]\s+(?=" + _ASKS_IF_SO + r"(?:how|what|why|which|where|when|who|would|could|can|does|do|"
                            r"is|are|should)\b[^-–—]*\?\s*$)", re.I)


def statements(text: str) -> list[str]:
    """`sentences(text)`, with a question tacked on after a dash split off its statement (the offline rules' unit)."""
    return [part for sentence in sentences(text) for part in _QUESTION_TAIL.split(sentence, maxsplit=1)]
