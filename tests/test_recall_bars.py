"""The offline selector's bars: dates named in the prompt, two shared words, standing out from the folder."""

from __future__ import annotations

import os
from datetime import date, datetime

from memdir.dates import days_mentioned
from memdir.model import Memory
from memdir.scan import Header
from memdir.stages.recall.api import recall
from memdir.stages.recall.offline import (
    MARGIN_MIN_MEMORIES,
    MARGIN_WORDED,
    PROMPT_MARGIN,
    SIMILARITY_FLOOR,
    select_offline,
)

TODAY = date(2026, 11, 22)  # a Sunday


def test_days_mentioned_reads_dates_months_and_recent_days():
    assert days_mentioned("what did Joanna watch on 1 May, 2022?", TODAY) == [(date(2022, 5, 1), date(2022, 5, 1))]
    assert days_mentioned("the call on October 13th, 2023", TODAY) == [(date(2023, 10, 13), date(2023, 10, 13))]
    assert days_mentioned("freeze since 2026-03-05", TODAY) == [(date(2026, 3, 5), date(2026, 3, 5))]
    assert days_mentioned("what happened in August 2025", TODAY) == [(date(2025, 8, 1), date(2025, 8, 31))]
    assert days_mentioned("what did we decide yesterday", TODAY) == [(date(2026, 11, 21), date(2026, 11, 21))]
    assert days_mentioned("last week's outage", TODAY) == [(date(2026, 11, 9), date(2026, 11, 15))]
    # Chit-chat "today", dates without a year, and impossible dates name no day.
    assert days_mentioned("thanks, that's all for today", TODAY) == []
    assert days_mentioned("the demo on March 5", TODAY) == []
    assert days_mentioned("on 31 February, 2023", TODAY) == []


def _dated(store, rel, name, description, day):
    result = store.save(Memory(name=name, description=description, type="project", body=description), rel_path=rel)
    stamp = datetime(day.year, day.month, day.day, 12).timestamp()
    os.utime(result.path, (stamp, stamp))


def test_a_memory_written_on_the_day_the_prompt_names_wins(store):
    """Two memories match "movie" equally; the one written on the day asked about comes first."""
    _dated(store, "project_movie_a.md", "Joanna movie", "Joanna watched a movie with friends", date(2022, 1, 21))
    _dated(store, "project_movie_b.md", "Joanna film", "Joanna watched a movie she loved", date(2022, 5, 1))
    _dated(store, "project_garden.md", "Garden", "Nate planted tomatoes in the garden", date(2022, 5, 1))
    chosen = recall(store.root, "What movie did Joanna watch on 1 May, 2022?", engine="offline", record=False)
    names = [h.rel_path for h in chosen.selected]
    assert names[0] == "project_movie_b.md"
    assert "project_garden.md" not in names  # written that day, but nothing else matches: a date alone is no match


def test_one_chance_word_does_not_clear_the_lexical_bar(store):
    store.save(Memory(name="Funding", description="Non-dilutive capital sources for the studio", type="project",
                      body="Grants and loans."), rel_path="project_funding.md")
    assert recall(store.root, "what is the capital of Portugal?", engine="offline", record=False).selected == []
    hit = recall(store.root, "list the non-dilutive capital sources", engine="offline", record=False)
    assert [h.rel_path for h in hit.selected] == ["project_funding.md"]


def _headers(n):
    return [Header(f"m{i}.md", f"/x/m{i}.md", 0.0, f"Note {i}", f"Session note {i}", "project") for i in range(n)]


def test_in_a_big_folder_a_memory_must_stand_out_from_the_median_cosine():
    """Long session notes all sit near 0.84 to any prompt: a high cosine alone is not relevance."""
    headers = _headers(MARGIN_MIN_MEMORIES + 10)
    flat = [0.84 + 0.0005 * (i % 7) for i in range(len(headers))]  # every memory "close", none stands out
    assert select_offline("rename the loop variable in this script", headers, 5, None, flat) == []
    standing_out = list(flat)
    standing_out[3] = 0.90
    assert [h.rel_path for h in select_offline("rename the loop variable", headers, 5, None, standing_out)] == ["m3.md"]


def test_in_a_big_folder_words_match_only_when_the_prompt_is_about_the_folder():
    """Two session notes share two words with an off-topic prompt and sit a little above the median
    cosine, as on the real folder: nothing is recalled unless some memory clearly stands out."""
    headers = _headers(MARGIN_MIN_MEMORIES + 10)
    for i in (1, 2):
        headers[i] = Header(f"m{i}.md", f"/x/m{i}.md", 0.0, f"Note {i}", "Rewrote the bash loop in the deploy script",
                            "project")
    prompt = "rename the loop variable i to index in this small bash script"
    flat = [0.84 + 0.0005 * (i % 7) for i in range(len(headers))]
    median = sorted(flat)[len(flat) // 2]
    near = list(flat)
    near[1] = near[2] = median + (MARGIN_WORDED + PROMPT_MARGIN) / 2  # over the per-memory bar, under the prompt's
    assert select_offline(prompt, headers, 5, None, near) == []
    clear = list(near)
    clear[1] = median + PROMPT_MARGIN + 0.01
    assert [h.rel_path for h in select_offline(prompt, headers, 5, None, clear)] == ["m1.md", "m2.md"]
    assert [h.rel_path for h in select_offline(prompt, headers, 5, None, None)][:2] == ["m1.md", "m2.md"]  # no model


def test_a_small_folder_keeps_the_absolute_bar():
    """With too few memories to say what is typical, a cosine over the absolute bar is enough."""
    headers = _headers(3)
    assert [h.rel_path for h in select_offline("an unrelated prompt", headers, 5, None, [0.86, 0.80, 0.79])] == ["m0.md"]


def test_in_a_big_folder_standing_out_replaces_the_absolute_cosine_floor():
    """Where every cosine sits low (LoCoMo's "what did the posters at the poetry reading say?": 0.798), a memory
    sharing the prompt's rare words and standing out from the median is recalled; in a small folder, which
    cannot say what is typical, the absolute floor still holds."""
    headers = _headers(MARGIN_MIN_MEMORIES + 10)
    headers[4] = Header("m4.md", "/x/m4.md", 0.0, "Note 4", "Went to a poetry reading with posters", "project")
    prompt = "what did the posters at the poetry reading say?"
    low = [0.74 + 0.0005 * (i % 7) for i in range(len(headers))]
    low[4] = SIMILARITY_FLOOR - 0.005  # under the floor, PROMPT_MARGIN and more over the median
    assert [h.rel_path for h in select_offline(prompt, headers, 5, None, low)] == ["m4.md"]
    small = [headers[4], *headers[:3]]
    assert select_offline(prompt, small, 5, None, [low[4], 0.74, 0.74, 0.74]) == []


def test_one_shared_word_is_enough_when_the_memory_is_named_for_it(store):
    """A one-memory folder, as in the real-client test: "npm" is the only shared word, and the memory's name."""
    store.save(Memory(name="dont-use-npm-in-this-repo", description="Don't use npm in this repo, use pnpm instead",
                      type="feedback", body="Use pnpm.\n\n**Why:** the lockfile is pnpm's\n**How to apply:** pnpm install"),
               rel_path="feedback_npm.md")
    hit = recall(store.root, "install the dependencies and run the tests with npm please", engine="offline", record=False)
    assert [h.rel_path for h in hit.selected] == ["feedback_npm.md"]


def test_a_day_most_of_a_big_folder_was_written_on_says_nothing():
    """A folder restored from git has every file written "last week": that day tells no memory apart."""
    from memdir.stages.recall.offline import written_on_named_day

    now = datetime(2026, 11, 23, 12).timestamp()
    three_days_ago, a_year_ago = now - 3 * 86400, now - 365 * 86400
    fresh_clone = [Header(f"m{i}.md", f"/x/m{i}.md", three_days_ago, f"Note {i}", "", "project")
                   for i in range(MARGIN_MIN_MEMORIES + 4)]
    assert not any(written_on_named_day(fresh_clone, "the recruiter I contacted last week", now))
    lived_in = [Header(h.rel_path, h.path, three_days_ago if i < 2 else a_year_ago, h.name, "", "project")
                for i, h in enumerate(fresh_clone)]
    assert written_on_named_day(lived_in, "the recruiter I contacted last week", now)[:3] == [True, True, False]


def _header(rel: str, name: str, description: str) -> Header:
    return Header(rel, "/m/" + rel, 0.0, name, description, "reference", excerpt=description)


def test_a_how_to_for_a_tool_in_use_is_left_out_and_the_tools_are_read_only_for_one():
    """The agent knows how to use what it is using; that tool's gotchas still come. Which tools are in use is
    read (from the transcript's tail) only when a how-to is among the best matches."""
    usage = _header("reference_terraform_usage.md", "Terraform usage guide",
                    "How to use terraform plan and apply for the staging stack")
    gotcha = _header("feedback_terraform_gotcha.md", "Terraform gotcha",
                     "Never run terraform apply for staging without a plan file: it breaks state")
    other = _header("project_billing.md", "Billing export", "The billing export runs nightly into the warehouse")
    asked: list[int] = []

    def in_use() -> list[str]:
        asked.append(1)
        return ["terraform"]

    query = "terraform plan and apply for the staging stack"
    picked = select_offline(query, [usage, gotcha, other], tools=in_use)
    assert asked == [1] and usage not in picked and gotcha in picked
    assert usage in select_offline(query, [usage, gotcha, other], tools=lambda: ["Bash"])  # another tool: kept
    asked.clear()  # a how-to past the best `limit` matches: not asked
    assert select_offline("the nightly billing export", [usage, gotcha, other], limit=1, tools=in_use) == [other]
    assert asked == []


def test_in_a_big_folder_a_memory_holding_a_rare_name_the_prompt_names_is_recalled_without_standing_out():
    """"did I ever apply to Twilio?": the one session note that mentions Twilio sits under the folder's median
    cosine, and no memory stands out for the prompt; the name it shares is still what the prompt is about. An
    acronym (JSON) or a capital that starts a sentence names no one thing, and passes nothing on its own."""
    headers = _headers(MARGIN_MIN_MEMORIES + 10)
    headers[5] = Header("m5.md", "/x/m5.md", 0.0, "Session 27", "Applied to Twilio and Grafana in batch one", "project")
    headers[6] = Header("m6.md", "/x/m6.md", 0.0, "Sources", "The market feed is stored as JSON", "project")
    headers[7] = Header("m7.md", "/x/m7.md", 0.0, "Look ahead", "Weekly look at the open applications", "project")
    flat = [0.84 + 0.0005 * (i % 7) for i in range(len(headers))]  # none stands out: the prompt's check says no
    low = list(flat)
    low[5] = low[6] = low[7] = min(flat)
    assert [h.rel_path for h in select_offline("did I ever apply to Twilio?", headers, 5, None, low)] == ["m5.md"]
    assert select_offline("add a new source to the market JSON", headers, 5, None, low) == []
    assert select_offline("Scan my inbox now. Look for anyone", headers, 5, None, low) == []


def test_proper_names_skip_sentence_starts_and_acronyms_on_request():
    from memdir.stages.recall.lexical import proper_names

    assert proper_names("Scan my gmail with the connector. Look for anyone: Give me names") == set()
    assert proper_names("did I ever apply to Twilio?") == {"twilio"}
    assert proper_names("add the JSON feed to NLnet") == {"json", "nlnet"}
    assert proper_names("add the JSON feed and its URLs to NLnet", acronyms=False) == {"nlnet"}
    assert proper_names("\"Hello Zoë\" said (Łukasz)") == {"zoë", "łukasz"}
