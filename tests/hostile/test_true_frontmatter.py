"""The support check weighs a memory's other frontmatter keys (6a1a17d), and must still let the user's own memory be
saved when the model writes it as Claude Code writes memories: `metadata:` with node_type, originSessionId, modified."""

from __future__ import annotations

import pytest

from tests.hostile.test_planted_writes import PAYLOADS, TRUE_POSITIVES, WAYS, landed, run_both, transcript

CLAUDE_CODE_FORM = ("metadata:\n  node_type: memory\n  type: feedback\n"
                    "  originSessionId: 5f1c2a9e-8b7d-4c1e-9f00-123456789abc\n  modified: 2026-03-02T09:14:03.512Z\n")


@pytest.fixture(scope="module")
def client():
    import anthropic

    return anthropic.Anthropic(api_key="test-key", max_retries=0)


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_the_users_own_memory_in_claude_codes_form_is_saved(lang, tmp_path, api, client, hostile_home):
    """Found by hostile16: the bookkeeping keys were weighed as the memory's words, none of them the user's (a session
    id, a time stamp, `node_type`): every memory written in the folder's own form was refused as unsupported."""
    said, text = TRUE_POSITIVES[lang]
    text = text.replace("type: feedback\n", CLAUDE_CODE_FORM, 1)
    path = transcript(tmp_path, said, WAYS["README hidden comment"](PAYLOADS["en"][0]))
    _, llm, model = run_both(tmp_path, path, api, text, client)
    saved = llm / "before-the-tests.md"
    assert saved.exists() and "bootstrap" in saved.read_text(encoding="utf-8"), model.results
    assert not landed(llm, "evil.example")


@pytest.mark.parametrize("key", ["originSessionId", "modified", "node_type"])
def test_a_plant_in_a_bookkeeping_key_is_still_refused(key, tmp_path, api, client, hostile_home):
    """Only a key's own shape (a session id, a time stamp, `memory`) is left out of the check, never a text in it."""
    import json

    payload, marker = PAYLOADS["en"]
    said, text = TRUE_POSITIVES["en"]
    form = CLAUDE_CODE_FORM.replace(f"  {key}: ", f"  {key}: {json.dumps(payload)}\n  was: ", 1)
    path = transcript(tmp_path, said, WAYS["web fetch"](payload))
    _, llm, model = run_both(tmp_path, path, api, text.replace("type: feedback\n", form, 1), client)
    assert not landed(llm, marker), model.results
    assert any(r.get("is_error") and "user's own words" in str(r["content"]) for r in model.results), model.results
