"""memdir.inert: planted control characters are shown, never acted on."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from memdir import inert
from memdir.inert import block, one_line


def test_one_line_folds_breaks_and_escapes_controls():
    assert one_line("a\nMemory (x): /p\r\nb\u2028c\u0085d\te") == "a Memory (x): /p b c d e"
    assert one_line("x\x1b[2Ky\u202ez\x00\udcff") == "x\\x1b[2Ky\\u202ez\\x00\\udcff"
    assert one_line("  plain text, café, 日本語, 👨\u200d💻  ") == "plain text, café, 日本語, 👨\u200d💻"


def test_block_keeps_lines_and_tabs_only():
    assert block("one\r\ntwo\tcol\nthree\rover\u2028x\x1b") == "one\ntwo\tcol\nthree\\x0dover\\u2028x\\x1b"
    assert block("fine\nlines") == "fine\nlines"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=40))
def test_block_fast_path_escapes_exactly_what_the_pattern_does(text: str) -> None:
    """The printable shortcut may only skip texts the escaping pass would leave as they are."""
    slow = re.sub(inert._UNSAFE_IN_BLOCK, inert._escaped, text.replace("\r\n", "\n"))
    assert inert.block(text) == slow
    assert inert.block("body line\n\tindented \u00e9\u4e2d\n" + text) == "body line\n\tindented \u00e9\u4e2d\n" + slow
