"""The data behind `memdir ui`: recall's reasons agree with the selector, links both ways, history
diffs, and the graphs, on the real 55-file folder where it matters."""

from __future__ import annotations

import shutil

import pytest

from memdir import browse, overview
from memdir.scan import scan
from memdir.stages.recall.explain import explain, preview
from memdir.stages.recall.offline import select_offline
from tests import ui_folder

PROMPTS = ["how should the cover letter read", "what did we decide about gemini", "session handoff protocol",
           "who is dustin dipaulo", "network graph of contacts", "validate before shipping the release",
           "what is the weather in paris", "npm or pnpm", "funding", "March 30 postmortem",
           "never defer commands to the human", "open source testament", "interview at grafana on april 1"]


@pytest.fixture(scope="module")
def real_headers(request):
    realdata = request.getfixturevalue("realdata")
    return scan(realdata / "memory-folders" / "application-pipeline").headers


@pytest.mark.parametrize("prompt", PROMPTS)
def test_explain_passes_exactly_what_the_offline_selector_selects(real_headers, prompt):
    chosen = select_offline(prompt, real_headers, 5)
    verdicts = explain(prompt, real_headers, 5)
    assert [v.header for v in verdicts if v.passed] == chosen
    assert len(verdicts) == len(real_headers) and all(v.reasons for v in verdicts)


def test_explain_agrees_with_tools_and_a_small_limit(real_headers):
    for prompt in PROMPTS:
        for tools, limit in ((["gemini", "npm"], 5), ([], 1), ([], 2)):
            chosen = select_offline(prompt, real_headers, limit, tools)
            assert [v.header for v in explain(prompt, real_headers, limit, tools) if v.passed] == chosen, prompt


def test_explain_says_why_a_memory_did_not_pass(real_headers):
    verdicts = {v.header.rel_path: v for v in explain("what did we decide about gemini", real_headers)}
    passed = [v for v in verdicts.values() if v.passed]
    assert passed and "cleared the bar" in passed[0].reasons[0]
    no_match = [v for v in verdicts.values() if v.score == 0]
    assert no_match and no_match[0].reasons == ["shares no meaningful word with the prompt"]
    under = [v for v in verdicts.values() if not v.passed and v.score > 0]
    assert under and all(("floor" in " ".join(v.reasons)) or ("bar" in " ".join(v.reasons)) or
                         ("past the first" in v.reasons[0]) for v in under)


def test_explain_names_the_prompt_words_a_memory_shares(real_headers):
    """docs/ui.md promises "the prompt words it shares"; the preview said only "matches 2 of the prompt's 3
    word(s)", and a user could not see why "how do I center a div with flexbox" recalled a cover-letter memory."""
    verdicts = explain("how do I center a div with flexbox", real_headers)
    note = next(v for v in verdicts if v.header.rel_path == "feedback_resume_cover_letter_quality_2026-03-26.md")
    assert "flexbox" in note.reasons[1] and "center" in note.reasons[1], note.reasons
    # Without the model, two words scattered in a long note are no match (issue 21), and the preview says why.
    assert not note.passed and "without the model" in note.reasons[-1], note.reasons
    verdicts = explain("what did we decide about gemini", real_headers)
    assert "gemini" in next(v for v in verdicts if v.passed).reasons[1]

def test_preview_injects_what_recall_injects_and_records_nothing(tmp_path):
    root = tmp_path / "memory"
    ui_folder.build(root)
    found = preview(root, "should I install with npm or pnpm")
    assert found.selected == ["feedback_use_pnpm_not_npm.md"] and "Always pnpm." in found.context
    assert found.engine == "offline" and not (root / ".memdir" / "recall").exists()
    assert preview(root, "should I install with npm or pnpm").selected == found.selected  # not "already shown"


def test_links_both_ways_and_unknown_targets(tmp_path):
    root = tmp_path / "memory"
    store = ui_folder.build(root)
    source = browse.sources(root)[0]
    shown = browse.detail(source, "feedback_use_pnpm_not_npm.md")
    assert [(link.target, link.rel_path) for link in shown.links_out] == [("deploy-checklist", "project_deploy_checklist.md")]
    assert browse.detail(source, "project_deploy_checklist.md").links_in == ["feedback_use_pnpm_not_npm.md"]
    hostile = browse.detail(source, "reference_hostile_note.md")
    assert [link.rel_path for link in hostile.links_out] == [None]
    assert store  # the folder was built through the store


def test_history_diffs_chain_from_the_oldest_version_to_the_file_now(tmp_path):
    root = tmp_path / "memory"
    ui_folder.build(root)
    store = browse.sources(root)[0].store
    history = browse.changes(store, "project_deploy_checklist.md", store.read_file("project_deploy_checklist.md"))
    assert [c.number for c in history] == [1]
    assert "+Run the tests, tag, push, announce." in history[0].diff
    assert "-Run the tests, tag, push." in history[0].diff and history[0].restorable
    store.delete("project_deploy_checklist.md")
    assert browse.deleted(store) == ["project_deploy_checklist.md"]
    gone = browse.changes(store, "project_deploy_checklist.md", None)
    assert "deleted" in gone[0].action and gone[0].diff[1] == "+++ deleted"


def test_links_graph_of_the_real_folder(realdata, tmp_path):
    root = tmp_path / "real"
    shutil.copytree(realdata / "memory-folders" / "application-pipeline", root)
    graph = overview.links_graph(browse.sources(root)[0].store)
    memories = [n for n in graph.nodes if n["kind"] != "missing"]
    assert len(memories) == len(scan(root).headers)
    assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 1000 for n in graph.nodes)
    assert all(e["a"]["name"] == e["from"] and e["b"]["name"] == e["to"] for e in graph.edges)


def test_spend_sums_runs_per_day(tmp_path):
    root = tmp_path / "memory"
    ui_folder.build(root)
    found = overview.spend(root)
    assert found["runs"] == 2 and round(found["total_usd"], 4) == 0.5123 and found["tokens"] == 42000
    assert [d["runs"] for d in found["days"]] == [1, 1]


def test_decision_graph_is_read_from_the_decisions_folder(tmp_path, monkeypatch):
    graph_file = tmp_path / "graph.jsonl"
    graph_file.write_text('{"type":"entity","name":"use pnpm","entityType":"Decision","observations":["x"]}\n'
                          '{"type":"entity","name":"lockfile","entityType":"Note","observations":[]}\n'
                          '{"type":"relation","from":"use pnpm","to":"lockfile","relationType":"BECAUSE"}\n'
                          'not json\n')
    monkeypatch.setenv("MEMDIR_GRAPH_FILE", str(graph_file))
    graph, path = overview.decision_graph(tmp_path / "memory", tmp_path)
    assert path == str(graph_file) and graph.corrupt_lines == 1
    assert [n["name"] for n in graph.nodes] == ["use pnpm", "lockfile"]
    assert [(e["from"], e["label"], e["to"]) for e in graph.edges] == [("use pnpm", "BECAUSE", "lockfile")]
