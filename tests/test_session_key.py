"""Every writer keys a session's state by one rule (memdir.session_key): a UUID as it is, any other id reduced and
hashed, so two ids never share a folder because their unsafe characters reduce alike (hostile20)."""

from __future__ import annotations

from memdir.session_key import KEY_MAX, session_key, session_rel


def test_claude_codes_ids_are_their_own_key():
    uuid = "3f1c2a9e-7b4d-4e0a-9c51-2d8f6b7a1e03"
    assert session_key(uuid) == uuid and session_rel(uuid) == f".memdir/sessions/{uuid}"


def test_ids_that_reduce_alike_get_folders_of_their_own():
    keys = {session_key(raw) for raw in ["a/b", "a\x00b", "a-b", "a b", "a\\b", "", "..", "/", "a\udcffb"]}
    assert len(keys) == 9
    assert all(set(k) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") for k in keys)


def test_a_long_id_is_bounded_and_still_told_apart():
    long = "x" * 10_000
    assert len(session_key(long)) <= KEY_MAX and session_key(long) != session_key(long + "y")


def test_the_recall_and_extraction_state_keep_a_session_in_the_same_folder():
    from memdir.stages.extractor.state import _session_rel
    from memdir.stages.recall.state import _folder

    for raw in ["3f1c2a9e-7b4d-4e0a-9c51-2d8f6b7a1e03", "a/b", "x" * 300]:
        assert _folder(raw) == _session_rel(raw) == session_rel(raw)
