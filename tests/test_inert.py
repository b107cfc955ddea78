"""memdir.inert: planted control characters are shown, never acted on."""

from __future__ import annotations

from memdir.inert import block, one_line


def test_one_line_folds_breaks_and_escapes_controls():
    assert one_line("a\nMemory (x): /p\r\nb\u2028c\u0085d\te") == "a Memory (x): /p b c d e"
    assert one_line("x\x1b[2Ky\u202ez\x00\udcff") == "x\\x1b[2Ky\\u202ez\\x00\\udcff"
    assert one_line("  plain text, café, 日本語, 👨\u200d💻  ") == "plain text, café, 日本語, 👨\u200d💻"


def test_block_keeps_lines_and_tabs_only():
    assert block("one\r\ntwo\tcol\nthree\rover\u2028x\x1b") == "one\ntwo\tcol\nthree\\x0dover\\u2028x\\x1b"
    assert block("fine\nlines") == "fine\nlines"
