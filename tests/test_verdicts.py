"""The warm server's checks against the code, kept between prompts (memdir.verdicts, issue 26): a prompt
never waits for a project-wide search; what it could not check is checked after the reply and shown the
next time the memory is recalled."""

from __future__ import annotations

import time

from memdir.verdicts import Rechecker, Verdicts
from memdir.verify import STALE, check_text
from tests.test_verify import refactored  # noqa: F401  (the fixture)


def _settled(verdicts: Verdicts, root: str, needle: str, timeout: float = 20.0) -> bool | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        there = verdicts.get(root, needle)
        if there is not None:
            return there
        time.sleep(0.02)
    return None


def test_a_checked_name_is_not_searched_again_until_its_verdict_expires(tmp_path):
    (tmp_path / "a.py").write_text("def compute_totals():\n    pass\n")
    kept = Verdicts()
    assert check_text(str(tmp_path), "Call `compute_totals()`.", verdicts=kept).found == ["compute_totals"]
    (tmp_path / "a.py").write_text("def other():\n    pass\n")
    assert check_text(str(tmp_path), "Call `compute_totals()`.", verdicts=kept).found == ["compute_totals"]
    expired = Verdicts(ttl=0.0)
    expired.put(str(tmp_path), {"compute_totals": True})
    assert check_text(str(tmp_path), "Call `compute_totals()`.", verdicts=expired).status == STALE


def test_a_search_cut_short_keeps_only_what_it_found(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    kept = Verdicts()
    evidence = check_text(str(tmp_path), "Call `compute_totals()`.", budget_s=0.0, verdicts=kept)
    assert evidence.unchecked == ["compute_totals"]
    assert kept.get(str(tmp_path), "compute_totals") is None  # not searched: neither there nor gone
    check_text(str(tmp_path), "Call `compute_totals()`.", verdicts=kept)  # searched through: gone
    assert kept.get(str(tmp_path), "compute_totals") is False


def test_the_oldest_verdicts_go_first_past_the_limit(tmp_path):
    kept = Verdicts(limit=2)
    kept.put("r", {"a": True})
    kept.put("r", {"b": True})
    kept.get("r", "a")
    kept.put("r", {"c": False})
    assert kept.get("r", "a") is None and kept.get("r", "b") is True and kept.get("r", "c") is False


def _project_and_memory(tmp_path, body: str):
    """A checkout whose code has renew_session(), and a memory m.md with `body` in the folder above it (a
    checkout of its own: memdir.verify.holds_no_code)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src.py").write_text("def renew_session():\n    pass\n")
    (tmp_path / "m.md").write_text(f"---\nname: n\ndescription: d\ntype: project\n---\n\n{body}\n")
    return project


def test_the_rechecker_checks_memories_in_the_background(tmp_path):
    project = _project_and_memory(tmp_path, "Call `renew_session()` and `gone_helper()`.")
    kept = Verdicts()
    Rechecker(kept).later(str(project), str(tmp_path), ["m.md"])
    assert _settled(kept, str(project), "renew_session") is True
    assert _settled(kept, str(project), "gone_helper") is False


def test_a_memory_checked_in_the_background_is_not_checked_again_within_the_ttl(tmp_path, monkeypatch):
    """A project too big to read through within the background budget (a home folder) leaves names unchecked
    after every check; re-queued on each recall of the memory, it cost the full budget (10 s of CPU) a prompt."""
    import threading

    from memdir import verify

    checked: list[str] = []  # the project of each check, in order
    done = threading.Semaphore(0)

    def budget_spent(root, texts, **kwargs):
        checked.append(root)
        done.release()
        return {}  # as when the budget ran out: nothing settled

    monkeypatch.setattr(verify, "check_many", budget_spent)
    (tmp_path / "m.md").write_text("Call `gone_helper()`.\n")
    checker = Rechecker(Verdicts(ttl=60.0))
    checker.later("/project", str(tmp_path), ["m.md"])
    assert done.acquire(timeout=20)
    checker.later("/project", str(tmp_path), ["m.md"])  # recalled again, still unchecked: not read again
    checker.later("/other", str(tmp_path), ["m.md"])  # another project: checked (after /project, were it queued)
    assert done.acquire(timeout=20) and checked == ["/project", "/other"]
    checker.verdicts.ttl = 0.0  # past the TTL it is checked again (the project may have changed)
    checker.later("/project", str(tmp_path), ["m.md"])
    assert done.acquire(timeout=20) and checked == ["/project", "/other", "/project"]


def test_the_server_answers_at_once_and_shows_the_check_on_the_next_recall(refactored, monkeypatch):  # noqa: F811
    """With no time for a search in the prompt's answer, the first answer says "not checked"; the search
    runs after the reply, and a later recall of the memory (another session) shows that the name is gone."""
    from memdir.stages.recall import server, server_answer

    repo, memory = refactored
    kept = Verdicts()
    monkeypatch.setattr(server_answer, "_rechecker", Rechecker(kept))
    request = {"memory_dir": str(memory), "query": "how are sessions refreshed when a token expires?",
               "engine": "offline", "cwd": str(repo / "src"), "env": {"MEMDIR_PATH": str(memory)}}
    first = server.handle({**request, "session_id": "one"})
    assert "project_refresh.md" in first["selected"]
    assert "`renew_session` is not in the code" not in first["context"]
    assert _settled(kept, str(repo), "renew_session") is False
    second = server.handle({**request, "session_id": "two"})
    assert "`renew_session` is not in the code" in second["context"]


def test_a_memory_swapped_for_a_symlink_is_never_read_for_its_names(tmp_path):
    """What verification reads goes through safefs: a memory replaced by a link to a file outside the
    folder (after the scan listed it) is skipped, its target never read."""
    from memdir.verdicts import memory_texts

    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "kept.md").write_text("---\nname: k\ndescription: d\ntype: project\n---\n\nUse `kept_name()`.\n")
    outside = tmp_path / "secret.md"
    outside.write_text("Use `outside_name()`.\n")
    (folder / "swapped.md").symlink_to(outside)
    texts = memory_texts(folder, ["kept.md", "swapped.md", "missing.md"])
    assert list(texts) == ["kept.md"] and "kept_name" in texts["kept.md"]


def test_the_background_search_waits_while_a_prompt_is_answered(tmp_path):
    """The search holds the GIL while it matches: it reads no file while the server answers a prompt."""
    project = _project_and_memory(tmp_path, "Call `renew_session()`.")
    answering = [True]
    kept = Verdicts()
    Rechecker(kept, busy=lambda: answering[0]).later(str(project), str(tmp_path), ["m.md"])
    time.sleep(0.5)
    assert kept.get(str(project), "renew_session") is None  # still waiting for the answer to finish
    answering[0] = False
    assert _settled(kept, str(project), "renew_session") is True
