from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from memdir.config import Settings
from memdir.paths import sanitize
from memdir.stages.extractor import state
from memdir.stages.extractor.batch import discover, run_batch, summary_table, windows
from tests import api_payloads as P
from tests.fake_api import FakeAPI


def _transcript(path: Path, cwd: str, texts: list[str], session: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, text in enumerate(texts):
        lines.append({"type": "user", "uuid": f"{session}-u{i}", "sessionId": session, "cwd": cwd,
                      "timestamp": "2026-03-02T09:00:00Z", "message": {"role": "user", "content": text}})
        lines.append({"type": "assistant", "uuid": f"{session}-a{i}", "sessionId": session, "cwd": cwd,
                      "timestamp": "2026-03-02T09:00:05Z",
                      "message": {"id": f"msg-{session}-{i}", "role": "assistant", "content": [P.text("Noted.")]}})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_routing_by_cwd(tmp_path, isolated_home):
    repo_a, repo_b = tmp_path / "repo-a", tmp_path / "repo-b"
    for repo in (repo_a, repo_b):
        (repo / ".git").mkdir(parents=True)
    (repo_a / "sub").mkdir()
    projects = isolated_home / ".claude" / "projects"
    _transcript(projects / sanitize(str(repo_a / "sub")) / "s1.jsonl", str(repo_a / "sub"),
                ["Remember that repo A deploys on Mondays."], "s1")
    _transcript(projects / sanitize(str(repo_b)) / "s2.jsonl", str(repo_b), ["Remember that repo B uses Rust."], "s2")
    gone = projects / "-old-deleted-project" / "s3.jsonl"
    _transcript(gone, "/old/deleted/project", ["Remember that the old project used Perl."], "s3")
    _transcript(projects / "x" / "s1" / "subagents" / "agent-1.jsonl", str(repo_a), ["Remember nothing."], "sub")
    report = run_batch(None, settings=Settings(engine="offline"), engine="offline")
    folder_a = projects / sanitize(str(repo_a.resolve())) / "memory"  # the git root, not the subfolder
    folder_b = projects / sanitize(str(repo_b.resolve())) / "memory"
    assert "Mondays" in " ".join(p.read_text() for p in folder_a.glob("*_*.md"))
    assert "Rust" in " ".join(p.read_text() for p in folder_b.glob("*_*.md"))
    assert "Perl" in " ".join(p.read_text() for p in (gone.parent / "memory").glob("*_*.md"))
    assert set(report.rows) == {str(folder_a), str(folder_b), str(gone.parent / "memory")}
    assert all(r.transcripts == 1 for r in report.rows.values())


def test_discover_since(tmp_path):
    old = _transcript(tmp_path / "old.jsonl", "/x", ["hi there"], "o")
    new = _transcript(tmp_path / "new.jsonl", "/x", ["hi there"], "n")
    os.utime(old, (0, 0))
    from datetime import date

    assert discover([tmp_path], since=date(2020, 1, 1)) == [new]


def test_windows_follow_the_cursor():
    from memdir.transcript import Message

    msgs = [Message("user", [P.text(str(i))], uuid=f"m{i}") for i in range(7)]
    assert [[m.uuid for m in w] for w in windows(msgs, "m2", 2)] == [["m3", "m4"], ["m5", "m6"]]
    assert len(windows(msgs, None, 3)) == 3 and windows(msgs, "m6", 3) == []


def test_max_cost_stops_cleanly(api, tmp_path):
    import anthropic

    texts = [f"Remember that service {i} is owned by team {i}." for i in range(6)]
    transcript = _transcript(tmp_path / "p" / "s.jsonl", str(tmp_path), texts, "s")
    memory = tmp_path / "memory"
    os.environ["MEMDIR_PATH"] = str(memory)
    try:
        api.post("/v1/messages").mock(return_value=httpx.Response(200, json=P.message(
            [P.text("Nothing new.")], model="claude-sonnet-5-5", input_tokens=4000, output_tokens=300)))
        client = anthropic.AsyncAnthropic(api_key="test-key", max_retries=0)
        settings = Settings(engine="llm", extract_last_n=2, max_attempts=1)
        report = run_batch([transcript], settings=settings, engine="llm", max_cost=0.05, client=client)
    finally:
        del os.environ["MEMDIR_PATH"]
    assert report.stopped and "--max-cost 0.05" in report.stopped
    row = report.rows[str(memory)]
    assert 0 < row.windows < 6 and row.cost <= 0.05
    done_cursor = state.load_cursor(memory, "s")["uuid"]
    assert done_cursor == f"s-a{row.windows * 1 - 1}"  # windows of 2 messages: one user + one assistant each


@pytest.mark.slow
def test_resume_after_kill_repeats_no_finished_window_and_loses_none(tmp_path):
    texts = [f"Remember that fact number {i} matters." for i in range(8)]
    transcript = _transcript(tmp_path / "p" / "s.jsonl", str(tmp_path), texts, "s")
    memory = tmp_path / "memory"
    killed = threading.Event()

    def respond(body, n):
        killed.wait(0.4)  # slow answers until the kill, so it lands mid-run; the rerun is not held up
        return P.message([P.text("Nothing new.")])

    with FakeAPI(respond) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "MEMDIR_PATH": str(memory)}
        argv = [sys.executable, "-m", "memdir.entry.cli", "batch", str(transcript), "--engine", "llm", "--last", "2"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while len(api.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed.set()
        finished = state.load_cursor(memory, "s")["uuid"]
        first_run = len(api.requests)
        rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert rerun.returncode == 0, rerun.stderr
    def facts(body):
        return {int(t.split("fact number ")[1].split()[0]) for t in body["messages"][0]["content"][1]["text"].split("\n")
                if "fact number" in t}
    before = [facts(b) for b in api.requests[:first_run]]
    after = [facts(b) for b in api.requests[first_run:]]
    assert set().union(*before, *after) == set(range(8))  # nothing lost
    finished_facts = set(range(int(finished.split("-a")[1]) + 1)) if finished else set()
    assert not finished_facts & set().union(*after)  # no finished window sent again
    assert state.load_cursor(memory, "s")["uuid"] == "s-a7"


def _two_projects(tmp_path):
    out = []
    for name in ("alpha", "beta"):
        repo = tmp_path / name
        (repo / ".git").mkdir(parents=True)
        path = _transcript(tmp_path / "projects" / name / f"{name}.jsonl", str(repo),
                           [f"Remember that {name} deploys on Fridays."], name)
        out.append((repo, path))
    return out


def _batches_routes(api, memory_text, turn_plan, status=None):
    """turn_plan[i] = the assistant content for every job at turn i (called with the job's memory dir);
    `status` answers the status polls (default: every batch has ended)."""
    created = []

    def create(request):
        body = json.loads(request.content)
        created.append(body)
        return httpx.Response(200, json=P.batch(f"msgbatch_{len(created)}", n=len(body["requests"])))

    def results(request):
        batch_no = int(request.url.path.split("/")[-2].split("_")[1])
        body = created[batch_no - 1]
        out = {}
        for item in body["requests"]:
            system = item["params"]["system"][0]["text"]
            folder = system.split("look at existing memory files in ")[1].split(".\n")[0]
            turn = len(item["params"]["messages"]) // 2  # 1 message: turn 0; 3 messages: turn 1 ...
            blocks, stop = turn_plan[turn](folder)
            out[item["custom_id"]] = P.message(blocks, stop_reason=stop, model="claude-sonnet-5-5",
                                               input_tokens=1000, output_tokens=100)
        return P.batch_results(out)

    api.post("/v1/messages/batches").mock(side_effect=create)
    api.get(url__regex=r"/v1/messages/batches/msgbatch_\d+$").mock(
        side_effect=status or (lambda request: httpx.Response(200, json=P.batch(request.url.path.split("/")[-1], "ended"))))
    api.get(url__regex=r"/v1/messages/batches/msgbatch_\d+/results$").mock(side_effect=results)
    return created


def test_batch_api_lockstep(api, tmp_path, isolated_home):
    from memdir.stages.extractor.batches_api import run_batch_api, state_path

    projects = _two_projects(tmp_path)
    memory = ("---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\n"
              "Deploys on Fridays.\n\n**Why:** the user said so\n**How to apply:** plan releases for Friday\n")
    plan = [
        lambda folder: ([P.tool_use("Glob", {"pattern": "*.md", "path": folder})], "tool_use"),
        lambda folder: ([P.tool_use("Write", {"file_path": f"{folder}/project_deploy_day.md", "content": memory})],
                        "tool_use"),
    ]
    created = _batches_routes(api, memory, plan)
    report = run_batch_api([tmp_path / "projects"], settings=Settings(engine="llm", max_attempts=1), poll=0)
    assert len(created) == 2  # turn 1 for both transcripts, then turn 2 for both: lockstep
    assert [len(b["requests"]) for b in created] == [2, 2]
    second = created[1]["requests"][0]["params"]
    assert second["messages"][1]["role"] == "assistant" and second["messages"][2]["content"][0]["type"] == "tool_result"
    for repo, _ in projects:
        folder = isolated_home / ".claude" / "projects" / sanitize(str(repo.resolve())) / "memory"
        assert (folder / "project_deploy_day.md").exists()
        assert state.load_cursor(folder, repo.name)["uuid"] == f"{repo.name}-a0"
    assert sum(r.saved for r in report.rows.values()) == 2 and not report.errors
    assert not state_path().exists()


def test_batch_api_resumes_the_batch_in_flight(api, tmp_path, isolated_home, monkeypatch):
    import memdir.stages.extractor.batches_api as B

    _two_projects(tmp_path)
    plan = [lambda folder: ([P.text("Nothing to save.")], "end_turn")]
    created = _batches_routes(api, "", plan)
    real_wait = B._wait
    calls = {"n": 0}

    def crash_once(client, batch_id, poll, settings):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt  # the process dies while the batch is being processed
        return real_wait(client, batch_id, poll, settings)

    monkeypatch.setattr(B, "_wait", crash_once)
    with pytest.raises(KeyboardInterrupt):
        B.run_batch_api([tmp_path / "projects"], settings=Settings(engine="llm", max_attempts=1), poll=0)
    assert json.loads(B.state_path().read_text())["batches"][0]["id"] == "msgbatch_1"
    report = B.run_batch_api([tmp_path / "projects"], settings=Settings(engine="llm", max_attempts=1), poll=0)
    assert len(created) == 1  # the in-flight batch was polled again, never resubmitted
    assert sum(r.windows for r in report.rows.values()) == 2 and not report.errors


def test_summary_counts_updates_apart_from_new_memories(tmp_path, isolated_home, monkeypatch):
    """An update (previous version kept) is counted as updated, not as a new saved memory."""
    from memdir.stages.extractor import batch, report as changes
    from memdir.stages.extractor.run import ExtractResult

    def extracted(window, memory_dir, **_):
        return ExtractResult("saved", saved=["feedback_a.md", "project_b.md"], changes=[
            changes.change("created", "feedback_a.md"),
            changes.change("updated", "project_b.md", ".memdir/history/project_b.md/v1.md"),
            changes.change("updated", "MEMORY.md", ".memdir/history/MEMORY.md/v1.md")])

    monkeypatch.setattr(batch, "extract_messages", extracted)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    projects = isolated_home / ".claude" / "projects"
    first = _transcript(projects / sanitize(str(repo)) / "s1.jsonl", str(repo), ["Remember that A."], "s1")
    result = run_batch([first], settings=Settings(engine="offline"), engine="offline")
    (row,) = result.rows.values()
    assert (row.saved, row.updated) == (1, 1)  # MEMORY.md's own change is not a memory
    header, line = summary_table(result, Settings(engine="offline")).splitlines()[:2]
    assert header.split()[4:6] == ["saved", "updated"] and line.split()[3:5] == ["1", "1"]


def test_a_dry_run_says_its_counts_were_not_written(tmp_path, isolated_home, cli):
    """`memdir batch --dry-run` on a real-shaped project printed "saved 3" and wrote nothing: true, but it read
    as done. The table says what the columns mean on a dry run."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    projects = isolated_home / ".claude" / "projects"
    _transcript(projects / sanitize(str(repo)) / "s1.jsonl", str(repo), ["Remember that we deploy on Mondays."], "s1")
    code, out, _ = cli("batch", "--engine", "offline", "--dry-run")
    folder = projects / sanitize(str(repo.resolve())) / "memory"
    assert code == 0 and "dry run: nothing was written" in out and not list(folder.glob("*_*.md"))
    code, out, _ = cli("batch", "--engine", "offline")
    assert code == 0 and "dry run" not in out and list(folder.glob("*_*.md"))


def test_progress_not_on_a_terminal_is_one_line_per_transcript(tmp_path, isolated_home, capsys):
    """Piped to a log (not a TTY), the progress line once repeated itself for every window: 248 lines for the
    44 real transcripts, the last one twice. One line per transcript finished, none repeated."""
    projects = isolated_home / ".claude" / "projects"
    for n in range(3):
        _transcript(projects / f"-p{n}" / f"s{n}.jsonl", f"/p{n}", [f"message {i} of a long session" for i in range(9)],
                    f"s{n}")
    run_batch(None, settings=Settings(engine="offline", extract_last_n=4), engine="offline")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[batch]")]
    assert [line.split()[2] for line in lines] == ["1/3", "2/3", "3/3"], lines


def test_a_negative_max_cost_is_one_line_not_a_run_that_stops_at_once(tmp_path):
    """`--max-cost -1` printed the summary table and "stopped: --max-cost -1.00 USD reached", exit 0."""
    from tests.conftest import run_memdir

    proc = run_memdir("batch", str(tmp_path), "--max-cost", "-1", "--engine", "offline")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert proc.stderr.strip() == "memdir: error: --max-cost must be 0 or more (USD), not -1.0"


def test_extract_names_the_project_a_session_from_another_one_belongs_to(tmp_path, isolated_home):
    """`memdir extract` of a session run in repo A, typed in repo B, saved A's memories in B's folder and said
    only "created X"; `memdir batch` would have filed them under A. It now says where they went and why."""
    from tests.conftest import run_memdir

    repo_a, repo_b = tmp_path / "repo-a", tmp_path / "repo-b"
    for repo in (repo_a, repo_b):
        (repo / ".git").mkdir(parents=True)
    session = _transcript(tmp_path / "s1.jsonl", str(repo_a), ["Remember that repo A deploys on Mondays."], "s1")
    folder_a = isolated_home / ".claude" / "projects" / sanitize(str(repo_a.resolve())) / "memory"
    folder_b = isolated_home / ".claude" / "projects" / sanitize(str(repo_b.resolve())) / "memory"
    proc = run_memdir("extract", str(session), "--engine", "offline", cwd=repo_b)
    assert proc.returncode == 0 and "created" in proc.stdout, proc.stderr
    assert f"this session ran in {repo_a.resolve()}" in proc.stderr and str(folder_a) in proc.stderr, proc.stderr
    assert str(folder_b) in proc.stderr
    assert run_memdir("extract", str(session), "--engine", "offline", "--dir", str(folder_a), cwd=repo_b).stderr == ""


def test_one_unreadable_transcript_is_named_and_the_others_still_run(tmp_path, isolated_home):
    """A JSON-list transcript cut short (`[{"a":`) stopped `memdir batch` over a whole folder with one line, every
    other transcript unread, at every run: it is named as an error and skipped, and the rest are extracted."""
    projects = isolated_home / ".claude" / "projects"
    good = _transcript(projects / "-p" / "s1.jsonl", "/p", ["Remember that we deploy on Mondays."], "s1")
    bad = projects / "-p" / "s2.jsonl"
    bad.write_text('[{"role": "user", "content": ')
    result = run_batch(None, settings=Settings(engine="offline"), engine="offline", dry_run=True)
    assert sum(row.transcripts for row in result.rows.values()) == 1 and good.exists()
    assert len(result.errors) == 1 and result.errors[0].startswith(f"{bad}: not valid JSON")
    assert f"error: {bad}: not valid JSON" in summary_table(result, Settings(engine="offline"))


def test_a_transcript_named_through_a_symlink_is_one_line_not_a_silent_empty_run(tmp_path, isolated_home, cli):
    """`memdir batch link.jsonl`: symlinks are never read as transcripts, so it ran nothing and printed an empty
    table with exit 0, as if the transcript held nothing worth keeping."""
    real = _transcript(tmp_path / "real" / "s1.jsonl", "/p", ["Remember that we deploy on Mondays."], "s1")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    code, out, err = cli("batch", "--engine", "offline", "--dry-run", str(link))
    assert code == 2 and err.count("\n") == 1 and f"{link}: a symlink" in err and "pass the file" in err
    folder = tmp_path / "folder-link"
    folder.symlink_to(real.parent, target_is_directory=True)  # a symlinked projects folder (dotfiles) still runs
    code, out, err = cli("batch", "--engine", "offline", "--dry-run", str(folder))
    assert code == 0 and "dry run" in out, err
