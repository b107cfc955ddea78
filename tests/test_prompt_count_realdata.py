"""Every prompt the user typed on the active branch of every real transcript reaches the model.

The typed prompts are counted from the raw JSONL by the annotation rules of
../shared/realdata/sessions2/README.md, written out here and independently of memdir's reader: user
lines on the main thread whose text the user typed (isMeta, isCompactSummary, tool results,
command/bash wrappers, task notifications, interruptions and CLI notices excluded; IDE blocks
stripped first), plus prompts queued while the agent worked; a rewound prompt (a later sibling
under the same parent) and everything under it is off the branch. The prompts found are the
role="user" messages (not rejections or answers) in the requests the LLM engine sends through the
respx fake API, one shown with sent="N times" counted N times. They must be equal, per transcript.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from memdir.evals.realdata_path import main_sessions, sessions2
from tests.api_payloads import message, text

_IDE = re.compile(r"<(ide_[a-z_]+)>.*?</\1>", re.S)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_NOT_TYPED = re.compile(
    r"^\s*(?:<command-|<local-command-|<bash-|<task-notification|\[Request interrupted|Unknown skill: |Caveat: )")
_USER_MESSAGE = re.compile(r'<message role="user"(?P<kind> kind="\w+")?[^>]*?(?: sent="(?P<sent>\d+) times")?>\n'
                           r'(?P<body>.*?)\n</message>', re.S)


def _typed_text(obj: dict) -> str:
    """The prompt a `type: user` line holds by the annotation rules, or "" when it holds none."""
    if obj.get("isSidechain") or obj.get("isMeta") or obj.get("isCompactSummary") or "sourceToolUseID" in obj:
        return ""
    origin = obj.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
        return ""
    content = (obj.get("message") or {}).get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return ""
    typed = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    typed = _REMINDER.sub("", _IDE.sub("", typed)).strip()
    return "" if _NOT_TYPED.match(typed) or typed.startswith("This session is being continued") else typed


def typed_prompts(path: Path) -> dict[str, str]:
    """{uuid: text} of the prompts typed on the transcript's active branch."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    prompts: dict[str, str] = {}
    siblings: dict[object, list[str]] = {}
    parent_of: dict[str, object] = {}
    for obj in lines:
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or obj.get("isSidechain"):
            continue
        parent_of[uuid] = obj.get("parentUuid")
        if obj.get("type") == "user" and _typed_text(obj):
            prompts[uuid] = _typed_text(obj)
            siblings.setdefault(obj.get("parentUuid"), []).append(uuid)
        attachment = obj.get("attachment") if obj.get("type") == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command" \
                and attachment.get("commandMode") in (None, "prompt") and isinstance(attachment.get("prompt"), str):
            prompts[uuid] = attachment["prompt"].strip()
    dead = {u for group in siblings.values() for u in group[:-1]}
    grew = True
    while grew:
        before = len(dead)
        dead |= {u for u, parent in parent_of.items() if parent in dead}
        grew = len(dead) > before
    return {u: t for u, t in prompts.items() if u not in dead and t}


def prompts_in_requests(bodies: list[dict]) -> list[str]:
    """The user's prompts (role="user", no kind or kind="queued") in the excerpts the requests carry."""
    found = []
    for body in bodies:
        first = body["messages"][0]["content"]
        for block in first:
            for match in _USER_MESSAGE.finditer(block.get("text", "")):
                if match.group("kind") in (None, ' kind="queued"'):  # a prompt sent N times in a row: shown once
                    found += [html.unescape(match.group("body"))] * int(match.group("sent") or 1)
    return found


def _squash(value: str) -> str:
    return " ".join(value.split())


# Claude Code's stand-in for a pasted image, not typed: the system prompt tells the model images show as "[image]".
_IMAGE_PLACEHOLDER = re.compile(r"\[Image #\d+\]")


def _reached(prompt: str, found: list[str]) -> bool:
    """The prompt's head and tail are in one found message (long ones are shortened in the middle)."""
    words = _squash(_IMAGE_PLACEHOLDER.sub("[image]", prompt))
    head, tail = words[:60], words[-60:]
    return any(head in _squash(f) and tail in _squash(f) for f in found)


def _all_transcripts(root: Path) -> list[Path]:
    return [*main_sessions(root), *sessions2(root)]


def test_every_typed_prompt_of_every_real_transcript_reaches_the_model(realdata, tmp_path, api, monkeypatch):
    from memdir.config import Settings
    from memdir.stages.extractor.run import extract_transcript

    bodies: list[dict] = []

    def answer(request):
        import httpx

        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=message([text("Nothing here is worth keeping.")]))

    api.post("/v1/messages").mock(side_effect=answer)
    monkeypatch.setenv("MEMDIR_DAILY_TOKEN_BUDGET", str(10**12))
    settings = Settings.from_env()
    report, wrong = [], []
    for number, path in enumerate(_all_transcripts(realdata)):
        bodies.clear()
        expected = typed_prompts(path)
        result = extract_transcript(path, tmp_path / f"memory-{number}", settings=settings, engine="llm")
        found = prompts_in_requests(bodies)
        reached = sum(1 for p in expected.values() if _reached(p, found))
        report.append(f"{path.parent.name}/{path.name}: typed {len(expected)}, sent {len(found)}, reached {reached} ({result.reason})")
        if not (len(expected) == len(found) == reached):
            wrong.append(report[-1])
    print("\n".join(report))  # the per-transcript figures, with -s
    assert not wrong, "prompts typed vs prompts sent to the model differ:\n" + "\n".join(report)
    assert len(report) == len(_all_transcripts(realdata)) > 20
