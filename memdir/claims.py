"""What a memory names: the file paths, symbols (functions, classes, constants), commands and flags in its text,
which memdir.verify checks against the code. A memory's prose ("UI/UX", "grants/funding", a URL, a
`[[link]]` to another memory) names nothing.
"""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_PATH = re.compile(
    r"(?<![\w./:@~-])((?:\.{0,2}/)?(?:[\w@+-][\w.@+-]*/)+[\w.@+-]*[\w+-]|[\w-]+\.(?:%s))(?![\w/-])" % "|".join(
        "py pyi js jsx mjs cjs ts tsx go rs java kt rb php c h cc cpp hpp cs swift scala sh bash zsh "
        "toml yaml yml json ini cfg conf sql proto graphql md rst txt lock env gradle tf".split()
    )
)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(\)")
_IDENT = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")
_COMMAND = re.compile(r"^(make|just|npm run|yarn|pnpm run|pnpm|bun run)\s+([\w:.-]+)")
_BARE_IDENT = re.compile(r"(?<![\w./:@~\[-])([A-Za-z_]\w*_\w+)(?![\w/.(\]-])")
_LINK = re.compile(r"\[\[[^\]]*\]\]")
_URLISH = re.compile(r"^(?:[a-z]+://|(?:[\w-]+\.)+(?:com|org|net|io|dev|app|co|ai|sh)/|www\.)", re.I)
_EXTENSION = re.compile(r"\.[A-Za-z][\w]{0,9}$")


class Claim:
    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"Claim({self.kind!r}, {self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Claim) and (self.kind, self.text) == (other.kind, other.text)

    def __hash__(self) -> int:
        return hash((self.kind, self.text))


def _looks_like_symbol(word: str) -> bool:
    """snake_case, CamelCase, CONSTANT or dotted names: not plain English words."""
    last = word.rsplit(".", 1)[-1]
    if len(last) < 3:
        return False
    return "_" in last or "." in word or (any(c.isupper() for c in last[1:]) and any(c.islower() for c in last))


def extract_claims(text: str) -> list[Claim]:
    """Paths, symbols, commands and flags a memory names, in order of first mention, without repeats."""
    claims: list[Claim] = []

    def add(kind: str, value: str) -> None:
        claim = Claim(kind, value)
        if claim not in claims:
            claims.append(claim)

    spans = _CODE_SPAN.findall(text)
    for span in spans:
        span = span.strip()
        command = _COMMAND.match(span)
        if command:
            add("command", f"{command.group(1)} {command.group(2)}")
        elif (_IDENT.match(span.removesuffix("()")) and _looks_like_symbol(span.removesuffix("()")) and "/" not in span
              and not _PATH.fullmatch(span)):
            add("symbol", span.removesuffix("()"))
    quoted = {span.strip() for span in spans}
    for match in _PATH.finditer(text):
        value = match.group(1).rstrip(".")
        start = max(text.rfind(" ", 0, match.start()), text.rfind("(", 0, match.start())) + 1
        if _URLISH.match(text[start : match.end()]) or _URLISH.match(value):
            continue
        # Prose writes "UI/UX" and "grants/funding": outside backticks a path needs a file extension.
        if value not in quoted and not _EXTENSION.search(value):
            continue
        add("path", value)
    for match in _CALL.finditer(text):
        if _looks_like_symbol(match.group(1)) or match.group(1).islower():
            add("symbol", match.group(1))
    for match in _BARE_IDENT.finditer(_LINK.sub(" ", text)):
        if len(match.group(1).strip("_")) >= 4:
            add("symbol", match.group(1))
    for match in _FLAG.finditer(text):
        add("flag", match.group(1))
    return claims
