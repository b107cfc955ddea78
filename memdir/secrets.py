"""The secret guard every write path goes through.

Memory files are plain text that gets injected into prompts, synced, and (team memory) shared,
so credentials must never land in them. Patterns cover the formats with recognisable shapes plus
generic `password=...`-style assignments; placeholders like `<your-token>` or `****` are allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.errors import MemdirError

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI-style API key", re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{32,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Slack webhook URL", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a Stripe secret key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("a password inside a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]{3,})@", re.I)),
    (
        "a credential assignment",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|"
            r"client[_-]?secret|private[_-]?key|token)\b[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{8,})"
        ),
    ),
]

_PLACEHOLDER = re.compile(r"^(?:<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\*+|x+|\.{3,}|your[_-].*|changeme|example.*)$", re.I)


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    line: int


def find_secrets(text: str) -> list[SecretFinding]:
    findings: list[SecretFinding] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            value = match.group(match.lastindex) if match.lastindex else match.group(0)
            if match.lastindex and _PLACEHOLDER.match(value):
                continue
            findings.append(SecretFinding(kind, text.count("\n", 0, match.start()) + 1))
            break
    return sorted(findings, key=lambda f: f.line)


def guard(text: str, where: str) -> None:
    """Raise a one-line error naming the kind of secret found in `text` (destined for `where`)."""
    findings = find_secrets(text)
    if findings:
        first = findings[0]
        raise MemdirError(
            f"refusing to save {where}: it looks like it contains {first.kind} (line {first.line}); "
            "remove the secret and save where it is kept instead (e.g. 'in 1Password, vault Ops')"
        )


REDACTED = "[redacted]"


def _spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for _kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            group = match.lastindex or 0
            value = match.group(group)
            if group and _PLACEHOLDER.match(value):
                continue
            spans.append(match.span(group))
    return spans


def redact(text: str) -> str:
    """`text` with every secret, and every slug of one (`sk_ant_api03_...`), replaced by [redacted].

    For log lines, run records and error messages: they are kept on disk and shown to people, so a
    refused secret must not reach them either. The slug form is found by matching `_` as `-`
    (same length, so the spans line up).
    """
    if not isinstance(text, str) or not text:
        return text
    spans = _spans(text) + _spans(text.replace("_", "-"))
    if not spans:
        return text
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if end <= start:
            continue
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


def looks_secret(text: str) -> bool:
    """True when `text` (e.g. a file name) holds a secret or a slug of one."""
    return redact(text) != text
