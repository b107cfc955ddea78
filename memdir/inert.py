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
  model ("ASCII smuggling"); the zero-width joiner and non-joiner stay, as real scripts and emoji use them, and so
  does a variation selector after a base it has a meaning for (an emoji's style, a CJK ideograph's glyph).
- `block`: the same for multi-line text (a body), keeping `\\n` and tabs.

Stdlib only and one regex pass each: this runs for every memory the prompt hook shows.
"""

from __future__ import annotations

import re

# The patterns are compiled when first needed (re keeps them then), not on import: the surrogate range alone
# takes re about 8 ms to compile, paid by every prompt hook, and most texts are printable and never need one.
# Line breaks and tabs (ASCII and Unicode's NEL, LINE and PARAGRAPH SEPARATOR, the file/group/record separators).
_BREAKS = "[\t\n\x0b\x0c\r\x1c-\x1e\x85\u2028\u2029]+"
# Invisible format characters a reader never sees (Unicode's default-ignorable code points that isprintable()
# refuses): Mongolian vowel separator, zero-width space, word joiner, the invisible operators (U+2062-2064), the
# deprecated format controls, the reserved U+FFF0-FFF8, interlinear annotation marks, shorthand format controls,
# musical beam and slur controls, and the Unicode tags (U+E0000-E007F), which spell ASCII invisibly, with the
# reserved rest of that plane. Not ZWNJ/ZWJ (U+200C/D), the soft hyphen or the variation selectors: real text needs
# them one at a time, so only their runs, and a selector where it means nothing, are escaped (_HIDDEN below).
_TAGS = "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"  # the tag plane's format characters and reserved points
_INVISIBLE = "\u180e\u200b\u2060-\u206f\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a" + _TAGS
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


# Invisible characters isprintable() accepts, so the shortcuts below would pass them: the Hangul fillers and the
# combining marks that show nothing (always escaped), and the joiners, soft hyphen and variation selectors that real
# text uses one at a time. A run of them carries data a reader never sees (one selector per byte is how text is
# smuggled in an emoji), and so does a lone selector anywhere but after a base it has a meaning for (_selector_fits):
# one per letter hid a byte in each letter of a Latin or Cyrillic word.
_JOINS = "\u00ad\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef"
_SELECTORS = "\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"
_HIDDEN = ("[\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0]"
           f"|[{_JOINS}]{{3,}}"
           f"|(?![\ufe0e\ufe0f]\u200d)[{_JOINS}]{{2}}"  # an emoji's VS16 then ZWJ ("\u2764\ufe0f\u200d\U0001f525") stays
           f"|(?P<selector>[{_SELECTORS}])")  # one selector: kept where _selector_fits


# Any one of those characters: the quick test (compiled in under a millisecond) before the pattern above (about 5 ms).
_MAYBE_HIDDEN = "[\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0" + _JOINS + "]"
# Emoji presentation bases (Unicode's emoji-variation-sequences) outside the symbol categories So and Sm: the keycaps'
# digits, # and *, and DOUBLE and QUESTION EXCLAMATION MARK, INFORMATION SOURCE, WAVY DASH, PART ALTERNATION MARK.
_EMOJI_BASES_ELSE = frozenset("0123456789#*\u203c\u2049\u2139\u3030\u303d")


def _selector_fits(base: str, selector: str) -> bool:
    """Whether a variation selector after `base` is one real text writes there: U+FE0E/FE0F (text or emoji
    style) after an emoji's base; an ideographic variation selector (U+E0100-E01EF), or a standardized one
    (U+FE00-FE03), after a CJK ideograph; U+FE00 after a mathematical symbol; a Mongolian free variation selector
    after a Mongolian letter. Anywhere else it changes nothing a reader sees, and can only carry data."""
    import unicodedata

    code = ord(selector)
    if code in (0xFE0E, 0xFE0F):
        return base in _EMOJI_BASES_ELSE or (not base.isascii() and unicodedata.category(base) in ("So", "Sm"))
    if code < 0xFE00:  # U+180B-180D, U+180F
        return 0x1820 <= ord(base) <= 0x18AA and unicodedata.category(base) == "Lo"
    if code == 0xFE00 and not base.isascii() and unicodedata.category(base) == "Sm":
        return True
    if 0xFE04 <= code <= 0xFE0D:  # standardized variants of CJK ideographs use VS1-VS4 (U+FE00-FE03) only
        return False
    return unicodedata.name(base, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def _may_hide(text: str) -> bool:
    return not text.isascii() and re.search(_MAYBE_HIDDEN, text) is not None


def _escaped_run(match: re.Match[str]) -> str:
    found, at = match.group(0), match.start()
    if match.lastgroup == "selector" and at and _selector_fits(match.string[at - 1], found):
        return found
    return "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in found)


def _unhidden(text: str) -> str:
    """Before the controls are escaped: a selector's base is the character as written ("\\x01" escaped first would end
    in a keycap's digit, and the U+FE0F after it would stay)."""
    return re.sub(_HIDDEN, _escaped_run, text) if _may_hide(text) else text


def one_line(text: str) -> str:
    """`text` on one line, with nothing in it a terminal or a reader would take as control."""
    if text.isprintable() and not _may_hide(text):  # the common case: no work
        return text.strip()
    return re.sub(_UNSAFE, _escaped, _unhidden(re.sub(_BREAKS, " ", text))).strip()  # selectors first: see _unhidden


def block(text: str) -> str:
    """Multi-line `text` with its `\\n` line breaks and tabs kept (CRLF read as LF), every other
    control, bidirectional control and surrogate escaped."""
    printable = text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()  # a body's usual case
    if printable and not _may_hide(text):
        return text  # every character _UNSAFE_IN_BLOCK escapes (and a CRLF's CR) is one isprintable() refuses
    return re.sub(_UNSAFE_IN_BLOCK, _escaped, _unhidden(text.replace("\r\n", "\n")))


def _json_escaped(match: re.Match[str]) -> str:
    data = match.group(0).encode("utf-16-le", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(data[i:i + 2], 'little'):04x}" for i in range(0, len(data), 2))


def json_text(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) with every character `one_line` would escape, and every
    joiner and selector, written as JSON's own `\\uXXXX` (a surrogate pair past U+FFFF): a reader of the JSON sees
    that something is there, and a program that loads it still gets the exact file name or text."""
    if text.isascii() or (text.replace("\n", "").isprintable() and not _may_hide(text)):
        return text
    return re.sub(f"{_UNSAFE}|[\u2028\u2029]|{_MAYBE_HIDDEN}", _json_escaped, text)


def untagged(text: str) -> str:
    """`text` with only its Unicode tags (the U+E0000 plane's format characters and reserved points) shown escaped:
    for text a model reads as it is (a transcript), where tags would be words its reader never saw, while everything
    else, zero-width spaces and BOMs real sessions hold included, stays exactly as written."""
    return text if text.isascii() else re.sub(f"[{_TAGS}]", _escaped, text)
