"""The offline rule for commits without a co-author line (extractor/offline_facts.git_habit) reads a rejection's
reason whole, however long: its pattern must take time in proportion to the text, not to its square."""

from __future__ import annotations

import time

from memdir.stages.extractor.offline_facts import git_habit


def test_a_long_run_of_coauthor_words_is_read_in_linear_time():
    for word in ("coauthor", "соавтор", "mitautor"):
        started = time.monotonic()
        assert git_habit("please " + word * 5000) is None
        assert time.monotonic() - started < 1.0, word  # 40 KB: 20 s each before the bound


def test_the_bounded_word_ending_still_reads_the_usual_forms():
    assert git_habit("no coauthorship lines in my commits")
    assert git_habit("Never add Co-Authored-By to commits")
    assert git_habit("коммиты без соавторства")
    assert git_habit("co-authorなしでコミットして")
