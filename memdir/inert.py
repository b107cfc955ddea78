"""Text from memory files made inert before memdir prints it or writes it somewhere else.

A memory file is data anyone can plant, and its name, description and file name reach a terminal
(`list`, `show`), MEMORY.md and the prompt hook's output. There a newline (or an escaped `\\n` in
YAML) would start a line of memdir's own shape ("Memory (feedback, saved today): /tmp/forged.md",
"IMPORTANT: ..."), ESC would drive the terminal, U+202E would reverse what the user reads, and a
lone surrogate (from YAML's "\\udcff" or a file name that is not UTF-8) cannot be encoded at all.

- `one_line`: line breaks, tabs and their Unicode kin become one space; every other control
  character, bidirectional control, invisible character and surrogate is shown escaped (`\\x1b`,
  `\\u202e`, `\\U000e0041`), so the user sees that something was there. Invisible characters
  (zero-width space, word joiner, Unicode tags) are how text is hidden from a reader and shown to a
  model ("ASCII smuggling"); the zero-width joiner and non-joiner stay, as real scripts and emoji use them.
- `block`: the same for multi-line text (a body), keeping `\\n` and tabs.

Stdlib only and one regex pass each: this runs for every memory the prompt hook shows.
"""

from __future__ import annotations

import re

# The patterns are compiled when first needed (re keeps them then), not on import: the surrogate range alone
# takes re about 8 ms to compile, paid by every prompt hook, and most texts are printable and never need one.
# Line breaks and tabs (ASCII and Unicode's NEL, LINE and PARAGRAPH SEPARATOR, the file/group/record separators).
_BREAKS = "[\t\n\x0b\x0c\r\x1c-\x1e\x85\u2028\u2029]+"
# Invisible format characters a reader never sees: Mongolian vowel separator, zero-width space, word joiner and
# the invisible operators, the deprecated format controls, interlinear annotation marks, and the Unicode tags
# (U+E0000-E007F), which spell ASCII invisibly. Not ZWNJ/ZWJ (U+200C/D): Persian, Indic scripts and emoji need them.
_INVISIBLE = "\u180e\u200b\u2060-\u2064\u206a-\u206f\ufff9-\ufffb\U000e0000-\U000e007f"
# C0 and C1 controls, DEL, bidirectional controls (ALM, LRM, RLM, embeddings, overrides, isolates), BOM, surrogates.
_UNSAFE = ("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
           + _INVISIBLE + "]")
_UNSAFE_IN_BLOCK = ("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                    "\ufeff\ud800-\udfff" + _INVISIBLE + "]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def one_line(text: str) -> str:
    """`text` on one line, with nothing in it a terminal or a reader would take as control."""
    if text.isprintable():  # the common case: no work
        return text.strip()
    return re.sub(_UNSAFE, _escaped, re.sub(_BREAKS, " ", text)).strip()


def block(text: str) -> str:
    """Multi-line `text` with its `\\n` line breaks and tabs kept (CRLF read as LF), every other
    control, bidirectional control and surrogate escaped."""
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():  # a body's usual case
        return text  # every character _UNSAFE_IN_BLOCK escapes (and the CR of a CRLF) is one isprintable() refuses
    return re.sub(_UNSAFE_IN_BLOCK, _escaped, text.replace("\r\n", "\n"))
