"""A file name or code identifier the prompt names is a kind of match (recall.lexical.identifiers,
offline.mark_identified): in a big folder, the few memories holding it whole pass without standing out in meaning."""

from __future__ import annotations

from memdir.scan import Header
from memdir.stages.recall.offline import MARGIN_MIN_MEMORIES, select_offline, signals
from memdir.words import holds_identifier, identifiers


def test_identifiers_are_file_names_paths_and_code_names_not_abbreviations_or_word_pairs():
    assert identifiers("fix the failing test in tests/test_network_graph.py") == ["test_network_graph.py"]
    assert identifiers("how many people are in contacts.yaml right now?") == ["contacts.yaml"]
    assert identifiers("Claude Code says CLAUDE.md is too big") == ["claude.md"]
    assert identifiers("clean out the weekly briefs in signals/") == ["signals/"]
    assert identifiers("I have `redirects()` in @next.config.js") == ["redirects", "next.config.js"]
    assert identifiers("why does flush_stale_jobs skip it? and getUserName?") == ["flush_stale_jobs", "getusername"]
    assert identifiers("log it with run.py logdm, then run.py again") == ["run.py"]
    for words in ("What musical artists/bands has Melanie seen?", "the U.S. and J.K. Rowling", "e.g. this, i.e. that",
                  "North Carolina and/or Tennessee", "version 3.5 of it", "how do I log a LinkedIn DM?",
                  "what did we decide about the deploy"):
        assert identifiers(words) == [], words


def test_an_identifier_is_held_whole_not_inside_a_longer_name():
    assert holds_identifier("ran scripts/apply.py twice", "apply.py")
    assert holds_identifier("apply.py", "apply.py")
    assert not holds_identifier("ran auto_apply.py twice", "apply.py")
    assert not holds_identifier("the apply.pyc file", "apply.py")
    assert not holds_identifier("apply the fix in main.py", "apply.py")
    assert holds_identifier("moved to signals/archive/", "signals/")


def _folder(n: int) -> list[Header]:
    return [Header(f"m{i}.md", f"/x/m{i}.md", 0.0, f"Note {i}", f"Session note {i}", "project",
                   excerpt=f"Worked on the pipeline, step {i}") for i in range(n)]


def test_in_a_big_folder_the_memory_holding_the_named_file_is_recalled_without_standing_out():
    """"apply.py filled in Yes for the question. why?": no memory stands out in meaning (the prompt's check says
    no), but the one note that holds apply.py whole, with the prompt's other words, is what it is about. A note
    holding "apply" and "main.py" apart, or the identifier in a longer name, is not."""
    headers = _folder(MARGIN_MIN_MEMORIES + 10)
    headers[4] = Header("m4.md", "/x/m4.md", 0.0, "Session 28", "Form filler fixes", "project",
                        excerpt="apply.py answered Yes to every question; now unknown stays blank")
    headers[5] = Header("m5.md", "/x/m5.md", 0.0, "Session 29", "Form filler notes", "project",
                        excerpt="apply the Yes question fix in main.py")
    headers[6] = Header("m6.md", "/x/m6.md", 0.0, "Session 30", "Form filler notes", "project",
                        excerpt="auto_apply.py answered Yes to every question")
    flat = [0.84 + 0.0005 * (i % 7) for i in range(len(headers))]
    low = list(flat)
    low[4] = low[5] = low[6] = min(flat)
    query = "apply.py filled in Yes for a question. why?"
    assert [i for i, held in enumerate(signals(query, headers, low).found.identified) if held] == [4]
    assert [h.rel_path for h in select_offline(query, headers, 5, None, low)] == ["m4.md"]
    # Without the identifier the same words pass nothing: the prompt is about no memory in meaning.
    assert select_offline("filled in Yes for a question. why?", headers, 5, None, low) == []


def test_an_identifier_many_memories_hold_or_none_holds_passes_nothing():
    headers = _folder(MARGIN_MIN_MEMORIES + 10)
    for i in range(8):  # over a tenth of the folder holds it: a kind of thing the folder is about, not one thing
        headers[i] = Header(f"m{i}.md", f"/x/m{i}.md", 0.0, f"Session {i}", "Form filler", "project",
                            excerpt="apply.py answered Yes to every question")
    flat = [0.84 + 0.0005 * (i % 7) for i in range(len(headers))]
    query = "apply.py filled in Yes for a question. why?"
    assert not any(signals(query, headers, flat).found.identified)
    assert select_offline(query, headers, 5, None, flat) == []
    # An off-topic prompt naming a file no memory holds stays silent.
    assert select_offline("I have `redirects()` in @next.config.js and host on Vercel", headers, 5, None, flat) == []


def test_a_small_folder_is_judged_as_before():
    """Under MARGIN_MIN_MEMORIES the cosine floors decide (offline.relevant): the identifier adds no way in."""
    note = Header("m0.md", "/x/m0.md", 0.0, "Session 28", "Form filler fixes", "project",
                  excerpt="apply.py answered Yes to every question")
    assert select_offline("apply.py filled in Yes for a question. why?", [note], 5, None, [0.70]) == []
