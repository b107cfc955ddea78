"""What each kind of secret looks like: the rules the secret guard (memdir/secrets.py) runs.

Three families (memdir/secrets.py says what they guard):
- shapes: tokens whose format says what they are (`sk-ant-...`, `ghp_...`, `AKIA...`, `hf_...`,
  `-----BEGIN ... PRIVATE KEY-----`), after detect-secrets' plugins;
- named values: a value given to a credential-like name (`SECRET_KEY=...`, `"db_pass": "..."`,
  `Authorization: Bearer ...`), judged by the name's last word and by how the value looks;
- sentences: "the password for staging is Tr0ub4dor&3".

Placeholders, code and prose are told apart by how a value looks (the first section). Patterns start with a
literal where they can, the others run only when the text holds one of their needles, case-insensitive ones run on
the lowercased text, and all compile on first use: the prompt hook imports this module.
"""

from __future__ import annotations

import binascii
import math
import re

TYPE_CHECKING = False  # the prompt hook imports this module: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

Span = tuple[int, int]


# Patterns are kept as sources and compiled on first use (re caches them): importing stays cheap.
# --- how values look ------------------------------------------------------------------------------
_PLACEHOLDER = (r"^(?:.*(?:\.{3}|…)|<[^>]*>?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\(?\w*\)?s?|\{\{.*|\*+|[xX]{3,}|"
                r"(?i:your|my|some)[_-].*|(?i:example).*)$")
_PLACEHOLDER_WORDS = frozenset(
    "changeme change-me change_me replaceme replace-me replace_me placeholder dummy fake foobar unused notneeded "
    "not-needed not_needed notset not-set not_set redacted [redacted] 1password password passwd pass pwd secret "
    "token hidden".split())
_STOPWORDS = frozenset(
    "true false null none nil undefined required optional string str bytes text int integer bool boolean number "
    "object any env empty masked omitted value default unset missing invalid expired sensitive".split())
_CODE = r"[()\[\]{}<>]|^[!*&@$%#]|^[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)+$|^(?:~|\.{1,2})?/|^[A-Z][a-z]+(?:[A-Z][a-z]+)+$"
_CREDENTIAL_WORDS = frozenset("pass passwd password pwd secret token key apikey auth credential credentials".split())
_SYMBOLS = frozenset("!@#$%^&*+=?~|")
_WORDS = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+"  # the words of an identifier: DB_PASS, apiKey, SECRET_KEY_BASE


def _placeholder(value: str) -> bool:
    return value.lower() in _PLACEHOLDER_WORDS or re.match(_PLACEHOLDER, value) is not None


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _random(value: str, least: int = 16) -> bool:
    """Looks generated: long, letters and digits, high entropy (as detect-secrets' entropy plugins)."""
    return len(value) >= least and _mixed(value) and _entropy(value) >= 3.0


def _cased(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _reference(value: str) -> bool:
    """A placeholder, a type name or a reference to where the secret lives, not the secret itself."""
    if _placeholder(value) or value.lower() in _STOPWORDS or re.search(_CODE, value) or len(set(value)) == 1:
        return True
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) is None:
        return False  # a variable named for what it holds: `credentials`, `api_key`, `accessToken`, `DB_PASSWORD`
    return any(word.lower() in _CREDENTIAL_WORDS for word in re.findall(_WORDS, value))


def _wordy(value: str) -> bool:
    """Words joined by `-`, `_` or `.` (`types-auth0-python`, a cache key), not generated characters."""
    parts = [part for part in re.split(r"[-_.]", value) if part]
    return len(parts) > 1 and 2 * sum(part.isalpha() for part in parts) >= len(parts)


def _typed(value: str) -> bool:
    """A secret someone typed into a sentence: not a word, a number or a hyphenated term."""
    if len(value) < 6 or _reference(value) or re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+", value):
        return False
    return _mixed(value) or (any(c.isalpha() for c in value) and any(c in _SYMBOLS for c in value))


# --- rules ----------------------------------------------------------------------------------------
class Rule:
    """One kind of secret: a regex (its last matched group, when it has groups, is the secret) or a
    finder function `(text, folded) -> spans`.

    Patterns start with a literal where they can (Python's re then scans fast); a pattern that cannot
    names `needles`, lowercase strings one of which the text must hold for it to run. A `fold` pattern is
    written in lowercase and runs on the lowercased text (case-insensitive patterns scan slowly). `slug`:
    also run on the text with `_` read as `-`, since a file name slug turns `sk-ant-...` into `sk_ant_...`.
    """

    __slots__ = ("kind", "needles", "source", "check", "slug", "fold", "_pattern")

    def __init__(self, kind: str, source: str | Callable[[str, str | None], Iterator[Span]],
                 check: Callable[[str, int, int], bool] | None = None, *, needles: str = "",
                 slug: bool = False, fold: bool = False) -> None:
        self.kind, self.source, self.check, self.needles = kind, source, check, needles.split()
        self.slug, self.fold = slug, fold
        self._pattern: re.Pattern[str] | None = None

    def spans(self, text: str, folded: str | None) -> Iterator[Span]:
        """`folded`: `text.lower()` when it lines up with `text` character for character, else None."""
        if self.needles and not any(needle in (folded or text.lower()) for needle in self.needles):
            return
        if callable(self.source):
            yield from self.source(text, folded)
            return
        if self._pattern is None:
            self._pattern = re.compile(self.source)
        pattern, subject = self._pattern, text
        if self.fold:
            pattern, subject = (pattern, folded) if folded is not None else (re.compile(self.source, re.I), text)
        for match in pattern.finditer(subject):
            group = match.lastindex or 0
            start, end = match.span(group)
            if group and _placeholder(text[start:end]):
                continue
            if self.check is None or self.check(text, start, end):
                yield start, end


def _word_start(text: str, start: int, end: int) -> bool:
    return start == 0 or not text[start - 1].isalnum()


def _token(text: str, start: int, end: int) -> bool:
    """A word-started token with digits and both cases (not a kebab-case name or a word)."""
    value = text[start:end]
    return _word_start(text, start, end) and _cased(value) and any(c.isdigit() for c in value)


def _basic(text: str, start: int, end: int) -> bool:
    """`Basic <base64 of user:password>`, which "Basic authentication" never decodes to."""
    value = text[start:end]
    try:
        decoded = binascii.a2b_base64(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii() and decoded.decode("ascii").isprintable()


def _aws_secret(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    return _cased(value) and any(c.isdigit() for c in value)


def _bearer(text: str, start: int, end: int) -> bool:
    return _mixed(text[start:end]) and _entropy(text[start:end]) >= 3.0


def _random_value(text: str, start: int, end: int) -> bool:
    return _random(text[start:end])


def _typed_value(text: str, start: int, end: int) -> bool:
    return _typed(text[start:end])


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DISCORD_TAIL = r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
_TELEGRAM_TAIL = r":[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"


def _dots_six_apart(text: str) -> bool:
    """Two dots with six characters between them, as every Discord token has: most texts have none, and
    then the pattern below need not be compiled at all (a prompt hook redacts each prompt)."""
    dot = text.find(".")
    while dot != -1:
        if text[dot + 7: dot + 8] == ".":
            return True
        dot = text.find(".", dot + 1)
    return False


def _colon_and_35(text: str) -> bool:
    """A colon followed by 35 token characters, as every Telegram bot token has (see _dots_six_apart)."""
    colon = text.find(":")
    while colon != -1:
        if _TOKEN_CHARS.issuperset(text[colon + 1: colon + 36]) and len(text) - colon > 35:
            return True
        colon = text.find(":", colon + 1)
    return False


def _discord(text: str, folded: str | None) -> Iterator[Span]:
    """`<base64 user id>.<6>.<27+>`: found from its dots (a scan for its first letter would be slow)."""
    if not _dots_six_apart(text):
        return
    for match in re.finditer(_DISCORD_TAIL, text):
        start = match.start()
        while start > 0 and text[start - 1] in _TOKEN_CHARS and match.start() - start < 28:
            start -= 1
        if match.start() - start >= 23 and text[start] in "MNO" and _token(text, start, match.end()):
            yield start, match.end()


def _telegram(text: str, folded: str | None) -> Iterator[Span]:
    """`<8-10 digit bot id>:<35 characters>`, found from its colon."""
    if not _colon_and_35(text):
        return
    for match in re.finditer(_TELEGRAM_TAIL, text):
        start = match.start()
        while start > 0 and text[start - 1].isdigit() and match.start() - start <= 10:
            start -= 1
        if 8 <= match.start() - start <= 10 and _word_start(text, start, 0) and _cased(text[match.start():match.end()]):
            yield start, match.end()


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_HINT = r"pass|pwd|secret|token|credential|key|auth"  # run on lowercased text
_ASSIGNED = r"""(?:\\*["'])?[*_]{0,2}[ \t]*(?:=>|:=|:|=)[*_]{0,2}[ \t]*((?:\\*["'`])?)([^\s"'`,;\\]+)"""
_SUFFIXES = frozenset("value str string b64 base64 hex raw plain base enc encrypted".split())
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "privatekey")
_STRONG_WORDS = frozenset("pwd credential credentials".split())
_KEY_STRONG = frozenset("api secret private access encryption signing master client app account service license "
                        "storage shared webhook admin session auth ssh gpg pgp deploy jwt hmac aes crypto".split())
_KEY_NOT = frozenset("public primary foreign sort partition cache idempotency unique lookup routing dedup dedupe "
                     "hash row object s3 i18n translation file node".split())
_TOKEN_NOT = frozenset("max min input output next prev previous page continuation cursor sync cancellation cancel "
                       "eos bos pad sep unk mask cls start end special num total count key".split())
_WEAK_WORDS = frozenset(("key", "auth"))  # not "signature": thinking blocks carry one in every transcript


def _name_strength(name: str) -> str:
    """"strong" (any real value is a secret), "weak" (only a random-looking one), "quoted" (only a random-looking
    one in quotes: a bare `key` or `auth`, as in "cache saved with the key: setup-uv-3.11-x86_64"), or ""."""
    words = [w.lower() for w in re.findall(_WORDS, name)]
    while len(words) > 1 and (words[-1] in _SUFFIXES or words[-1].isdigit()):
        words.pop()
    if not words:
        return ""
    last, prev = words[-1], (words[-2] if len(words) > 1 else "")
    if last == "token" and prev in _TOKEN_NOT:
        return ""
    if last.endswith(_STRONG_ENDINGS) or last in _STRONG_WORDS or (last == "pass" and prev):
        return "strong"
    if last == "key" and (prev in _KEY_NOT or prev in _KEY_STRONG):
        return "" if prev in _KEY_NOT else "strong"
    if last in _WEAK_WORDS:
        return "weak" if prev else "quoted"
    return ""


def _named_values(text: str, folded: str | None) -> Iterator[Span]:
    """Values given to credential-like names: `DB_PASS=...`, `"apiKey": "..."`, `**Password:** ...`."""
    hints = re.finditer(_NAME_HINT, folded) if folded is not None else re.finditer(_NAME_HINT, text, re.I)
    done = 0
    for hint in hints:
        if hint.start() < done:
            continue
        start, end = hint.start(), hint.end()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
        done = end
        assigned = re.compile(_ASSIGNED).match(text, end)
        strength = _name_strength(text[start:end].strip("_.-")) if assigned else ""
        if not assigned or not strength:
            continue
        quoted, value = assigned.group(1, 2)
        if len(value) < 6 or _reference(value):
            continue
        if not quoted and re.fullmatch(r"[A-Za-z_]+", value):
            continue  # "Secret: caching", `token = Punctuation`, `key = in_memory`: a word or a name, not a value
        if strength != "strong" and (not _random(value) or _wordy(value) or (strength == "quoted" and not quoted)):
            continue
        yield assigned.span(2)


_PEM = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_BODY = r"(?:(?:\s|\\+[nr])+(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n\\\"]*))*"
_IN_SENTENCE = r"password|passwd|passphrase|passcode|secret|token|api key|access key|secret key|private key"

RULES: tuple[Rule, ...] = (
    Rule("a private key block",
          rf"{_PEM}(?:[\s\S]{{0,8000}}?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|{_PEM_BODY})"
          r"|PuTTY-User-Key-File-\d:[^\n\"\\]*|Private-Lines: \d+(?:(?:\s|\\+[nr])+[A-Za-z0-9+/=]{4,})+",
          needles="private putty-user-key"),
    Rule("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}", _word_start, needles="sk-ant-", slug=True),
    Rule("an OpenAI-style API key", r"sk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{32,}", _token,
          needles="sk-", slug=True),
    Rule("an OpenRouter API key", r"sk-or-v1-[0-9a-f]{64}", _word_start, needles="sk-or-v1-", slug=True),
    Rule("an AWS access key id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", _word_start,
          needles="akia asia abia acca a3t"),
    Rule("an AWS secret access key",
          r"(?:(?i:aws|amazon)|AKIA[A-Z0-9]{16}|ASIA[A-Z0-9]{16})[^\n]{0,80}?"
          r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", _aws_secret, needles="aws amazon akia asia"),
    Rule("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,}", _word_start,
          needles="ghp_ gho_ ghu_ ghs_ ghr_ github_pat_"),
    Rule("a GitLab token", r"gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|oas)-[A-Za-z0-9_-]{20,}", _word_start,
          needles="glpat- gldt- glrt- glptt- glsoat- glcbt- glft- glimt- gloas-", slug=True),
    Rule("a Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}", _word_start,
          needles="xox xapp-", slug=True),
    Rule("a Slack webhook URL", r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+", needles="hooks.slack.com"),
    Rule("a Discord token", _discord),
    Rule("a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+", needles="discord"),
    Rule("a Google API key", r"AIza[0-9A-Za-z_-]{35}", _word_start, needles="aiza"),
    Rule("a Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{24,}", _word_start, needles="gocspx-", slug=True),
    Rule("a Stripe secret key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{24,}", _word_start,
          needles="k_live_ k_test_ whsec_"),
    Rule("an npm token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", _word_start, needles="npm_"),
    Rule("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}", _word_start, needles="pypi-", slug=True),
    Rule("a Hugging Face token", r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])", _word_start, needles="hf_"),
    Rule("a SendGrid API key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", _word_start, needles="sg."),
    Rule("a Mailchimp API key", r"[0-9a-f]{32}-us\d{1,2}(?![0-9])", _word_start, needles="-us"),
    Rule("a Square token", r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_+=-]{60}", _word_start,
          needles="sq0 eaaa", slug=True),
    Rule("a Telegram bot token", _telegram),
    Rule("a Twilio key", r"(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])", _word_start),
    Rule("a JSON web token", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", _word_start,
          needles="eyj"),
    Rule("an Azure storage key",
          r"(?i:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})|[?&]sig=([A-Za-z0-9%+/=]{30,})",
          needles="accountkey sharedaccesskey sig="),
    Rule("a password inside a URL",
          r"://[^/\s:@\"'<>]+:(?!\d{1,5}(?:[/?#,\"'\s]|$))([^\s@\"'<>\\]{3,}?)@(?=[A-Za-z0-9\[])", needles="://"),
    Rule("a .netrc password", r"machine\s+\S+\s+login\s+\S+\s+password\s+([^\s\"'\\]+)", fold=True, needles="machine"),
    Rule("a Basic auth credential", r"basic\s+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])", _basic, fold=True,
          needles="basic"),
    Rule("a Bearer token", r"bearer\s+([a-z0-9._~+/-]{16,}=*)", _bearer, fold=True, needles="bearer"),
    Rule("an Authorization header",
          r"authorization(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?(?:[a-z]+\s+)?([a-z0-9._~+/=-]{16,})", _random_value,
          fold=True, needles="authorization"),
    Rule("a password in a sentence",
          rf"(?:{_IN_SENTENCE})s?(?:\s+(?:for|to|of|on|in)(?:\s+[\w./:@-]{{1,40}}){{1,3}}?)?"
          r"\s+(?:is|was|is now|will be)\s*:?\s+[\"'`]?([^\s\"'`\\]*[^\s\"'`\\.,;:!?)\]}])", _typed_value, fold=True,
          needles="password passwd passphrase passcode secret token key"),
    Rule("a credential assignment", _named_values, needles="pass pwd secret token credential key auth"),
)
