"""The secret guard every write path goes through.

Memory files are plain text that gets injected into prompts, synced and (team memory) shared; logs,
run records and the prompt queue stay on disk. None of them may hold a credential. Three families:

- shapes: tokens whose format says what they are (`sk-ant-...`, `ghp_...`, `AKIA...`, `hf_...`,
  `-----BEGIN ... PRIVATE KEY-----`), after detect-secrets' plugins;
- named values: a value given to a credential-like name (`SECRET_KEY=...`, `"db_pass": "..."`,
  `Authorization: Bearer ...`), judged by the name's last word and by how the value looks;
- sentences: "the password for staging is Tr0ub4dor&3".

Placeholders (`<your-token>`, `${TOKEN}`, `****`), code (`settings.SECRET_KEY`, `os.environ[...]`) and
prose ("the password reset flow", "use Bearer auth", "SECRET_KEY comes from the env") are allowed.

What each kind looks like is memdir/secrets_rules.py's; this module finds, refuses and redacts. It runs on
every prompt (the prompt queue is redacted), so the rules are built for speed (benchmarks/secret_guard.py
measures it).
"""

from __future__ import annotations

from memdir.errors import MemdirError
from memdir.secrets_rules import RULES

TYPE_CHECKING = False  # the prompt hook imports this module: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memdir.secrets_rules import Rule, Span

REDACTED = "[redacted]"


class SecretFinding:
    """One kind of secret found, and the first line it is on."""

    __slots__ = ("kind", "line")

    def __init__(self, kind: str, line: int) -> None:
        self.kind, self.line = kind, line

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretFinding) and (self.kind, self.line) == (other.kind, other.line)

    def __repr__(self) -> str:
        return f"SecretFinding({self.kind!r}, {self.line})"


def _scan(text: str, rules: tuple[Rule, ...] = RULES, first_only: bool = False) -> Iterator[tuple[Rule, Span]]:
    lowered = text.lower()
    folded = lowered if len(lowered) == len(text) else None  # same length: every index lines up
    for rule in rules:
        for span in rule.spans(text, folded):
            yield rule, span
            if first_only:
                break


def find_secrets(text: str) -> list[SecretFinding]:
    """Each kind of secret in `text` once, with the first line it is on, in line order."""
    findings = [SecretFinding(rule.kind, text.count("\n", 0, span[0]) + 1) for rule, span in _scan(text, first_only=True)]
    return sorted(findings, key=lambda f: f.line)


def guard(text: str, where: str) -> None:
    """Raise a one-line error naming the kind of secret found in `text` (destined for `where`)."""
    findings = find_secrets(text)
    if findings:
        first = findings[0]
        if _echoes(where, text):  # a file name derived from the secret must not repeat it in the refusal
            where = "this memory (its file name holds the secret too)"
        raise MemdirError(
            f"refusing to save {where}: it looks like it contains {first.kind} (line {first.line}); "
            "remove the secret and save where it is kept instead (e.g. 'in 1Password, vault Ops')"
        )


_SLUG_RULES = tuple(rule for rule in RULES if rule.slug)


def _spans(text: str) -> list[Span]:
    spans = [span for _rule, span in _scan(text)]
    if "_" in text:  # a slug: `sk_ant_api03_...` read as `sk-ant-api03-...` (same length: the spans line up)
        spans += [span for _rule, span in _scan(text.replace("_", "-"), _SLUG_RULES)]
    return spans


def redact(text: str) -> str:
    """`text` with every secret, and every slug of one (`sk_ant_api03_...`), replaced by [redacted].

    For log lines, run records, queued prompts and error messages: they are kept on disk and shown to
    people, so a refused secret must not reach them either. Works on JSON text too: a span never ends
    in a backslash, so an escaped quote after a secret stays escaped.
    """
    if not isinstance(text, str) or not text:
        return text
    spans = _spans(text)
    if not spans:
        return text
    out, last = [], 0
    for start, end in sorted(spans):
        start = max(start, last)
        while end > start and text[end - 1] == "\\":
            end -= 1
        if end <= start:
            continue
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


def _echoes(where: str, text: str) -> bool:
    """`where` repeats a secret found in `text`, in any spelling a slug could give it."""
    def letters(value: str) -> str:
        return "".join(ch for ch in value.lower() if ch.isalnum())

    shown = letters(where)
    return looks_secret(where) or any(
        len(letters(text[a:b])) >= 8 and letters(text[a:b])[:16] in shown for a, b in _spans(text)
    )


def looks_secret(text: str) -> bool:
    """True when `text` (e.g. a file name) holds a secret or a slug of one."""
    return redact(text) != text
