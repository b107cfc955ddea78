from __future__ import annotations

from memdir import index


def test_entry_line_format_and_length():
    line = index.entry_line("Terse replies", "feedback_terse.md", "User does not want a recap")
    assert line == "- [Terse replies](feedback_terse.md) — User does not want a recap"
    long = index.entry_line("Name", "f.md", "word " * 100)
    assert len(long) <= 150 and long.endswith("…") and "(f.md)" in long


def test_upsert_replaces_in_place_and_keeps_other_lines():
    text = "# My notes\n- [A](a.md) — old\n- [B](b.md) — b\n"
    text = index.upsert(text, "a.md", "- [A](a.md) — new")
    assert text == "# My notes\n- [A](a.md) — new\n- [B](b.md) — b\n"
    text = index.upsert(text, "c.md", "- [C](c.md) — c")
    assert text.endswith("- [C](c.md) — c\n")
    assert index.remove(text, "b.md") == "# My notes\n- [A](a.md) — new\n- [C](c.md) — c\n"


def test_merge_keeps_prose_order_and_hand_written_hooks():
    text = "# Header\nfree text\n- [Mine](b.md) — my own hook\n- [Gone](gone.md) — x\n## Later\n- [Doc](../x.md)\n"
    entries = [("a.md", "- [A](a.md) — a"), ("b.md", "- [B](b.md) — generated")]
    out = index.merge(text, entries, lambda rel: rel in ("a.md", "b.md"))
    assert out.text == "# Header\nfree text\n- [Mine](b.md) — my own hook\n## Later\n- [Doc](../x.md)\n- [A](a.md) — a\n"
    assert (out.added, out.removed) == (["a.md"], ["gone.md"])


def test_cap_under_limits_is_untouched():
    text = "\n".join(f"- [m{i}](m{i}.md) — hook" for i in range(10))
    assert index.load_for_context(text) == text


def test_cap_by_lines_only():
    text = "\n".join(f"- [m{i}](m{i}.md)" for i in range(250))
    capped = index.cap(text)
    assert capped.by_lines and not capped.by_size
    assert capped.text.count("\n") == 199
    out = index.load_for_context(text)
    assert "250 lines (limit 200)" in out and "characters" not in out.split("WARNING")[1].split(".")[0]
    assert "one line per memory" in out and "under ~200 characters" in out


def test_cap_by_size_only_cuts_at_a_newline():
    text = "\n".join("- [x](x.md) — " + "y" * 300 for _ in range(100))
    capped = index.cap(text)
    assert capped.by_size and not capped.by_lines
    assert len(capped.text) <= 25_000 and capped.text.endswith("y")
    out = index.load_for_context(text)
    assert "(limit 25,000)" in out and "lines (limit" not in out


def test_cap_by_both():
    text = "\n".join("- [x](x.md) — " + "y" * 200 for _ in range(300))
    capped = index.cap(text)
    assert capped.by_lines and capped.by_size
    out = index.load_for_context(text)
    assert "300 lines (limit 200) and it is" in out and "(limit 25,000)" in out


def test_upsert_stops_at_the_load_cap_with_one_note():
    text = "".join(f"- [m{i}](m{i}.md) — hook\n" for i in range(198))
    text = index.upsert(text, "a.md", "- [a](a.md)")  # 199 lines: still room for the note after it
    assert text.splitlines()[-1] == "- [a](a.md)" and not index.is_full(text)
    full = index.upsert(text, "b.md", "- [b](b.md)")
    assert full.splitlines()[-1] == index.OVERFLOW_NOTE and "b.md" not in full and index.fits(full.splitlines())
    assert index.upsert(full, "c.md", "- [c](c.md)") == full  # the note once; nothing past the cap
    replaced = index.upsert(full, "a.md", "- [a](a.md) — new hook")  # an entry already listed still updates
    assert "- [a](a.md) — new hook" in replaced.splitlines()
    room = index.upsert(index.remove(full, "m0.md"), "d.md", "- [d](d.md)")  # room again: before the note
    assert room.splitlines()[-2:] == ["- [d](d.md)", index.OVERFLOW_NOTE]


def test_merge_brings_an_overgrown_index_within_the_cap_keeping_a_persons_lines():
    text = "# My notes\nkeep this line\n" + "".join(f"- [m{i}](m{i}.md) — hook {i}\n" for i in range(5000))
    out = index.merge(text, [("new.md", "- [new](new.md)")], lambda rel: True)
    lines = out.text.splitlines()
    assert index.fits(lines) and lines[:2] == ["# My notes", "keep this line"] and lines[-1] == index.OVERFLOW_NOTE
    assert lines[2] == "- [m0](m0.md) — hook 0" and out.added == [] and out.left_out == 5000 - (len(lines) - 3) + 1
    again = index.merge(out.text, [("new.md", "- [new](new.md)")], lambda rel: True)
    assert again.text == out.text  # stable: the note is not added twice
