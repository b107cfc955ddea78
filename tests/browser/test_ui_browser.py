"""`memdir ui` as a person uses it, in headless Chromium: search, open, edit, see the diff, restore,
delete and bring back, preview recall, and hostile text that stays text."""

from __future__ import annotations

import pytest

from tests import ui_folder

expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]' for the browser suite").expect

PROJECT = "project_deploy_checklist.md"
HOSTILE = "reference_hostile_note.md"


def _open(page, served):
    page.goto(served.url)
    page.wait_for_selector("#memories")
    assert "token=" not in page.url  # traded for the cookie, gone from the address bar and history


def test_load_search_and_screenshot(page, served, screenshots):
    _open(page, served)
    rows = page.locator("#memories tr.row")
    assert rows.count() == 3
    page.fill("#search", "release")
    assert page.locator("#memories tr.row:visible").count() == 1
    assert page.locator("#memories tr.row:visible .memory-link").inner_text() == "deploy-checklist"
    assert page.inner_text("#shown-count") == "1"
    page.fill("#search", "")
    assert page.locator("#memories tr.row:visible").count() == 3
    # the background check fills every status cell (the empty project: names are gone or there are none)
    # (not wait_for_function: its string predicate is an eval, which the page's CSP refuses)
    expect(page.locator("td.status:text-is('…')")).to_have_count(0, timeout=60_000)
    assert page.locator("td.status.status-stale").count() >= 1
    page.screenshot(path=str(screenshots / "list.png"), full_page=True)
    assert not page.errors


def test_open_edit_see_the_diff_and_restore(page, served, screenshots):
    _open(page, served)
    page.click("text=deploy-checklist")
    page.wait_for_selector("#memory-body")
    assert "Run the tests, tag, push, announce." in page.inner_text("#memory-body")
    page.click("#edit")
    page.fill("#body", "Run the tests, tag, push, announce, and update the changelog.\n\n"
                       "**Why:** releases broke.\n**How to apply:** every release.")
    page.click("#save")
    page.wait_for_selector("#done")
    assert "Saved." in page.inner_text("#done")
    assert "update the changelog" in page.inner_text("#memory-body")
    newest = page.locator("#version-1 .diff")
    assert "+Run the tests, tag, push, announce, and update the changelog." in newest.inner_text()
    assert "-Run the tests, tag, push, announce." in newest.inner_text()
    page.screenshot(path=str(screenshots / "memory-after-edit.png"), full_page=True)
    page.click("#version-1 .restore-button")
    page.wait_for_selector("#done")
    assert "Restored." in page.inner_text("#done")
    assert "update the changelog" not in page.inner_text("#memory-body")
    assert "update the changelog" not in (served.folder / PROJECT).read_text()
    assert not page.errors


def test_delete_asks_then_restore_brings_it_back(page, served):
    _open(page, served)
    page.click("text=deploy-checklist")
    page.wait_for_selector("#delete")
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("#delete")
    assert asked and "restore" in asked[0] and (served.folder / PROJECT).exists()  # dismissed: kept
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete")
    page.wait_for_selector("#done")
    assert "Deleted." in page.inner_text("#done") and not (served.folder / PROJECT).exists()
    page.click("#version-1 .restore-button")
    page.wait_for_selector("#memory-body")
    assert (served.folder / PROJECT).exists() and "Restored." in page.inner_text("#done")


def test_recall_preview(page, served, screenshots):
    _open(page, served)
    page.click("text=Recall preview")
    page.fill("#prompt", "should I install with npm or pnpm")
    page.click("#preview")
    page.wait_for_selector("#verdicts")
    assert "Always pnpm." in page.inner_text("#context")
    passed = page.locator("#verdicts tr.passed")
    assert passed.count() == 1 and "cleared the bar" in passed.inner_text()
    assert page.locator("#verdicts tr.failed").count() == 2
    page.screenshot(path=str(screenshots / "recall-preview.png"), full_page=True)
    assert not page.errors


def test_hostile_memory_renders_as_text_and_runs_nothing(page, served, screenshots):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    _open(page, served)
    assert ui_folder.HOSTILE_DESCRIPTION in page.inner_text("#memories")  # shown as typed, not as markup
    page.goto(served.base + f"memory?source=personal&file={HOSTILE}")
    page.wait_for_selector("#memory-body")
    assert page.inner_text("#memory-description") == ui_folder.HOSTILE_DESCRIPTION
    body = page.inner_text("#memory-body")
    assert "<a href=\"javascript:window.pwned=4\">here</a>" in body and "<svg onload=" in body
    # nothing ran: no global set, no dialog; the body holds one element, the [[link]], pointing at this server
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('#memory-body *').length") == 1
    href = page.get_attribute("#memory-body a", "href")
    assert href.startswith("link?") and "javascript" not in href.lower()
    assert page.evaluate("document.querySelectorAll('img, svg:not(.graph):not(.bar), iframe, object').length") == 0
    page.click("#memory-body a")  # the [[<script>...]] link: a page saying no memory has that name
    page.wait_for_selector("#error")
    assert "<script>window.pwned=6</script>" in page.inner_text("#error")
    for path in ("", "graph", f"edit?source=personal&file={HOSTILE}", "recall?q=hostile+note+click+here"):
        page.goto(served.base + path)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.pwned") == "undefined", path
    page.goto(served.base + f"memory?source=personal&file={HOSTILE}")
    page.screenshot(path=str(screenshots / "hostile.png"), full_page=True)
    assert not dialogs and not page.errors


def test_a_page_from_another_origin_cannot_write(page, served):
    """A form posted from another site carries no cookie (SameSite=Strict) and a foreign Origin: refused."""
    _open(page, served)
    before = (served.folder / PROJECT).read_text()
    status = page.evaluate("""async (base) => {
        const answer = await fetch(base + 'delete', {method: 'POST', body: new URLSearchParams(
            {source: 'personal', file: 'project_deploy_checklist.md', csrf: 'guessed'})});
        return answer.status; }""", served.base)
    assert status == 403 and (served.folder / PROJECT).read_text() == before


def test_the_runs_cookie_never_reaches_another_server_on_loopback(page, served):
    """Chromium sends a host's cookies to all its ports: the cookie holding the run's token is scoped to the
    run's random path, so another local server the browser visits never receives it."""
    import http.server
    import threading

    seen: list[str] = []

    class Other(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            seen.append(self.headers.get("cookie") or "")
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(b"<p>another local server</p>")

        def log_message(self, *args):
            pass

    other = http.server.HTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        _open(page, served)
        assert any(c["name"].startswith("memdir_ui_") for c in page.context.cookies())  # signed in
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/memory?source=personal&file={PROJECT}")
        token = served.url.rsplit("token=", 1)[1]
        assert len(seen) >= 2 and not any(token in cookie for cookie in seen), seen
    finally:
        other.shutdown()
