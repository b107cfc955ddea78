"""The llm selector's list quotes a memory's own text where it names a rare word of the prompt that its line does
not say (recall/llm_mentions.py): a description never lists everything a session summary holds."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from memdir import constants as C
from memdir.scan import scan
from memdir.stages.recall.llm_mentions import mentions
from memdir.stages.recall.llm_select import request_messages


def _folder(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    memory.mkdir()
    files = {
        "project_session_2026-03-26.md": ("Session: batch 1 submitted, scoring recalibrated",
                                          "Submitted in batch 1: dbt Labs (8.5), Anduril (8.4), Twilio (8.3).\n"
                                          "Right now the queue holds 12 entries."),
        "project_session_2026-03-28.md": ("Session: resume CSS tuning", "24 of 41 resumes fit one page.\n"),
        "feedback_outreach.md": ("Every outreach DM carries three profile links", "Links: portfolio, LinkedIn.\n"),
        "project_zendesk_interview.md": ("Zendesk interview on Monday", "Recruiter screen with Zendesk on Monday.\n"),
    }
    for name, (description, body) in files.items():
        (memory / name).write_text(f"---\nname: {name[:-3]}\ndescription: {description}\ntype: project\n---\n{body}",
                                   encoding="utf-8")
    return memory


def test_a_rare_name_only_the_text_holds_is_quoted_under_that_memory(tmp_path):
    headers = scan(_folder(tmp_path)).headers
    found = mentions("did I ever apply to Twilio?", headers)
    assert list(found) == ["project_session_2026-03-26.md"]
    assert "Twilio (8.3)" in found["project_session_2026-03-26.md"]


def test_an_ordinary_word_few_memories_hold_is_not_quoted(tmp_path):
    assert mentions("are we right on time?", scan(_folder(tmp_path)).headers) == {}


def test_a_word_the_memorys_own_line_says_is_not_quoted_again(tmp_path):
    assert "project_zendesk_interview.md" not in mentions("when is the Zendesk screen?", scan(_folder(tmp_path)).headers)


def test_the_quote_is_bounded_and_on_one_line(tmp_path):
    memory = _folder(tmp_path)
    long_line = " ".join(["filler"] * 60 + ["Freshdesk"] + ["filler"] * 60)
    (memory / "project_long.md").write_text(f"---\nname: long\ndescription: a long session\ntype: project\n---\n"
                                            f"{long_line}\nnext line\n", encoding="utf-8")
    quote = mentions("did Freshdesk reply?", scan(memory).headers)["project_long.md"]
    assert "Freshdesk" in quote and "\n" not in quote and len(quote) <= C.RECALL_MENTION_CHARS + 2
    assert quote.startswith("…") and quote.endswith("…")


def test_the_quote_is_the_line_holding_most_of_what_the_prompt_names(tmp_path):
    """Not the first line that qualifies: a session note's line on "expired fellowships" was quoted for "the Sovereign
    Tech Fellowship is due", where a later line says "Sovereign Tech: phantom" (relayv4a and relayv4b, blind)."""
    memory = _folder(tmp_path)
    (memory / "project_session_2026-03-31.md").write_text(
        "---\nname: s45\ndescription: Pipeline triage\ntype: project\n---\n"
        "- Two Fellowship entries expired and were closed.\n"
        "- Corrected deadline claims: Sovereign Tech Fellowship is a phantom, never in the pipeline.\n",
        encoding="utf-8")
    quote = mentions("the Sovereign Tech Fellowship is due April 6, start the application",
                     scan(memory).headers)["project_session_2026-03-31.md"]
    assert "phantom" in quote and "expired" not in quote, quote


def test_a_capitalised_prompt_word_the_memory_writes_in_lower_case_is_no_name_to_quote(tmp_path):
    """"Project Manager" in a list of roles named no one; "hiring managers" in a memory was quoted for it."""
    memory = _folder(tmp_path)
    (memory / "project_outreach.md").write_text("---\nname: outreach\ndescription: contacts for each role\n"
                                                "type: project\n---\nReach hiring managers first.\n", encoding="utf-8")
    (memory / "project_freshdesk.md").write_text("---\nname: support desk\ndescription: who answered\n"
                                                 "type: project\n---\nThe Helpdesk lead answered.\n", encoding="utf-8")
    headers = scan(memory).headers
    assert "project_outreach.md" not in mentions("classify their role: Scrum Master; Project Manager", headers)
    assert "Helpdesk lead" in mentions("did their Helpdesk answer?", headers)["project_freshdesk.md"]


def test_a_cut_quote_keeps_whole_words_only(tmp_path):
    """relay7a and relay7b both read a quote that ended "These show 18 years of c": the cut fell inside a word."""
    memory = _folder(tmp_path)
    words = [f"word{k:03d}x" for k in range(80)]
    words[40] = "Freshdesk"
    (memory / "project_long.md").write_text(f"---\nname: long\ndescription: a long session\ntype: project\n---\n"
                                            f"{' '.join(words)}\n", encoding="utf-8")
    quote = mentions("did Freshdesk reply?", scan(memory).headers)["project_long.md"]
    shown = quote.strip("…").split()
    assert "Freshdesk" in shown and set(shown) <= set(words), quote


def test_the_request_shows_the_quote_under_the_memorys_line(tmp_path):
    headers = scan(_folder(tmp_path)).headers
    system, messages = request_messages("did I ever apply to Twilio?", headers, [], 5, date(2026, 4, 2))
    listed = messages[0]["content"].splitlines()
    at = next(k for k, line in enumerate(listed) if "project_session_2026-03-26.md" in line)
    assert listed[at + 1].startswith('  its text: "') and "Twilio (8.3)" in listed[at + 1]
    assert "its text:" in system


def test_a_quote_of_control_characters_stays_within_the_bound_once_escaped(tmp_path):
    """Escaped, a control character is four characters or six (`\\x07`, `\\u202e`): the bound holds for the line
    the request shows, not for the text before escaping (a 160-character quote of BELs was 640 characters)."""
    memory = _folder(tmp_path)
    (memory / "project_bells.md").write_text("---\nname: bells\ndescription: a noisy note\ntype: project\n---\n"
                                             "Freshdesk " + "\x07\u202e" * 150 + "\n", encoding="utf-8")
    headers = scan(memory).headers
    quote = mentions("did Freshdesk reply?", headers)["project_bells.md"]
    assert "Freshdesk" in quote and "\x07" not in quote and "\\x07" in quote and not quote.rstrip("…").endswith("\\")
    assert len(quote) <= C.RECALL_MENTION_CHARS + 2
    system, messages = request_messages("did Freshdesk reply?", headers, [], 5, date(2026, 4, 2))
    line = next(text for text in messages[0]["content"].splitlines() if "Freshdesk" in text and "its text" in text)
    assert len(line) <= len('  its text: ""') + C.RECALL_MENTION_CHARS + 2


def test_a_cut_never_leaves_part_of_a_tag_escape(tmp_path):
    """hostile22: a Unicode tag is shown as a ten-character escape (`\\U000e0041`); the cut stripped a split `\\x..` or
    `\\u...` but left a split `\\U0`, which a model reads as a character code that is not there. Every cut point."""
    memory = _folder(tmp_path)
    tags = "".join(chr(0xE0000 + ord(c)) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for pad in range(10):
        (memory / "project_tags.md").write_text("---\nname: tags\ndescription: a planted note\ntype: project\n---\n"
                                                f"Freshdesk {'x' * pad}{tags}\n", encoding="utf-8")
        quote = mentions("did Freshdesk reply?", scan(memory).headers)["project_tags.md"].strip("…")
        assert quote.startswith("Freshdesk ") and re.search(r"\\U[0-9a-f]{8}$", quote), (pad, quote)
