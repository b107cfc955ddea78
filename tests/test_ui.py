"""`memdir ui` served in-process through starlette's TestClient: the guard, every page, and writes
going through the store (history kept, secret guard, the CLI's refusals). Browser tests: tests/browser/."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from memdir.entry.ui.app import Shell, build_app
from memdir.entry.ui.security import Guard
from tests import ui_folder

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
FEEDBACK = "feedback_use_pnpm_not_npm.md"
PROJECT = "project_deploy_checklist.md"
HOSTILE = "reference_hostile_note.md"


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "memory"
    ui_folder.build(root)
    return root


@pytest.fixture
def shell(folder, tmp_path):
    return Shell(folder, Guard(PORT), project_root=tmp_path / "project", verify=False)


def _client(shell, signed_in: bool = True) -> TestClient:
    client = TestClient(build_app(shell), base_url=ORIGIN + shell.guard.base, follow_redirects=False)
    if signed_in:
        answer = client.get(f"/?token={shell.guard.token}")
        assert answer.status_code == 303
    return client


@pytest.fixture
def client(shell):
    return _client(shell)


def _post(client, shell, path: str, **fields):
    return client.post(path, data={"csrf": shell.guard.csrf, **fields}, headers={"origin": ORIGIN})


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _assert_inert(html: str) -> None:
    """No inline script, no event-handler attribute, no inline style, no javascript: URL anywhere."""
    for tag, attrs in _tags(html):
        assert tag != "script" or attrs.get("src") == "static/ui.js", (tag, attrs)
        assert tag != "style", tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name != "style", (tag, name)
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, name, value)


# --- the guard -------------------------------------------------------------------------------------
def test_nothing_is_served_without_the_runs_token(shell):
    client = _client(shell, signed_in=False)
    for path in ("/", "/memory?source=personal&file=" + FEEDBACK, "/static/ui.js", "/verify.json"):
        answer = client.get(path)
        assert answer.status_code == 403 and "URL `memdir ui` printed" in answer.text
    assert client.get("/?token=not-the-token").status_code == 403
    client.cookies.set(shell.guard.cookie, "guess")
    assert client.get("/").status_code == 403


def test_the_token_becomes_an_httponly_strict_cookie_and_leaves_the_url(shell):
    client = _client(shell, signed_in=False)
    answer = client.get(f"/recall?q=pnpm&token={shell.guard.token}")
    assert answer.status_code == 303 and answer.headers["location"] == f"{shell.guard.base}recall?q=pnpm"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{shell.guard.cookie}={shell.guard.token}")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and f"Path={shell.guard.base}" in cookie
    assert client.get("/recall?q=pnpm").status_code == 200


def test_another_host_header_is_refused_even_with_the_cookie(shell, client):
    # a DNS-rebinding page reaches 127.0.0.1 under its own name
    answer = client.get("/", headers={"host": f"evil.example:{PORT}"})
    assert answer.status_code == 400 and "Host" in answer.text


def test_every_answer_carries_a_strict_csp(client):
    for path in ("/", "/memory?source=personal&file=" + FEEDBACK, "/recall?q=pnpm", "/graph", "/spend",
                 "/health", "/static/ui.js", "/memory?source=personal&file=nope.md"):
        csp = client.get(path).headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp


def test_writes_need_the_same_origin_and_the_csrf_token(shell, client, folder):
    before = (folder / FEEDBACK).read_text()
    fields = {"source": "personal", "file": FEEDBACK}
    assert client.post("/delete", data={"csrf": shell.guard.csrf, **fields}).status_code == 403  # no Origin
    assert client.post("/delete", data={"csrf": shell.guard.csrf, **fields},
                       headers={"origin": "http://evil.example"}).status_code == 403
    answer = client.post("/delete", data=fields, headers={"origin": ORIGIN})
    assert answer.status_code == 403 and "CSRF" in answer.text
    answer = client.post("/delete", data={"csrf": "x" * 43, **fields}, headers={"origin": ORIGIN})
    assert answer.status_code == 403
    assert (folder / FEEDBACK).read_text() == before


# --- pages -----------------------------------------------------------------------------------------
def test_list_shows_every_memory_with_type_age_and_description_and_filters(client):
    page = client.get("/").text
    for name in ("Use pnpm, not npm", "deploy-checklist", "Hostile note"):
        assert name in page
    assert "The repo installs with pnpm" in page and '<td class="age">today</td>' in page
    page = client.get("/?q=release").text
    assert "deploy-checklist" in page and "Use pnpm, not npm" not in page
    page = client.get("/?type=feedback").text
    assert "Use pnpm, not npm" in page and "deploy-checklist" not in page
    assert "No memory matches." in client.get("/?source=team").text


def test_one_memory_shows_body_links_both_ways_and_history_as_a_diff(client):
    page = client.get(f"/memory?source=personal&file={PROJECT}").text
    assert "Run the tests, tag, push, announce." in page
    assert FEEDBACK in page  # linked from: the pnpm memory links [[deploy-checklist]]
    assert 'class="add">+Run the tests, tag, push, announce.' in page
    assert 'class="del">-Run the tests, tag, push.' in page
    page = client.get(f"/memory?source=personal&file={FEEDBACK}").text
    assert f'href="memory?source=personal&amp;file={PROJECT}"' in page  # links to
    assert 'class="wikilink" href="link?source=personal&amp;name=deploy-checklist"' in page
    answer = client.get("/link?source=personal&name=deploy-checklist")
    assert answer.status_code == 303 and PROJECT in answer.headers["location"]


def test_hostile_memory_renders_as_text_on_every_page(client):
    for path in ("/", f"/memory?source=personal&file={HOSTILE}", f"/edit?source=personal&file={HOSTILE}",
                 "/recall?q=hostile+note+click", "/graph", "/?q=script"):
        page = client.get(path).text
        _assert_inert(page)
        assert "<script>window.pwned" not in page and "<img src=x" not in page and "<svg onload" not in page
    page = client.get(f"/memory?source=personal&file={HOSTILE}").text
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert "[here](javascript:window.pwned=3)" in page  # markdown links are not rendered: shown as written


def test_paths_outside_the_folder_and_symlinks_are_refused(client, folder, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: secret\ndescription: d\ntype: user\n---\nprivate\n")
    (folder / "link.md").symlink_to(outside)
    (folder / "sub").symlink_to(tmp_path, target_is_directory=True)
    for rel in ("../outside.md", "/etc/passwd", "link.md", "sub/outside.md", "MEMORY.md", ".memdir/runs.jsonl"):
        answer = client.get(f"/memory?source=personal&file={rel}")
        assert answer.status_code == 400 and "private" not in answer.text, rel
        assert client.get(f"/edit?source=personal&file={rel}").status_code == 400
    assert "link.md" not in client.get("/").text
    assert client.get("/memory?source=elsewhere&file=x.md").status_code == 400


def test_spend_graph_and_health_pages(client, folder):
    page = client.get("/spend").text
    assert "$0.5000" in page and "$0.0123" in page and "2 model runs" in page
    page = client.get("/graph").text
    assert "use-pnpm-not-npm" in page or "feedback_use_pnpm_not_npm" in page
    assert "deploy-checklist" in page
    page = client.get("/health").text
    assert "proposal" not in page  # no proposals folder: write modes are not in use
    (folder / ".memdir" / "proposals").mkdir()
    (folder / ".memdir" / "proposals" / "p1.json").write_text("{}")
    assert "1 proposal(s) waiting" in client.get("/health").text


def test_recall_preview_shows_the_injection_and_why_each_memory_passed(client):
    page = client.get("/recall?q=should+I+install+with+npm+or+pnpm").text
    assert 'id="context"' in page and "Always pnpm." in page
    rows = re.findall(r'<tr class="(passed|failed)">.*?<div class="file">([^<]+)</div>.*?<td>([^<]*)</td>\s*<td>([^<]*)</td>',
                      page, re.S)
    verdicts = {file: (kind, why) for kind, file, _, why in rows}
    assert verdicts[FEEDBACK][0] == "passed" and "cleared the bar" in verdicts[FEEDBACK][1]
    assert verdicts[PROJECT][0] == "failed"
    assert "Nothing: no memory clears the bar" in client.get("/recall?q=what+is+the+weather+in+paris").text


# --- writes ----------------------------------------------------------------------------------------
def _edit_fields(client, rel: str) -> dict:
    page = client.get(f"/edit?source=personal&file={rel}").text
    expected = re.search(r'name="expected" value="([0-9a-f]+)"', page).group(1)
    return {"source": "personal", "file": rel, "expected": expected}


def test_edit_saves_through_the_store_and_keeps_the_previous_version(shell, client, folder, store):
    store = shell.sources["personal"].store
    kept = len(store.history_versions(FEEDBACK))
    fields = _edit_fields(client, FEEDBACK)
    answer = _post(client, shell, "/edit", **fields, description="Install with pnpm only", type="feedback",
                   body="Only pnpm.\n\n**Why:** lockfile.\n**How to apply:** pnpm i.")
    assert answer.status_code == 303 and "done=saved" in answer.headers["location"]
    text = (folder / FEEDBACK).read_text()
    assert "Install with pnpm only" in text and "Only pnpm." in text
    assert len(store.history_versions(FEEDBACK)) == kept + 1
    assert "Install with pnpm only" in store.index()
    page = client.get(answer.headers["location"]).text
    assert "Saved." in page and 'class="del">-Always pnpm.' in page


def test_edit_refuses_secrets_a_stale_form_and_bad_fields_and_writes_nothing(shell, client, folder):
    before = (folder / FEEDBACK).read_text()
    fields = _edit_fields(client, FEEDBACK)
    answer = _post(client, shell, "/edit", **fields, description="token", type="feedback",
                   body="key: ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")
    assert answer.status_code == 400 and "secret" in answer.text.lower()
    answer = _post(client, shell, "/edit", **fields, description="", type="feedback", body="x")
    assert answer.status_code == 400 and "description" in answer.text
    answer = _post(client, shell, "/edit", **fields, description="d", type="opinion", body="x")
    assert answer.status_code == 400 and "unknown memory type" in answer.text
    assert (folder / FEEDBACK).read_text() == before
    (folder / FEEDBACK).write_text(before.replace("Always pnpm.", "Always pnpm, changed by hand."))
    answer = _post(client, shell, "/edit", **fields, description="d", type="feedback", body="x")
    assert answer.status_code == 400 and "changed since you opened it" in answer.text
    assert "changed by hand" in (folder / FEEDBACK).read_text()


def test_delete_then_restore_brings_the_memory_back(shell, client, folder):
    before = (folder / PROJECT).read_text()
    answer = _post(client, shell, "/delete", source="personal", file=PROJECT)
    assert answer.status_code == 303 and not (folder / PROJECT).exists()
    page = client.get(answer.headers["location"]).text
    assert "Deleted." in page and "Restore version 1" in page
    answer = _post(client, shell, "/restore", source="personal", file=PROJECT, version="1")
    assert answer.status_code == 303 and (folder / PROJECT).read_text() == before
    assert "Restored." in client.get(answer.headers["location"]).text


def test_restore_refuses_the_index_and_paths_outside_the_folder(shell, client):
    for rel in ("MEMORY.md", "../x.md", ".memdir/history/x.md"):
        answer = _post(client, shell, "/restore", source="personal", file=rel, version="1")
        assert answer.status_code == 400, rel


def test_team_and_agent_folders_are_listed_with_their_own_label(folder, tmp_path):
    from memdir.model import Memory
    from memdir.store import MemoryStore

    MemoryStore.team_store(folder).save(Memory(name="Team rule", type="feedback", description="shared",
                                               body="x\n\n**Why:** y\n**How to apply:** z"))
    project = tmp_path / "project"
    MemoryStore(project / ".claude" / "agent-memory" / "code-reviewer").save(
        Memory(name="Reviewer note", type="user", description="reviews", body="b"))
    shell = Shell(folder, Guard(PORT), project_root=project, verify=False)
    client = _client(shell)
    page = client.get("/").text
    assert "Team rule" in page and "Reviewer note" in page and "agent code-reviewer (project)" in page
    page = client.get("/?source=agent").text
    assert "Reviewer note" in page and "Team rule" not in page and "Use pnpm" not in page
    rel = "user_reviewer_note.md"
    assert "reviews" in client.get(f"/memory?source=agent-project-code-reviewer&file={rel}").text


def test_verification_runs_in_the_background_and_reports_stale_memories(folder, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    from memdir.model import Memory
    from memdir.store import MemoryStore

    MemoryStore(folder).save(Memory(name="Build script", type="project", description="how builds run",
                                    body="Run `scripts/build_all.sh` first.\n\n**Why:** a.\n**How to apply:** b."))
    shell = Shell(folder, Guard(PORT), project_root=project)
    assert not shell.verification.wait(0.2)  # not before the page asks: the first page never waits for it
    client = _client(shell)
    client.get("/verify.json")
    assert shell.verification.wait(30)
    report = client.get("/verify.json").json()
    assert report["ready"] and report["memories"]["personal"]["project_build_script.md"]["status"] == "stale"


# --- the command -----------------------------------------------------------------------------------
def test_cli_refuses_a_bad_port_in_one_line(cli, folder):
    code, out, err = cli("ui", "--dir", str(folder), "--port", "70000", "--no-browser")
    assert code == 2 and err.count("\n") == 1 and "--port 70000" in err


def test_cli_serves_on_loopback_and_prints_one_url(folder):
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "memdir.entry.cli", "ui", "--dir", str(folder), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:(\d+)/[\w-]+/\?token=\S+", line).group(0)
        assert parse_qs(urlsplit(url).query)["token"][0]
        port = int(urlsplit(url).port)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=10) as answer:  # token -> cookie -> the list
            assert answer.status == 200 and b"Use pnpm, not npm" in answer.read()
        import socket

        with pytest.raises(OSError):
            socket.create_connection(("0.0.0.0" if False else _other_address(), port), timeout=1).close()
    finally:
        proc.terminate()
        proc.wait(10)


def _other_address() -> str:
    """An address of this machine that is not loopback, when it has one (else one that refuses anyway)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: no packet is sent by a UDP connect
            return probe.getsockname()[0]
    except OSError:
        return "127.0.0.2"


def test_a_deleted_memory_is_listed_for_restoring(shell, client):
    assert 'id="deleted"' not in client.get("/").text
    _post(client, shell, "/delete", source="personal", file=PROJECT)
    page = client.get("/").text
    assert 'id="deleted"' in page and f'href="memory?source=personal&amp;file={PROJECT}"' in page.split('id="deleted"')[1]


def test_recall_preview_links_team_memories_to_the_team_folder(folder):
    from memdir.model import Memory
    from memdir.store import MemoryStore

    MemoryStore.team_store(folder).save(Memory(name="Team pnpm rule", type="feedback", description="pnpm for the team",
                                               body="pnpm install only\n\n**Why:** y\n**How to apply:** z"))
    client = _client(Shell(folder, Guard(PORT), verify=False))
    page = client.get("/recall?q=pnpm+install+for+the+team").text
    assert 'href="memory?source=team&amp;file=feedback_team_pnpm_rule.md"' in page
    assert "pnpm for the team" in client.get("/memory?source=team&file=feedback_team_pnpm_rule.md").text


def test_the_runs_cookie_never_goes_to_another_server_on_loopback(folder):
    """Cookies ignore the port: scoped to `/`, the cookie holding the run's token went to every server on
    127.0.0.1 the browser visited, and any local program listening there could read it and drive the UI.
    Scoped to the run's random path, it is sent only there (http.cookiejar matches cookies as browsers do)."""
    import http.server
    import subprocess
    import sys
    import threading
    import urllib.request

    seen: list[str] = []

    class Other(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            seen.append(self.headers.get("cookie") or "")
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    other = http.server.HTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    proc = subprocess.Popen([sys.executable, "-m", "memdir.entry.cli", "ui", "--dir", str(folder), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ)
    try:
        url = re.search(r"http://\S+token=\S+", proc.stdout.readline()).group(0)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=10) as answer:
            assert answer.status == 200  # signed in: the jar holds the cookie
        token = parse_qs(urlsplit(url).query)["token"][0]
        for path in ("/", "/memory?source=personal&file=x.md", "/static/ui.js"):
            opener.open(f"http://127.0.0.1:{other.server_address[1]}{path}", timeout=10).close()
        assert len(seen) == 3 and not any(token in cookie for cookie in seen), seen
    finally:
        proc.terminate()
        proc.wait(10)
        other.shutdown()


def test_nothing_is_served_outside_the_runs_path_even_with_the_cookie(shell, client):
    outside = TestClient(build_app(shell), base_url=ORIGIN, follow_redirects=False)
    outside.cookies.set(shell.guard.cookie, shell.guard.token)
    for path in ("/", "/memory?source=personal&file=" + FEEDBACK, "/static/ui.js", f"/?token={shell.guard.token}"):
        answer = outside.get(path)
        assert answer.status_code == 404 and "URL `memdir ui` printed" in answer.text, path
    assert Guard(PORT).base != shell.guard.base and len(shell.guard.base) > 20  # a new secret path each run


def test_every_link_of_every_page_stays_under_the_runs_path(shell, client):
    from urllib.parse import urljoin

    pages = ["", "memory?source=personal&file=" + PROJECT, "edit?source=personal&file=" + PROJECT, "recall?q=pnpm",
             "graph", "spend", "health", "memory?source=personal&file=nope.md"]
    page_base = ORIGIN + shell.guard.base
    for page in pages:
        for tag, attrs in _tags(client.get(page).text):
            for name in ("href", "src", "action"):
                if attrs.get(name) is not None:
                    assert urljoin(page_base + page, attrs[name]).startswith(page_base), (page, tag, attrs)
