"""The lexical stage reads a memory's whole body up to scan.HEAD_BYTES, not its first HEADER_SCAN_LINES lines.

HEADER_SCAN_LINES bounds where the frontmatter is looked for (and the cut of a file of very long lines); a
session note's fact at its line 50 is ranked on, in the hook's cached scan as in the plain one (issue 21:
a later attempt was planned on the belief that it was not).
"""

from __future__ import annotations

from memdir import constants as C
from memdir.header_cache import HeaderCache
from memdir.scan import HEAD_BYTES, scan
from memdir.stages.recall.api import recall

LATE_LINE = 50


def _note(folder, name: str, description: str, lines: list[str]) -> None:
    text = f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n" + "\n".join(lines) + "\n"
    (folder / f"{name}.md").write_text(text)


def _folder(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    filler = [f"- step {i}: reran the resume builder and checked the page count" for i in range(LATE_LINE + 10)]
    filler[LATE_LINE] = "- applied to Twilio through Greenhouse, no reply yet"
    _note(folder, "session_notes", "A long session's notes on the resume builder", filler)
    _note(folder, "deploy_rule", "Deploys happen on Fridays only", ["The ops team freezes on Monday."])
    _note(folder, "cover_letters", "Cover letters stay under 400 words", ["Keep one page."])
    return folder


def test_a_fact_past_the_scanned_lines_is_in_both_scans_excerpts(tmp_path):
    folder = _folder(tmp_path)
    assert LATE_LINE > C.HEADER_SCAN_LINES
    plain = {h.rel_path: h.excerpt for h in scan(folder).headers}
    assert "Twilio" in plain["session_notes.md"]
    for _ in range(2):  # the first scan writes the cache, the second serves its entries from it
        cache = HeaderCache(folder)
        cached = {h.rel_path: h.excerpt for h in cache.scan().headers}
        cache.close()
        assert cached == plain


def test_a_prompt_naming_a_fact_past_the_scanned_lines_recalls_its_memory(tmp_path):
    folder = _folder(tmp_path)
    for disk_cache in (False, True, True):  # the hook's path twice: writing the caches, then reading them
        chosen = recall(folder, "did I ever apply to Twilio?", engine="offline", record=False, disk_cache=disk_cache)
        assert [h.rel_path for h in chosen.selected] == ["session_notes.md"]


def test_the_body_is_read_up_to_head_bytes(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    line = "- another line of an ordinary session note, read for ranking\n"
    head = "---\nname: long\ndescription: A long note\ntype: project\n---\n"
    body = line * (HEAD_BYTES // len(line) + 20)
    cut = HEAD_BYTES - len(head) - len(line)  # well inside the first HEAD_BYTES, past the scanned lines
    text = head + body[:cut] + "Kubernetes\n" + body[cut:] + "Nomad\n"
    (folder / "long.md").write_text(text)
    excerpt = scan(folder).headers[0].excerpt
    assert "Kubernetes" in excerpt and "Nomad" not in excerpt
