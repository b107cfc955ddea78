"""memdir's hooks inside the real Claude Code (pinned npm CLI) against the scripted loopback API.

Each test asserts on what the model actually receives (the requests the fake API logged) and on
what lands on disk. `claude -p` runs are few on purpose (each costs ~3-6 s); see README "Tests".
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memdir import constants as C
from tests.realclient import harness as H, loopback_api as A

FEEDBACK = """---
name: pnpm-not-npm
description: Install and run scripts with pnpm, never npm, in this repository
metadata:
  type: feedback
---
Use pnpm for every install and script in this repository; see also [[lockfile-policy]].

**Why:** the lockfile is pnpm-lock.yaml and npm would write a second one.
**How to apply:** run `pnpm install` / `pnpm test`, never `npm ...`.
"""
PROJECT = """---
name: release-freeze
description: Release freeze until the payments audit is done
metadata:
  type: project
---
No releases until the payments audit is signed off (2026-12-04).

**Why:** the auditors need a stable build.
**How to apply:** do not tag or publish releases before 2026-12-04.
"""
INDEX = ("- [pnpm-not-npm](feedback_pnpm.md) — Install and run scripts with pnpm, never npm\n"
         "- [release-freeze](project_freeze.md) — Release freeze until the payments audit is done\n")


def _seed(sandbox: H.Sandbox) -> Path:
    memory = sandbox.memory_dir
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "feedback_pnpm.md").write_text(FEEDBACK)
    (memory / "project_freeze.md").write_text(PROJECT)
    (memory / "MEMORY.md").write_text(INDEX)
    return memory


def hook_contexts(sandbox: H.Sandbox) -> dict[str, list[str]]:
    """{event: [additionalContext ...]} as Claude Code recorded them (attachments hook_additional_context)."""
    found: dict[str, list[str]] = {}
    for transcript in sandbox.transcripts():
        for line in transcript.read_text().splitlines():
            item = json.loads(line)
            attachment = item.get("attachment") or {}
            if item.get("type") == "attachment" and attachment.get("type") == "hook_additional_context":
                found.setdefault(attachment.get("hookEvent"), []).extend(attachment.get("content") or [])
    return found


def wait_for_stop_worker(memory: Path, timeout: float = 90) -> str:
    """The Stop hook's worker is detached: poll (bounded) until it logged its outcome; return that line."""
    log = memory / C.STATE_DIRNAME / "hook.log"

    def done():
        lines = log.read_text().splitlines() if log.exists() else []
        return next((line for line in lines if " stop: " in line), None)

    def workers_gone() -> bool:  # after extraction it still journals decisions, commits history, packs
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if b"memdir.entry.worker" in cmdline.read_bytes():
                    return False
            except OSError:
                continue
        return True

    try:
        line = H.wait_for(done, timeout=timeout)
        H.wait_for(workers_gone, timeout=timeout)
        return line
    except TimeoutError:
        logs = [log, memory.parents[2] / "memdir" / "hook.log"]
        shown = "\n".join(f"{p}:\n{p.read_text()[-2000:]}" for p in logs if p.exists()) or "no hook log"
        raise AssertionError(f"the Stop worker logged nothing within {timeout:.0f}s\n{shown}") from None


def test_recalled_memory_arrives_once_readable_and_memory_md_once(sandbox, scripted_api, claude):
    H.install_memdir(sandbox)
    memory = _seed(sandbox)
    api = scripted_api(A.Script(main=[A.text("Use pnpm install.")]))
    claude(sandbox, api, "how should I install the dependencies for this repository?")
    (request,) = api.main_requests()
    everything = request.all_text()
    # The relevant memory reached the model exactly once, readable, with its type, age and path.
    assert everything.count("Use pnpm for every install and script in this repository") == 1
    assert "UserPromptSubmit hook additional context: Saved memories that may help" in everything
    (recalled,) = hook_contexts(sandbox)["UserPromptSubmit"]
    assert f"Memory (feedback, saved today): {memory / 'feedback_pnpm.md'}" in recalled
    assert "**How to apply:** run `pnpm install`" in recalled and "[[lockfile-policy]]" in recalled
    assert "&lt;" not in everything.split("UserPromptSubmit hook additional context:")[1].split("\n\nToday")[0]
    assert "system-reminder" not in recalled  # memdir adds no tags of its own (Claude Code escapes them)
    # MEMORY.md: Claude Code's auto memory loads it once; memdir neither loads it again nor repeats
    # the native memory instructions.
    assert everything.count("](feedback_pnpm.md) — ") == 1 and everything.count("](project_freeze.md) — ") == 1
    assert "(user's auto-memory, persists across conversations)" in everything
    (started,) = hook_contexts(sandbox)["SessionStart"]
    assert "MEMORY.md" not in started and "## Kinds of memory" not in started and len(started) < 600
    assert not api.memdir_requests()  # offline engines: memdir itself sent nothing


RULE = "Never use npm in this repo, use pnpm"
SAVED = f"""---
name: never-use-npm-in-this-repo-use
description: {RULE}
metadata:
  type: feedback
---

{RULE}; the reason is the lockfile

**Why:** the lockfile is pnpm-lock.yaml and a second one from npm breaks installs
**How to apply:** whenever dependencies are installed or scripts are run
"""


def _sentences(text: str) -> list[str]:
    """The memory's sentences (frontmatter, labels and bits under three words dropped)."""
    import re

    body = text.split("---", 2)[2].replace("**Why:**", "\n").replace("**How to apply:**", "\n")
    return [s.strip() for s in re.split(r"[.;!?\n]", body) if len(s.split()) >= 3]


def test_a_recalled_memory_is_said_at_most_twice_in_the_whole_request(sandbox, scripted_api, claude):
    """Issue 21: the rule once reached the model four times (MEMORY.md, a decision line, the description,
    the body). At most twice now: Claude Code's index line and memdir's recall."""
    from memdir.decisions import Decision, append
    from memdir.paths import decisions_dir

    H.install_memdir(sandbox)
    memory = sandbox.memory_dir
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "feedback_never_use_npm_in_this_repo_use.md").write_text(SAVED)  # as the Stop worker saved it
    (memory / "MEMORY.md").write_text(f"- [never-use-npm-in-this-repo-use](feedback_never_use_npm_in_this_repo_use.md)"
                                      f" — {RULE}\n")
    append(decisions_dir(memory, sandbox.repo, compat=False),
           [Decision(kind="preference", what=RULE, why="the lockfile", entities=["npm", "pnpm"], confidence=0.9)])
    api = scripted_api(A.Script(main=[A.text("Use pnpm install.")]))
    claude(sandbox, api, "how do I install dependencies with pnpm")
    (request,) = api.main_requests()
    everything = request.all_text()
    counts = {sentence: everything.count(sentence) for sentence in _sentences(SAVED)}
    assert counts[RULE] == 2, counts  # Claude Code's index line, memdir's recall
    assert max(counts.values()) <= 2, counts
    assert "Recent Project Decisions" not in everything  # the decision says what the recalled memory says


def test_memdir_registered_twice_still_says_each_thing_once(sandbox, scripted_api, claude):
    """memdir's SessionStart and prompt hooks in the user's and the project's settings with different commands:
    Claude Code runs both of each (it merges only identical commands). The session's start reaches the model
    once, and a recalled memory's sentences at most twice, as with one registration."""
    H.install_memdir(sandbox)
    user = json.loads((sandbox.config_home / "settings.json").read_text())
    twins = {event: [{"hooks": [{**hook, "command": f"env {hook['command']}"}  # another command, the same hook
                                for group in user["hooks"][event] for hook in group["hooks"]]}]
             for event in ("SessionStart", "UserPromptSubmit")}
    (sandbox.repo / ".claude").mkdir()
    (sandbox.repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": twins}))
    memory = sandbox.memory_dir
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "feedback_never_use_npm_in_this_repo_use.md").write_text(SAVED)
    (memory / "MEMORY.md").write_text(f"- [never-use-npm-in-this-repo-use](feedback_never_use_npm_in_this_repo_use.md)"
                                      f" — {RULE}\n")
    api = scripted_api(A.Script(main=[A.text("Use pnpm install.")]))
    claude(sandbox, api, "how do I install dependencies with pnpm")
    (request,) = api.main_requests()
    everything = request.all_text()
    ran = (memory / C.STATE_DIRNAME / "hook.log").read_text()
    assert "nothing said here" in ran, ran  # both SessionStart hooks ran: the second said nothing
    started = hook_contexts(sandbox)["SessionStart"]
    assert len(started) == 1 and everything.count(started[0].strip()) == 1, started
    counts = {sentence: everything.count(sentence) for sentence in _sentences(SAVED)}
    assert counts[RULE] == 2 and max(counts.values()) <= 2, counts


def test_hook_output_cut_off_is_where_constants_say(sandbox, scripted_api, claude):
    """C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT passes whole; one more character is replaced by a preview."""
    import sys

    size_file = sandbox.home / "size"
    hook = sandbox.home / "big_hook.py"
    hook.write_text(
        "import json, sys\nsys.stdin.read()\nn = int(open(%r).read())\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', "
        "'additionalContext': ('MARK' + 'a' * n)[:n]}}))\n" % str(size_file)
    )
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}]}}
    (sandbox.config_home / "settings.json").write_text(json.dumps(settings))
    seen = {}
    for size in (C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT, C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT + 1):
        size_file.write_text(str(size))
        api = scripted_api()
        claude(sandbox, api, "hello there, a prompt")
        text = api.main_requests()[0].all_text()
        seen[size] = ("MARK" + "a" * (size - 4) in text, "Output too large" in text and "<persisted-output>" in text)
    assert seen[C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT] == (True, False)
    assert seen[C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT + 1] == (False, True)
    assert C.HOOK_OUTPUT_BUDGET <= 0.85 * C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT


def test_session_start_and_prompt_stay_under_the_limit_on_a_real_folder(sandbox, scripted_api, claude, realdata):
    """Native memory off, memdir on: memdir loads instructions + MEMORY.md and recalls, all under the limit."""
    H.install_memdir(sandbox)
    memory = _real_folder(sandbox, realdata)
    api = scripted_api()
    prompt = "what did we decide about the weekly rhythm, the freshness gate and the session workflow?"
    claude(sandbox, api, prompt, env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    everything = api.main_requests()[0].all_text()
    assert "Output too large" not in everything and "persisted-output" not in everything
    contexts = hook_contexts(sandbox)
    (started,) = contexts["SessionStart"]
    (recalled,) = contexts["UserPromptSubmit"]
    for text in (started, recalled):
        assert len(text.encode("utf-16-le")) // 2 <= C.HOOK_OUTPUT_BUDGET < C.CLAUDE_CODE_HOOK_OUTPUT_LIMIT
    assert "## MEMORY.md" in started and "(user's auto-memory" not in everything  # memdir loads it, once
    first_entry = next(line for line in (memory / "MEMORY.md").read_text().splitlines() if line.startswith("- ["))
    assert everything.count(first_entry) == 1
    assert recalled.startswith("Saved memories that may help") and "saved " in recalled


def _real_folder(sandbox: H.Sandbox, realdata: Path) -> Path:
    """The real 55-file folder as a user has it: its memory files, writable. Not copytree: the shared copy
    is read-only and holds a `.memdir/` (sessions, caches, a hook log) another run left behind."""
    memory = sandbox.memory_dir
    memory.mkdir(parents=True)
    for source in sorted((realdata / "memory-folders" / "application-pipeline").glob("*.md")):
        (memory / source.name).write_bytes(source.read_bytes())
    return memory


def _memory_sentences(text: str) -> list[str]:
    """A memory file's sentences of three words or more: its description's and its body's."""
    import re

    _, front, body = text.split("---", 2)
    described = re.search(r"^description:[ \t]*(.*)$", front, re.M)
    words = (described.group(1).strip("'\" ") if described else "") + "\n" + body
    words = words.replace("**Why:**", "\n").replace("**How to apply:**", "\n")
    return [s.strip() for s in re.split(r"[.;!?\n]", words) if len(s.split()) >= 3]


def test_issue_21_holds_on_the_real_folder(tmp_path, scripted_api, claude, realdata):
    """Issue 21 on the real 55-file folder, native auto memory on: no sentence of a recalled memory reaches
    the model more than twice, and a prompt about nothing in the folder gets no decisions block."""
    from memdir.decisions import Decision, append
    from memdir.paths import decisions_dir

    rule = "Cover letters stay under one page"
    prompts = {"what are the rules for cover letters?": True, "fix the typo in the README": False}
    for n, (prompt, related) in enumerate(prompts.items()):
        sandbox = H.make_sandbox(tmp_path / str(n))
        H.install_memdir(sandbox)
        memory = _real_folder(sandbox, realdata)
        append(decisions_dir(memory, sandbox.repo, compat=False),
               [Decision(kind="preference", what=rule, why="recruiters skim",
                         entities=["cover letter"], confidence=0.9)])
        api = scripted_api(A.Script(main=[A.text("Noted.")]))
        claude(sandbox, api, prompt)
        everything = api.main_requests()[0].all_text()
        assert "(user's auto-memory" in everything  # Claude Code loaded MEMORY.md: the index line is one of the two
        recalled = "\n".join(hook_contexts(sandbox).get("UserPromptSubmit", []))
        paths = [Path(p) for p in re.findall(r"^Memory \([^)]*\): (\S+\.md)$", recalled, re.M)]
        assert bool(paths) == related, recalled[:500]
        for path in paths:
            counts = {s: everything.count(s) for s in _memory_sentences(path.read_text())}
            assert max(counts.values()) <= 2, (path.name, {s: c for s, c in counts.items() if c > 2})
        if not related:  # (a related one gets it only in the room five long real memories leave: here none)
            assert "Recent Project Decisions" not in everything and rule not in everything, prompt


def test_a_correction_is_saved_in_claude_codes_form_and_loaded_next_session(sandbox, scripted_api, claude):
    H.install_memdir(sandbox)
    memory = sandbox.memory_dir
    api = scripted_api(A.Script(main=[A.text("Understood: I will use pnpm from now on.")]))
    claude(sandbox, api, "No, don't use npm in this repo, use pnpm instead of npm because the lockfile is pnpm's.")
    outcome = wait_for_stop_worker(memory)
    assert " created feedback_" in outcome, outcome  # hook.log says what changed (issue 10)
    (saved,) = [p for p in memory.glob("feedback_*.md")]
    text = saved.read_text()
    # The form Claude Code 2.1.x writes: kebab-case name, type under metadata, Why/How lines.
    assert text.startswith("---\nname: ") and "\nmetadata:\n  node_type: memory\n  type: feedback\n  modified: " in text
    name = text.split("\n")[1].removeprefix("name: ")
    assert name == name.lower() and " " not in name
    assert "**Why:**" in text and "**How to apply:**" in text
    assert f"]({saved.name}) — " in (memory / "MEMORY.md").read_text()
    doctor = H.memdir(sandbox, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    # The next session: Claude Code loads the index itself, memdir recalls the memory for a relevant prompt.
    api.clear()
    claude(sandbox, api, "install the dependencies and run the tests with npm please")
    everything = api.main_requests()[0].all_text()
    assert f"]({saved.name}) — " in everything
    assert f"saved today): {saved}" in everything and "use pnpm instead of npm" in everything.lower()
    # The "Memory saved ..." notice went to the user (systemMessage), not into the model's context.
    assert "Memory saved" not in everything
    notices = [json.loads(line)["attachment"]["content"] for t in sandbox.transcripts() for line in t.read_text().splitlines()
               if '"hook_system_message"' in line]
    assert notices == [f"Memory saved since last session: {saved}"]


def test_a_memory_the_main_agent_wrote_is_not_extracted_twice(sandbox, scripted_api, claude):
    H.install_memdir(sandbox)
    memory = sandbox.memory_dir
    own = memory / "feedback_no_emoji.md"
    content = ("---\nname: no-emoji\ndescription: No emoji in commit messages\nmetadata:\n  type: feedback\n---\n"
               "Never put emoji in commit messages.\n\n**Why:** the changelog tool chokes on them.\n"
               "**How to apply:** plain ASCII commit subjects.\n")
    index = "- [No emoji in commits](feedback_no_emoji.md) — No emoji in commit messages\n"
    api = scripted_api(A.Script(main=[A.tool_use("Write", {"file_path": str(own), "content": content}),
                                      A.tool_use("Write", {"file_path": str(memory / "MEMORY.md"), "content": index}),
                                      A.text("Saved that to memory.")]))
    claude(sandbox, api, "Don't use emoji in commit messages, because the changelog tool chokes on them. Remember that.")
    written = own.read_text()  # the real CLI wrote it (memory writes need no permission) ...
    # ... and stamped it: Claude Code 2.1.328 adds node_type, originSessionId and modified under metadata.
    assert "metadata:\n  node_type: memory\n  type: feedback\n  originSessionId: " in written
    assert written.endswith("---\n\nNever put emoji in commit messages.\n\n**Why:** the changelog tool chokes on them.\n"
                            "**How to apply:** plain ASCII commit subjects.\n")
    outcome = wait_for_stop_worker(memory)
    assert "the main agent already wrote to the memory folder" in outcome, outcome
    assert sorted(p.name for p in memory.glob("*.md") if p.name != "MEMORY.md") == ["feedback_no_emoji.md"]
    listing = H.memdir(sandbox, "list")
    assert listing.returncode == 0 and listing.stdout.startswith("feedback  feedback_no_emoji.md")
    doctor = H.memdir(sandbox, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr  # healthy on a folder Claude Code wrote


def test_claude_code_reads_project_settings_in_the_folder_it_starts_in_as_memdir_does(sandbox, scripted_api, claude,
                                                                                      tmp_path):
    """Started in a subfolder of the repository, Claude Code runs that folder's `.claude/settings.json` hooks and
    leaves the root's unread, `autoMemoryEnabled: false` included; memdir's enablement reads the same file."""
    from memdir.enablement import memory_enabled

    sub = sandbox.repo / "sub"
    fired = tmp_path / "fired.txt"
    for folder, tag in ((sandbox.repo, "root"), (sub, "sub")):
        (folder / ".claude").mkdir(parents=True)
        hook = {"type": "command", "command": f"echo {tag} >> {fired}"}
        settings = {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}, "autoMemoryEnabled": tag == "sub"}
        (folder / ".claude" / "settings.json").write_text(json.dumps(settings))
    state = json.loads((sandbox.home / ".claude.json").read_text())
    state["projects"][str(sub.resolve())] = {"hasTrustDialogAccepted": True, "allowedTools": []}
    (sandbox.home / ".claude.json").write_text(json.dumps(state))
    api = scripted_api(A.Script(main=[A.text("Hello.")]))
    claude(H.sandbox_of(sandbox.home, sub), api, "hello")
    (request,) = api.main_requests()
    assert fired.read_text().split() == ["sub"]
    assert "# Memory" in request.all_text() and "persistent file-based memory" in request.all_text()
    assert memory_enabled(str(sub), env={"HOME": str(sandbox.home)}).enabled is True
    assert memory_enabled(str(sandbox.repo), env={"HOME": str(sandbox.home)}).enabled is False


def test_an_empty_disable_variable_is_unset_for_claude_code_as_for_memdir(sandbox, scripted_api, claude, monkeypatch):
    """CLAUDE_CODE_DISABLE_AUTO_MEMORY= (set, empty) does not force native memory on over `autoMemoryEnabled: false`:
    Claude Code leaves it off, and so must memdir's reading of it (else neither would give the memory instructions)."""
    from memdir.enablement import memory_enabled

    (sandbox.home / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    api = scripted_api(A.Script(main=[A.text("Hello.")]))
    claude(sandbox, api, "hello", env={C.DISABLE_ENV: ""})
    (request,) = api.main_requests()
    assert "persistent file-based memory" not in request.all_text()
    monkeypatch.setenv("HOME", str(sandbox.home))
    assert memory_enabled(str(sandbox.repo), env={**os.environ, C.DISABLE_ENV: ""}).enabled is False
