from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.doctor import check, healthy
from memdir.model import Memory
from tests.conftest import run_memdir


def _one_clean_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_bad_type_is_one_line_and_non_zero(tmp_path):
    proc = run_memdir("--dir", str(tmp_path / "m"), "remember", "x", "--type", "opinion")
    assert proc.returncode == 2
    assert "unknown memory type 'opinion'" in _one_clean_line(proc.stderr)


def test_non_absolute_configured_path_is_one_line(tmp_path):
    proc = run_memdir("list", env={"MEMDIR_PATH": "relative/memory"}, cwd=tmp_path)
    assert proc.returncode == 2
    line = _one_clean_line(proc.stderr)
    assert "$MEMDIR_PATH" in line and "not an absolute path" in line


def test_invalid_user_settings_path_value_is_one_line(tmp_path, isolated_home):
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~"}))
    proc = run_memdir("path", cwd=tmp_path, env={"HOME": str(isolated_home)})
    assert proc.returncode == 2 and "autoMemoryDirectory" in _one_clean_line(proc.stderr)


def test_a_relative_dir_flag_is_read_from_the_folder_the_command_runs_in(tmp_path):
    """`memdir --dir mem ...` is what a user types in a shell; only settings and environment variables must
    name an absolute folder (they are read from wherever a hook happens to start)."""
    assert run_memdir("--dir", "mem", "remember", "Use pnpm, not npm", "--type", "feedback", "--why", "lockfile",
                      cwd=tmp_path).returncode == 0
    assert [p.name for p in (tmp_path / "mem").glob("feedback_*.md")]
    (tmp_path / "elsewhere").mkdir()
    proc = run_memdir("--cwd", str(tmp_path), "--dir", "mem", "list", cwd=tmp_path / "elsewhere")
    assert proc.returncode == 0 and "pnpm" in proc.stdout
    assert not (tmp_path / "elsewhere" / "mem").exists()


def test_path_reports_the_rule(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDIR_PATH", str(tmp_path / "mem"))
    code, out, err = cli("path")
    assert code == 0 and out.strip() == str(tmp_path / "mem") and "MEMDIR_PATH" in err
    code, out, _ = cli("path", "--json")
    assert json.loads(out)["enabled"] is True


def test_remember_list_show_forget_cycle(cli, tmp_path):
    d = str(tmp_path / "m")
    assert cli("--dir", d, "remember", "Use pnpm, not npm", "--type", "feedback", "--why", "lockfile")[0] == 0
    assert cli("remember", "Alice leads payments", "--type", "user", "--dir", d)[0] == 0
    code, out, _ = cli("--dir", d, "list", "--json")
    items = json.loads(out)
    assert [i["type"] for i in items] and {i["type"] for i in items} == {"feedback", "user"}
    code, out, _ = cli("--dir", d, "list", "--type", "user")
    assert "Alice leads payments" in out and "pnpm" not in out
    code, out, _ = cli("--dir", d, "show", "Use pnpm, not npm")
    assert "**Why:** lockfile" in out
    code, out, _ = cli("--dir", d, "forget", "feedback_use_pnpm_not_npm.md")
    assert code == 0 and "pnpm" not in (tmp_path / "m" / "MEMORY.md").read_text()


def test_secret_refused_from_the_cli(cli, tmp_path):
    code, _, err = cli("--dir", str(tmp_path / "m"), "remember", "token ghp_" + "x" * 36, "--type", "reference")
    assert code == 2 and "GitHub token" in err


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_malformed_files_never_stop_list_or_doctor(tmp_path):
    d = tmp_path / "m"
    _write(d / "good.md", "---\nname: Good\ndescription: fine\ntype: user\n---\nbody\n")
    _write(d / "bad_yaml.md", "---\nname: [unclosed\ndescription: x: y\ntype: user\n---\nbody\n")
    _write(d / "no_header.md", "just text\n")
    (d / "binary.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    proc = run_memdir("--dir", str(d), "list")
    assert proc.returncode == 0 and "good.md" in proc.stdout and "bad_yaml.md" in proc.stdout
    proc = run_memdir("--dir", str(d), "doctor")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "bad_yaml.md: malformed YAML" in proc.stdout and "no_header.md: no frontmatter" in proc.stdout


def test_a_colon_in_a_plain_value_is_a_warning_not_an_unhealthy_folder(tmp_path):
    """`description: Cover letter standards: NYC ...` (3 files of the real 55-file folder, written by Claude Code's
    model) is not valid YAML, yet every field reads exactly as meant: doctor says how to make it valid YAML but
    does not call the folder unhealthy. A header that cannot be read as meant stays an error."""
    d = tmp_path / "m"
    _write(d / "colon.md", "---\nname: Cover letters\ndescription: Cover letter standards: NYC location\n"
                           "type: feedback\n---\nBody.\n\n**Why:** x\n**How to apply:** y\n")
    _write(d / "MEMORY.md", "- [Cover letters](colon.md) — standards\n")
    proc = run_memdir("--dir", str(d), "doctor")
    assert proc.returncode == 0 and "[warning] colon.md: malformed YAML" in proc.stdout, proc.stdout
    assert "quote the value" in proc.stdout
    proc = run_memdir("--dir", str(d), "list", "--json")
    assert json.loads(proc.stdout)[0]["description"] == "Cover letter standards: NYC location"
    _write(d / "broken.md", "---\nname: [unclosed\ndescription: x\ntype: user\n---\nbody\n")
    proc = run_memdir("--dir", str(d), "doctor")
    assert proc.returncode == 1 and "[error] broken.md: malformed YAML" in proc.stdout, proc.stdout


def test_unreadable_file_is_reported_not_fatal(store, monkeypatch):
    store.save(Memory(name="ok", description="d", type="user"))
    _write(store.root / "locked.md", "---\nname: L\ndescription: d\ntype: user\n---\n")
    import memdir.scan as scan_mod

    real = scan_mod.read_header

    def flaky(path, root, max_lines=30, **kwargs):
        if str(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real(path, root, max_lines, **kwargs)

    monkeypatch.setattr(scan_mod, "read_header", flaky)
    result = store.scan()
    assert [h.rel_path for h in result.headers] == ["user_ok.md"]
    assert result.unreadable == [("locked.md", "Permission denied")]
    findings = check(store)
    assert any(f.code == "unreadable" and f.path == "locked.md" for f in findings)
    assert not healthy(findings)


def test_doctor_fix_repairs_index_drift_and_orphans(store):
    store.save(Memory(name="A", description="a", type="user"))
    _write(store.root / "user_b.md", "---\nname: B\ndescription: b\ntype: user\n---\n")
    store.index_path.write_text(store.index() + "- [Gone](gone.md) — x\n")
    codes = {f.code for f in check(store)}
    assert {"index-drift", "orphan-index-line"} <= codes
    findings = check(store, fix=True)
    assert healthy(findings)
    assert "gone.md" not in store.index() and "(user_b.md)" in store.index()
    assert healthy(check(store)) and not check(store)


def test_doctor_flags_secrets_missing_why_and_over_cap(store):
    _write(store.root / "feedback_x.md", "---\nname: X\ndescription: x\ntype: feedback\n---\npw AKIAIOSFODNN7EXAMPLE\n")
    store.rebuild_index()
    store.index_path.write_text(store.index() + "\n".join(f"note {i}" for i in range(250)))
    codes = {f.code: f for f in check(store)}
    assert "secret" in codes and "why-how" in codes and "index-over-cap" in codes
    assert "lines" in codes["index-over-cap"].message


def test_demo_runs_offline(tmp_path):
    proc = run_memdir("demo", "--dir", str(tmp_path / "demo"))
    assert proc.returncode == 0, proc.stderr
    assert "created feedback_never_mock_database_integration_tests.md" in proc.stdout
    assert "saved today):" in proc.stdout  # recall found it for the demo prompt
    assert (tmp_path / "demo" / "MEMORY.md").exists()


@pytest.mark.parametrize("scope, where", [("user", "home"), ("project", "repo"), ("local", "repo")])
def test_agent_memory_scopes_on_the_cli(cli, tmp_path, isolated_home, scope, where):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    code, _, _ = cli("--cwd", str(repo), "remember", "Flag unchecked errors", "--type", "feedback")
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "Remember that reviews must check error handling."}]))
    code, out, err = cli("--cwd", str(repo), "extract", str(transcript), "--agent", "code:reviewer", "--scope", scope,
                         "--engine", "offline")
    assert code == 0, err
    base = {"user": isolated_home / ".claude" / "agent-memory", "project": repo / ".claude" / "agent-memory",
            "local": repo / ".claude" / "agent-memory-local"}[scope]
    folder = base / "code-reviewer"
    assert list(folder.glob("*_*.md"))
    code, out, _ = cli("--cwd", str(repo), "list", "--agent", "code:reviewer", "--scope", scope, "--json")
    assert any("error handling" in (m["description"] or "") for m in json.loads(out))
    code, out, _ = cli("--cwd", str(repo), "recall", "review this error handling", "--agent", "code:reviewer",
                       "--scope", scope, "--json")
    assert json.loads(out)["selected"] and str(folder) in json.loads(out)["selected"][0]["path"]


def test_doctor_shows_usage_and_hook_activity(cli, tmp_path):
    from datetime import date

    from memdir.usage import add_usage

    folder = tmp_path / "m"
    cli("--dir", str(folder), "remember", "Alice leads payments", "--type", "user")
    add_usage(folder, date(2026, 3, 2), {"input_tokens": 1200, "output_tokens": 300})
    (folder / ".memdir" / "hook.log").write_text("2026-03-02T09:00:00 stop: saved user_x.md\n")
    code, out, _ = cli("--dir", str(folder), "doctor")
    assert code == 0 and "2026-03-02: 1,500 tokens over 1 run(s)" in out
    assert "stop: saved user_x.md" in out


def test_doctor_names_a_config_file_it_cannot_read(tmp_path, isolated_home):
    """`{"write_mode": "confirm",}` (a trailing comma) left memdir writing in auto mode and `{"enabled": false,}`
    left it on, with no word anywhere; locate.memdir_enabled says "doctor reports them", and it did not."""
    user_config = isolated_home / ".claude" / "memdir" / "config.json"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('{"enabled": false,}')
    folder = tmp_path / "m"
    (folder / ".memdir").mkdir(parents=True)
    (folder / ".memdir" / "config.json").write_text('["write_mode", "confirm"]')
    proc = run_memdir("--dir", str(folder), "doctor", env={"HOME": str(isolated_home)})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "config.json" in line]
    assert len(lines) == 2, proc.stdout
    assert str(user_config) in lines[0] and "line 1 column 19" in lines[0] and "ignores" in lines[0]
    assert str(folder / ".memdir" / "config.json") in lines[1] and "not a JSON object" in lines[1]
    assert run_memdir("--dir", str(folder), "doctor", env={"HOME": str(tmp_path)}).returncode == 1  # the folder's alone


def test_extract_of_a_file_that_is_no_transcript_says_so(tmp_path):
    """`memdir extract notes.txt` said "no new messages since the last run", as if it had read it before."""
    notes = tmp_path / "notes.txt"
    notes.write_text("remember to buy milk\nand eggs\n")
    proc = run_memdir("--dir", str(tmp_path / "m"), "extract", str(notes), "--engine", "offline")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "since the last run" not in proc.stdout, proc.stdout
    assert "no conversation messages in notes.txt" in proc.stdout and "2 line(s) are not JSON" in proc.stdout


def test_path_and_review_name_a_config_file_they_ignored(tmp_path, isolated_home):
    """With `{"write_mode": "confirm",}` review said "write mode auto (the default)", and with
    `{"enabled": false,}` path said "memdir is on: on (memdir's default)": both now say which file they ignored."""
    user_config = isolated_home / ".claude" / "memdir" / "config.json"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('{"write_mode": "confirm", "enabled": false,}')
    for command in ("path", "review"):
        proc = run_memdir("--dir", str(tmp_path / "m"), command, env={"HOME": str(isolated_home)})
        assert proc.returncode == 0, proc.stderr
        warned = [line for line in proc.stderr.splitlines() if str(user_config) in line]
        assert len(warned) == 1 and "is not valid JSON (line 1" in warned[0] and "ignores" in warned[0], proc.stderr


def test_path_says_why_memdir_is_on_without_saying_on_twice(tmp_path, isolated_home):
    """`memdir path` printed "memdir is on: on (memdir's default)"."""
    proc = run_memdir("--dir", str(tmp_path / "m"), "path", env={"HOME": str(isolated_home)})
    assert proc.returncode == 0, proc.stderr
    assert "  memdir is on: memdir's default" in proc.stderr.splitlines(), proc.stderr


@pytest.mark.parametrize("count", [2, 6])
def test_doctor_says_how_to_add_why_and_how_lines_in_one_line_for_many(tmp_path, isolated_home, count):
    """A hand-written folder drew one bare "lacks **Why:** / **How to apply:** lines" per memory (17 on the real
    folder) with no fix: past three they are one warning naming the first three and the fix; fewer, one each."""
    folder = tmp_path / "m"
    folder.mkdir()
    for i in range(count):
        _write(folder / f"project_{i}.md", f"---\nname: P{i}\ndescription: p{i}\ntype: project\n---\nThe plan {i}.\n")
    proc = run_memdir("--dir", str(folder), "doctor", env={"HOME": str(isolated_home)})
    lines = [line for line in proc.stdout.splitlines() if "**Why:**" in line]
    assert all("add the reason and when it applies" in line for line in lines), proc.stdout
    if count > 3:
        assert len(lines) == 1 and f"{count} feedback or project memories" in lines[0] and "and 3 more" in lines[0]
    else:
        assert len(lines) == count
    data = json.loads(run_memdir("--dir", str(folder), "doctor", "--json", env={"HOME": str(isolated_home)}).stdout)
    assert sum(f["code"] == "why-how" for f in data["findings"]) == count  # every file still listed there
