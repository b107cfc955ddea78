"""JSON for the hooks' payloads through the C halves of `json` only.

`json` imports `re`, and `re` imports `enum`: about 8 ms of a Stop hook whose whole budget is two bare Python
starts, spent to parse one small object and write another. `_json` (the C scanner and string encoder that
`json` itself uses) gives the same values without them. Elsewhere (another Python, no `_json`) this is `json`.
"""

from __future__ import annotations

_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_WHITESPACE = " \t\n\r"


class _Context:
    """What `_json.make_scanner` reads off a decoder: json.JSONDecoder's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict = {}


def loads(text: str) -> object:
    """`json.loads(text)` for a str; ValueError (json's JSONDecodeError, or one line) when it is not JSON."""
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - another Python
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = make_scanner(_Context())(text, start)  # type: ignore[arg-type]  # typeshed wants a scanner; it reads a decoder
    except StopIteration:
        raise ValueError(f"Expecting value: char {start}") from None
    except SystemError:
        # The C scanner reports a broken object or string through json.decoder.JSONDecodeError, which it looks up in
        # sys.modules without importing it: without `json` loaded it raised SystemError ('{"a" 1}'). json says where.
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object) -> str:
    """`json.dumps(value)` for what the hooks send: dicts with str keys, lists, str, bool, int and None."""
    try:
        from _json import encode_basestring_ascii as quoted
    except ImportError:  # pragma: no cover - another Python
        import json

        return json.dumps(value)
    return _dumps(value, quoted)


def _dumps(value: object, quoted) -> str:
    if isinstance(value, str):
        return quoted(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quoted(str(k))}: {_dumps(v, quoted)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_dumps(v, quoted) for v in value) + "]"
    raise TypeError(f"light_json cannot write {type(value).__name__}")
