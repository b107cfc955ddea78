"""Malformed transcripts, hook payloads, settings files and CLI arguments: one clear line or a quiet
skip, never a traceback, never a hang, never a memory folder created for a payload that names no project."""

from __future__ import annotations

import io
import json
import os

import pytest

from tests.hostile.conftest import count_lost, one_clear_line, run_cli, run_inproc, snapshot


def _line(content, **extra):
    base = {"type": "user", "uuid": "u-1", "sessionId": "s", "cwd": "/tmp", "timestamp": "2026-03-02T10:00:00Z",
            "message": {"role": "user", "content": content}}
    base.update(extra)
    return json.dumps(base)


DEEP = "[" * 1000 + "]" * 1000
DEEPER = '{"type": "user", "message": ' + "[" * 50_000 + "]" * 50_000 + "}"
MALFORMED_LINES = {
    "content-int": _line(5),
    "content-null": _line(None),
    "content-unknown-blocks": _line([{"type": "weird"}, 3, None, {"type": "text", "text": 5}, {"type": "text"},
                                     {"type": "tool_result", "content": {"a": 1}}, {"type": "image"}, []]),
    "timestamp-int": _line("Remember that I prefer tabs.", timestamp=1_700_000_000),
    "timestamp-garbage": _line("Remember that deploys are on Friday.", timestamp={"x": 1}),
    "tool-input-string": json.dumps({"type": "assistant", "uuid": "a-1", "message": {"role": "assistant", "id": "m",
                                     "content": [{"type": "tool_use", "name": "Write", "input": "file_path=/etc/x"},
                                                 {"type": "tool_use", "name": ["Edit"], "input": None},
                                                 {"type": "tool_use", "name": "Edit", "input": {"file_path": 3}}]}}),
    "unhashable-ids": _line("Remember that I use vim.", uuid=["a"], sessionId={"b": 1},
                            message={"role": "user", "content": "hi there", "id": {"c": 2}}),
    "message-not-object": json.dumps({"type": "user", "message": "just a string"}),
    "role-odd": json.dumps({"type": "assistant", "message": {"role": ["user"], "content": "x"}}),
    "type-unhashable": json.dumps({"type": ["user"], "message": {"role": "user", "content": "x"}}),
    "cwd-odd": _line("Remember that I use vim.", cwd={"x": "/"}),
    "queued-command-odd": json.dumps({"type": "attachment", "uuid": "q-1", "attachment": {
        "type": "queued_command", "prompt": [{"type": "text", "text": 5}, 3, {"type": "text"}]}}),
    "tool-result-odd": _line([{"type": "tool_result", "content": [{"type": "text", "text": 5}, 7],
                               "is_error": True}]),
    "parent-unhashable": _line("Remember that I use vim.", parentUuid=["x"]),
    "nested-1000": DEEP,
    "nested-50000": DEEPER,
    "not-json": "{{{ not json",
    "binary": "\udcff\udcfe garbage",
    "scalar": "42",
    "huge-line": _line("x " * 100_000),
}


@pytest.fixture(params=sorted(MALFORMED_LINES))
def transcript(request, hostile_root):
    folder = hostile_root / "inputs" / "transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{request.param}.jsonl"
    good = _line("Remember that the user prefers short answers.", uuid="u-0")
    raw = MALFORMED_LINES[request.param]
    path.write_bytes((good + "\n" + raw + "\n" + good.replace("u-0", "u-2") + "\n").encode("utf-8", "surrogateescape"))
    return path


def test_malformed_transcripts_never_crash(transcript, memory, tally):
    from memdir.errors import MemdirError
    from memdir.stages.extractor.run import extract_transcript
    from memdir.transcript import read_transcript

    for call in (lambda: read_transcript(transcript), lambda: read_transcript(transcript, last_n=2),
                 lambda: read_transcript(transcript, after_uuid="u-0"),
                 lambda: extract_transcript(transcript, memory, session_id="s", engine="offline")):
        tally.tried += 1
        try:
            call()
        except MemdirError:
            pass
        except Exception as exc:  # noqa: BLE001
            tally.tracebacks += 1
            tally.notes.append(f"traceback: transcript {transcript.name}: {type(exc).__name__}: {exc}"[:200])
            raise
    code, _, err = run_inproc(tally, "--dir", str(memory), "extract", str(transcript), "--engine", "offline")
    assert code in (0, 1) or one_clear_line(code, err), err
    code, _, err = run_inproc(tally, "batch", str(transcript), "--engine", "offline")
    assert code in (0, 1) or one_clear_line(code, err), err


def test_json_list_transcripts(hostile_root, memory, tally):
    folder = hostile_root / "inputs" / "lists"
    folder.mkdir(parents=True, exist_ok=True)
    for i, body in enumerate(['[1, null, "x", {"role": "user", "content": 5}, {"role": ["user"]}]', "[" * 5000,
                              '[{"role": "user", "content": [{"type": "text", "text": null}]}]', "[]", "[{}]"]):
        path = folder / f"list{i}.json"
        path.write_text(body)
        code, _, err = run_inproc(tally, "--dir", str(memory), "extract", str(path), "--engine", "offline")
        assert code in (0, 1) or one_clear_line(code, err), err


def test_transcript_that_is_a_fifo_or_folder(hostile_root, memory, tally):
    folder = hostile_root / "inputs" / "special"
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / "pipe.jsonl"
    if not fifo.exists():
        os.mkfifo(fifo)
    (folder / "dir.jsonl").mkdir(exist_ok=True)
    for target in (fifo, folder / "dir.jsonl"):
        proc = run_cli(tally, "--dir", str(memory), "extract", str(target), "--engine", "offline", timeout=20)
        assert one_clear_line(proc.returncode, proc.stderr), proc.stderr
    proc = run_cli(tally, "batch", str(folder), "--engine", "offline", timeout=20)  # skips both, no hang
    assert proc.returncode == 0, proc.stderr


def test_batch_never_reads_memdir_state_as_transcripts(memory, tally, hostile_home):
    projects = hostile_home / ".claude" / "projects" / "-p"
    (projects / "memory" / ".memdir").mkdir(parents=True)
    (projects / "memory" / ".memdir" / "runs.jsonl").write_text(_line("Remember that this is a run log.") + "\n")
    from memdir.stages.extractor.batch import discover

    tally.tried += 1
    assert discover([hostile_home / ".claude" / "projects"]) == []


# --- hook payloads -------------------------------------------------------------------------------
PAYLOADS = {
    "cwd-missing": {"session_id": "s", "prompt": "which editor do I use", "source": "startup"},
    "cwd-root": {"session_id": "s", "cwd": "/", "prompt": "which editor do I use", "source": "startup"},
    "cwd-file": {"session_id": "s", "cwd": "{file}", "prompt": "which editor do I use", "source": "startup"},
    "cwd-relative": {"session_id": "s", "cwd": "some/dir", "prompt": "which editor do I use"},
    "cwd-nul": {"session_id": "s", "cwd": "/tmp\x00/x", "prompt": "which editor do I use"},
    "cwd-missing-dir": {"session_id": "s", "cwd": "/nonexistent/for/sure", "prompt": "which editor do I use"},
    "cwd-int": {"session_id": "s", "cwd": 5, "prompt": "which editor do I use"},
    "transcript-odd": {"session_id": "s", "cwd": "/", "transcript_path": "/dev/zero", "prompt": "a b"},
}


@pytest.mark.parametrize("event", ["session-start", "prompt", "stop"])
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_hook_payloads_never_create_a_memory_folder(name, event, hostile_home, tally, monkeypatch, hostile_root):
    from memdir.entry.hooks import main

    a_file = hostile_root / "inputs" / "a-file"
    a_file.parent.mkdir(parents=True, exist_ok=True)
    a_file.write_text("x")
    payload = json.dumps({k: (str(a_file) if v == "{file}" else v) for k, v in PAYLOADS[name].items()})
    monkeypatch.chdir(hostile_home)
    tally.tried += 1
    out = io.StringIO()
    try:
        code = main([event], stdin=io.StringIO(payload), stdout=out)
    except Exception as exc:  # noqa: BLE001
        tally.tracebacks += 1
        raise AssertionError(f"hook {event} raised {exc!r}") from None
    assert code == 0
    projects = hostile_home / ".claude" / "projects"
    assert not projects.exists() or not any(projects.rglob("memory")), list(projects.rglob("*"))


@pytest.mark.parametrize("stdin", ["", "null", "[]", "5", "{", '{"cwd": ["x"]}', '{"prompt": 3}', "\x00"])
def test_hook_stdin_garbage(stdin, tally):
    from memdir.entry.hooks import main

    for event in ("session-start", "prompt", "stop"):
        tally.tried += 1
        assert main([event], stdin=io.StringIO(stdin), stdout=io.StringIO()) == 0


# --- settings files --------------------------------------------------------------------------------
SETTINGS = {
    "hooks-null": '{"hooks": null}', "hooks-int": '{"hooks": 5}', "hooks-list": '{"hooks": []}',
    "hooks-string": '{"hooks": "x"}', "event-int": '{"hooks": {"Stop": 3}}',
    "groups-odd": '{"hooks": {"Stop": [3, {"hooks": 7}, {"hooks": [1, null, {"command": 5}]}, null]}}',
    "top-list": "[1, 2]", "top-null": "null", "not-json": "{", "empty": "", "bom": "\ufeff{}",
    "deep": "[" * 100_000, "binary": "\udcff\udcfe\x00",
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_install_and_uninstall_on_odd_settings(name, hostile_home, tally):
    settings = hostile_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_bytes(SETTINGS[name].encode("utf-8", "surrogateescape"))
    original = settings.read_bytes()
    for command in ("install", "uninstall", "install", "uninstall"):
        code, out, err = run_inproc(tally, command)
        assert code == 0 or one_clear_line(code, err), (name, command, err)
        if code != 0:
            assert settings.read_bytes() == original  # refused: untouched
    # Nothing lost: the file is as it was, or (install then uninstall of an empty file) absent or
    # "{}" with a backup holding the original bytes.
    final = settings.read_bytes() if settings.exists() else b""
    backups = [p.read_bytes() for p in settings.parent.glob("settings.json.bak-*")]
    if final != original and original not in backups and original.strip(b"\xef\xbb\xbf \n") not in (b"", b"{}"):
        count_lost(tally, {"settings.json": original}, {})
    assert tally.bytes_lost == 0


@pytest.mark.parametrize("shape", ["directory", "fifo", "dangling-link"])
def test_settings_that_are_not_files(shape, hostile_home, tally):
    settings = hostile_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    if shape == "directory":
        settings.mkdir()
    elif shape == "fifo":
        os.mkfifo(settings)
    else:
        settings.symlink_to(hostile_home / "missing" / "settings.json")
    proc = run_cli(tally, "install", timeout=20)
    assert one_clear_line(proc.returncode, proc.stderr), proc.stderr


def test_symlinked_settings_are_updated_at_their_target(hostile_home, hostile_root, tally):
    dotfiles = hostile_root / "inputs" / "dotfiles"
    dotfiles.mkdir(parents=True, exist_ok=True)
    target = dotfiles / "settings.json"
    target.write_text('{"model": "x"}\n')
    settings = hostile_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.symlink_to(target)
    assert run_inproc(tally, "install")[0] == 0
    assert settings.is_symlink() and "memdir" in target.read_text()
    assert run_inproc(tally, "uninstall")[0] == 0
    assert settings.is_symlink() and target.read_text() == '{"model": "x"}\n'


def test_corrupt_backup_is_never_restored(hostile_home, tally):
    settings = hostile_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"model": "x"}\n')
    assert run_inproc(tally, "install")[0] == 0
    (settings.parent / "settings.json.memdir-original").write_text("garbage {")
    code, _, err = run_inproc(tally, "uninstall")
    assert code == 0, err
    data = json.loads(settings.read_text())
    assert data["model"] == "x" and "memdir" not in settings.read_text()


# --- CLI arguments the hostile pass crashed on -----------------------------------------------------
def test_cli_tracebacks_from_the_hostile_pass(memory, tally, hostile_root, monkeypatch):
    (memory / "user_latin1.md").write_bytes(b"---\nname: Latin\ndescription: d\ntype: user\n---\ncaf\xe9\n")
    a_file = hostile_root / "inputs" / "plain-file"
    a_file.parent.mkdir(parents=True, exist_ok=True)
    a_file.write_text("x")
    transcript = hostile_root / "inputs" / "ok.json"
    transcript.write_text('[{"role": "user", "content": "Remember that I use vim."}]')
    d = ("--dir", str(memory))
    before = snapshot(memory)
    cases = [
        (*d, "remember", "x y", "--type", "user", "--name", "n" * 101),
        (*d, "remember", "x y", "--type", "user", "--description", "d" * 301),
        (*d, "remember", "x y", "--type", "user", "--name", ""),
        (*d, "remember", "x y", "--type", "nonsense"),
        ("--dir", str(a_file), "list"), ("--dir", str(a_file), "remember", "x y", "--type", "user"),
        ("--cwd", str(a_file.parent), "--dir", a_file.name, "list"),  # relative: read from --cwd, still a file
        ("--dir", "/", "list"), ("--dir", "/tmp\x00x", "list"), ("--dir", "x\x00y", "list"), ("--dir", "", "list"),
        (*d, "show", "latin1"), (*d, "show", "../../etc/passwd"), (*d, "show", "\x00"),
        ("batch", str(transcript), "--last", "0"), ("batch", str(transcript), "--last", "-3"),
        (*d, "extract", str(transcript), "--last", "0"), ("batch", str(transcript), "--since", "yesterday"),
        (*d, "forget", "nothing-like-this"), (*d, "list", "--type", "x"), (*d, "recall", ""),
    ]
    for argv in cases:
        code, _, err = run_inproc(tally, *argv)
        assert one_clear_line(code, err) or (code == 0 and argv[-1] == ""), (argv, code, err)
    for value in ("inf", "nan", "-inf", "1e999", "abc", "-1", "0", "2.5"):
        monkeypatch.setenv("MEMDIR_EXTRACT_LAST_N", value)
        code, _, err = run_inproc(tally, *d, "extract", str(transcript), "--engine", "offline")
        assert one_clear_line(code, err), (value, code, err)
    monkeypatch.delenv("MEMDIR_EXTRACT_LAST_N")
    assert count_lost(tally, before, snapshot(memory)) == 0


@pytest.mark.parametrize("link", [".claude", ".claude/agent-memory", ".claude/agent-memory/reviewer"])
def test_agent_memory_inside_a_repo_is_never_reached_through_a_symlink(link, hostile_home, outside, tally):
    """A hostile repository could commit `.claude/agent-memory` as a symlink to ~/.ssh."""
    repo = hostile_home / "repo"
    (repo / ".git").mkdir(parents=True)
    target = repo / link
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside, target_is_directory=True)
    transcript = hostile_home / "t.json"
    transcript.write_text('[{"role": "user", "content": "Remember that reviews focus on naming."}]')
    before = snapshot(outside)
    for argv in (("list",), ("recall", "how should reviews look"), ("extract", str(transcript), "--engine", "offline")):
        code, out, err = run_inproc(tally, "--cwd", str(repo), argv[0], "--agent", "reviewer", *argv[1:])
        assert one_clear_line(code, err) and "symlink" in err, (argv, code, err)
    assert count_lost(tally, before, snapshot(outside)) == 0 and snapshot(outside).keys() == before.keys()


@pytest.mark.parametrize("shape", ["dev-zero", "fifo", "huge"])
def test_a_repos_settings_file_cannot_hang_a_hook(shape, hostile_home, tally):
    """`.claude/settings.json` comes with the repository: as a link to /dev/zero or a FIFO it must not hang."""
    repo = hostile_home / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    (repo / ".claude").mkdir(exist_ok=True)
    settings = repo / ".claude" / "settings.json"
    if shape == "dev-zero":
        settings.symlink_to("/dev/zero")
    elif shape == "fifo":
        os.mkfifo(settings)
    else:
        with open(settings, "wb") as handle:
            handle.truncate(2 * 1024**3)
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "prompt": "which editor do I use", "source": "startup"})
    for event in ("session-start", "prompt", "stop"):
        proc = run_cli(tally, "hook", event, stdin=payload, timeout=20)
        assert proc.returncode == 0 and proc.returncode != -9, (event, proc.stderr)
    code, out, err = run_inproc(tally, "--cwd", str(repo), "path")
    assert code == 0, err
