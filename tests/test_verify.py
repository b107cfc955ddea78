"""Verification of what memories name against the code (memdir.verify, `memdir verify`, doctor, recall)."""

from __future__ import annotations

import json
import os

import pytest

from memdir.claims import Claim, extract_claims
from memdir.project_files import project_root
from memdir.verify import STALE, check_text, verify_folder
from tests.git_repos import git_in

MEMORIES = {
    "project_tokens.md": ("Token storage", "Token storage lives in src/auth/tokens.py",
                          "Tokens are written by `src/auth/tokens.py`."),
    "project_refresh.md": ("Session refresh", "Sessions are refreshed by `renew_session()`",
                           "Call `renew_session()` from src/auth/session.py when a token expires."),
    "feedback_dry_run.md": ("Dry run first", "Always run the migrate command with --dry-run first",
                            "Use --dry-run before every real migration.\n\n**Why:** a bad run wiped staging\n"
                            "**How to apply:** every migration"),
}


@pytest.fixture
def refactored(tmp_path):
    """A repo where tokens.py was deleted and renew_session was renamed; --dry-run still exists."""
    repo = tmp_path / "repo"
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "tokens.py").write_text("TOKENS = {}\n")
    (repo / "src" / "auth" / "session.py").write_text("def renew_session(token):\n    return token\n")
    (repo / "src" / "cli.py").write_text('import argparse\np = argparse.ArgumentParser()\n'
                                         'p.add_argument("--dry-run", action="store_true")\n')
    git_in(repo, "init", "-q")
    git_in(repo, "add", "-A")
    git_in(repo, "commit", "-qm", "before")
    (repo / "src" / "auth" / "tokens.py").unlink()
    (repo / "src" / "auth" / "session.py").write_text("def refresh_session(token):\n    return token\n")
    git_in(repo, "add", "-A")
    git_in(repo, "commit", "-qm", "refactor")
    memory = tmp_path / "memory"
    memory.mkdir()
    for rel, (name, description, body) in MEMORIES.items():
        kind = rel.split("_", 1)[0]
        (memory / rel).write_text(f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n")
    return repo, memory


def test_extracts_paths_symbols_commands_and_flags_not_prose():
    claims = extract_claims("Flags live in src/flags/registry.py (FLAG_REGISTRY); run `make test` with --no-cache "
                            "and call `load_flags()`. See [[feedback_terse]], UI/UX notes, 9/10 and "
                            "grafana.example.com/d/latency or https://x.io/a/b.py.")
    assert claims == [Claim("command", "make test"), Claim("symbol", "load_flags"),
                      Claim("path", "src/flags/registry.py"), Claim("symbol", "FLAG_REGISTRY"),
                      Claim("flag", "--no-cache")]


def test_verify_reports_exactly_the_deleted_file_and_the_renamed_function(refactored, cli):
    repo, memory = refactored
    code, out, _ = cli("--dir", str(memory), "verify", "--project", str(repo), "--json")
    report = json.loads(out)
    assert code == 1
    stale = {rel: m["gone"] for rel, m in report["memories"].items() if m["status"] == "stale"}
    assert stale == {"project_tokens.md": ["`src/auth/tokens.py` is not in the project"],
                     "project_refresh.md": ["`renew_session` is not in the code"]}
    assert report["memories"]["feedback_dry_run.md"] == {
        "status": "ok", "gone": [], "found": ["--dry-run"], "unchecked": [], "summary": "still there: `--dry-run`"}


@pytest.mark.parametrize("tracked", [False, True])
def test_a_memory_folder_inside_the_project_does_not_vouch_for_itself(refactored, cli, tracked):
    """An agent's project-scope memory lives in the checkout (`.claude/agent-memory/<agent>/`), as does a
    `--dir` given inside it: the renamed `renew_session()` is still written in the memory itself, and the walk
    (or `git ls-files`, once the memories are committed) found it there, so the stale memory read as fine."""
    repo, memory = refactored
    inside = repo / ".claude" / "agent-memory" / "reviewer"
    inside.parent.mkdir(parents=True)
    memory.rename(inside)
    if tracked:
        git_in(repo, "add", "-A")
        git_in(repo, "commit", "-qm", "agent memory")
    code, out, _ = cli("--dir", str(inside), "verify", "--project", str(repo), "--json")
    report = json.loads(out)
    assert code == 1 and report["memories"]["project_refresh.md"]["status"] == "stale", report
    assert report["memories"]["feedback_dry_run.md"]["status"] == "ok"  # what the code holds is still found
    from memdir.scan import scan
    from memdir.stages.recall.api import verify_selected

    headers = [h for h in scan(inside).headers if h.rel_path == "project_refresh.md"]
    assert verify_selected(str(repo), inside, headers, budget_s=5)["project_refresh.md"].status == STALE


def test_verify_text_output_lists_the_evidence(refactored, cli):
    repo, memory = refactored
    code, out, _ = cli("--dir", str(memory), "verify", "--project", str(repo))
    assert code == 1
    assert "2 stale" in out
    assert "`src/auth/tokens.py` is not in the project" in out and "dry_run" not in out


def test_gitignored_files_do_not_count_as_the_code(tmp_path):
    repo = tmp_path / "repo"
    (repo / "build_out").mkdir(parents=True)
    (repo / ".gitignore").write_text("build_out/\n")
    (repo / "build_out" / "gen.py").write_text("def old_helper(): pass\n")
    (repo / "main.py").write_text("print('hi')\n")
    evidence = check_text(str(repo), "Use `old_helper()` for that.")
    assert evidence.status == STALE


def test_out_of_budget_names_are_not_checked_rather_than_gone(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    evidence = check_text(str(tmp_path), "Call `compute_totals()` in a.py", budget_s=0.0)
    assert evidence.found == ["a.py"]
    assert evidence.unchecked == ["compute_totals"] and evidence.status != STALE
    assert "not checked (budget)" in evidence.summary()


def test_names_are_matched_as_whole_words_exactly_as_one_lookbehind_per_name_matched_them():
    """names_pattern puts the word boundaries once around the names (re then no longer tries every name at
    every character); the matches must stay those of the former pattern, which had them around each name:
    names that are prefixes of others, --flags, dotted and hyphenated words, names touching punctuation."""
    import random
    import re

    from memdir.verify import names_pattern

    rng = random.Random(26)
    pieces = ["a", "ab", "abc", "b", "-", "--", "_", ".", " ", "\n", "x1", "é", "(", ")", "::", "=", "a-b"]
    for _ in range(400):
        terms = list({"".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))).strip() or "a"
                      for _ in range(rng.randint(1, 6))})
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        former = re.compile("|".join(rf"(?<![\w-]){re.escape(t)}(?![\w-])" for t in sorted(terms, key=len, reverse=True)))
        assert ([(m.start(), m.group(0)) for m in names_pattern(terms).finditer(text)]
                == [(m.start(), m.group(0)) for m in former.finditer(text)]), (terms, text)
    assert [m.group(0) for m in names_pattern(["run", "run_all", "--force"]).finditer(
        "run_all(x); rerun; --force -run run-x run")] == ["run_all", "--force", "run"]


def test_the_walk_stops_at_the_deadline_even_where_it_finds_no_text_file(tmp_path, monkeypatch):
    """A tree of images (or of git-ignored logs) yields no file to search, and the budget was only looked at
    between yielded files: the walk listed every folder whatever the budget, and called the names gone."""
    import time

    from memdir import verify

    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
        for i in range(3):
            (tmp_path / folder / f"{i}.png").write_bytes(b"")
    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(verify.os, "scandir", lambda path: listed.append(path) or real_scandir(path))
    found = verify._scan(str(tmp_path), {"gone_helper"}, time.monotonic() - 1, None)
    assert len(listed) == 1 and "\0complete" not in found  # the root listed, then stopped: not checked, not gone
    listed.clear()
    found = verify._scan(str(tmp_path), {"gone_helper"}, time.monotonic() + 60, None)
    assert len(listed) == 4 and found == {"\0complete": True}  # walked through: gone


def test_project_root_is_the_git_root(refactored):
    repo, _ = refactored
    assert project_root(str(repo / "src" / "auth")) == str(repo)


def test_memory_file_links_are_not_claims_about_code(refactored):
    repo, memory = refactored
    (memory / "project_links.md").write_text("---\nname: Links\ndescription: see feedback_dry_run.md\n"
                                             "type: project\n---\n\nAlso MEMORY.md.\n")
    assert verify_folder(memory, str(repo))["project_links.md"].claims == []


def test_record_keeps_claude_code_format_and_round_trips(refactored, cli):
    repo, memory = refactored
    path = memory / "feedback_dry_run.md"
    mtime = path.stat().st_mtime_ns
    code, _, _ = cli("--dir", str(memory), "verify", "--project", str(repo), "--record")
    assert code == 1
    from memdir.frontmatter_io import parse_document
    from memdir.scan import read_header

    fields = parse_document(path.read_text()).fields
    verified = fields["metadata"]["verified"]
    assert len(verified["commit"]) == 40 and verified["date"][:2] == "20"
    assert fields["name"] == "Dry run first" and "--dry-run before every real migration" in path.read_text()
    assert path.stat().st_mtime_ns == mtime  # checked is not re-saved: the memory's age stays
    header = read_header(path, memory)
    assert header.problem is None and header.description.startswith("Always run")
    # A second record rewrites the same key rather than nesting or duplicating it.
    cli("--dir", str(memory), "verify", "--project", str(repo), "--record")
    assert path.read_text().count("verified:") == 1


def test_doctor_counts_stale_memories(refactored, cli, monkeypatch):
    repo, memory = refactored
    monkeypatch.chdir(repo)
    _, out, _ = cli("--dir", str(memory), "doctor", "--json")
    assert json.loads(out)["stale_memories"] == 2


def test_recall_shows_what_was_checked(refactored):
    from memdir.stages.recall.api import recall

    repo, memory = refactored
    result = recall(memory, "how are sessions refreshed when a token expires?", engine="offline",
                    project_root=str(repo), record=False)
    assert "project_refresh.md" in [h.rel_path for h in result.selected]
    assert "Checked against the current code: `renew_session` is not in the code" in result.context
    assert "Do not present what this memory says about these as fact" in result.context
    assert result.as_dict()["selected"][0]["verification"]["status"] in ("stale", "ok", "unchecked")


def test_behaviour_case_shows_the_removed_function_as_flagged(tmp_path):
    """The behaviour eval's agent sees the verification line the hook would inject."""
    from memdir.evals.cases import load_suite
    from memdir.evals.judge import recalled_context
    from memdir.evals.runner import seed

    case = next(c for c in load_suite("behaviour")[0] if c.id == "removed-function-flagged-not-fact")
    memory = tmp_path / "memory"
    seed(memory, case.memories, __import__("time").time())
    context = recalled_context(case, memory)
    assert "Checked against the current code: `renew_session` is not in the code" in context
    assert "Do not present what this memory says about these as fact" in context


def test_recall_server_checks_memories_against_the_hooks_cwd(refactored):
    """The hook sends its cwd; the server (which has the time budget) verifies what it recalls."""
    from memdir.stages.recall import server

    repo, memory = refactored
    reply = server.handle({"memory_dir": str(memory), "query": "how are sessions refreshed when a token expires?",
                           "engine": "offline", "cwd": str(repo / "src"), "env": {"MEMDIR_PATH": str(memory)}})
    assert "project_refresh.md" in reply["selected"]
    assert "`renew_session` is not in the code" in reply["context"]


CLAUDE_CODE_FOLDER = __import__("pathlib").Path(__file__).parent / "fixtures" / "claude_code_2_1_328" / "memory"


@pytest.fixture
def claude_code_written(tmp_path):
    """Claude Code's folder (metadata: form, node_type, originSessionId) plus one memory in the older
    top-level form whose frontmatter is all snake_case; a project where only the bodies' names exist."""
    import shutil

    memory = tmp_path / "memory"
    shutil.copytree(CLAUDE_CODE_FOLDER, memory)
    (memory / "project_build_helper.md").write_text(
        "---\nname: build_release_helper\ndescription: release builds go through make_release_bundle\n"
        "type: project\nsource_session: run_2026_old_id\n---\n\nRelease builds are made by `scripts/release.py`.\n")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "release.py").write_text("print('release')\n")
    git_in(repo, "init", "-q")
    return repo, memory


def test_frontmatter_is_never_taken_as_code_in_either_form(claude_code_written, cli, monkeypatch):
    repo, memory = claude_code_written
    code, out, _ = cli("--dir", str(memory), "verify", "--project", str(repo), "--json")
    report = json.loads(out)["memories"]
    assert code == 0 and {rel: m["status"] for rel, m in report.items() if m["status"] == STALE} == {}
    assert "feedback_no_emoji.md" not in report  # listed only when it names something: its body names nothing
    assert report["project_build_helper.md"] == {"status": "ok", "gone": [], "found": ["scripts/release.py"],
                                                 "unchecked": [], "summary": "still there: `scripts/release.py`"}
    monkeypatch.chdir(repo)
    _, out, _ = cli("--dir", str(memory), "doctor", "--json")
    assert json.loads(out)["stale_memories"] == 0


def test_recalled_header_checks_the_body_only(claude_code_written):
    from memdir.stages.recall.api import recall

    repo, memory = claude_code_written
    result = recall(memory, "no emoji in commit messages", engine="offline", project_root=str(repo), record=False)
    assert [h.rel_path for h in result.selected] == ["feedback_no_emoji.md"]
    assert "Checked against the current code" not in result.context and "node_type" not in result.context
    result = recall(memory, "how are release builds made?", engine="offline", project_root=str(repo), record=False)
    assert "Checked against the current code: still there: `scripts/release.py`" in result.context


def test_real_folder_claims_come_from_bodies_only(realdata, tmp_path):
    """The real 55-file folder: no claim is a frontmatter key or value of its memory."""
    from memdir.frontmatter_io import parse_header

    def flat(value) -> set[str]:
        if isinstance(value, dict):
            return set(map(str, value)) | {v for item in value.values() for v in flat(item)}
        return {str(value)}

    folder = realdata / "memory-folders" / "application-pipeline"
    results = verify_folder(folder, str(tmp_path), use_git=False, budget_s=0.0)
    assert len(results) >= 50
    for rel, evidence in results.items():
        fields = parse_header((folder / rel).read_text(encoding="utf-8")).fields
        header_only = flat(fields) - {c.text for c in extract_claims(parse_header((folder / rel).read_text()).body)}
        assert not {c.text for c in evidence.claims} & header_only, rel


def test_verify_folder_can_check_only_the_newest_memories(tmp_path):
    import os

    from memdir.verify import verify_folder

    project, memory = tmp_path / "project", tmp_path / "memory"
    project.mkdir()
    memory.mkdir()
    for n in range(5):
        path = memory / f"project_{n}.md"
        path.write_text(f"---\nname: n{n}\ndescription: d\ntype: project\n---\n\nSee `src/gone_{n}.py`.\n")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    assert set(verify_folder(memory, str(project), use_git=False, newest=2)) == {"project_3.md", "project_4.md"}
    assert len(verify_folder(memory, str(project), use_git=False)) == 5
