"""The one YAML loader memdir uses for memory-file frontmatter, with hard bounds on work and memory.

A memory file is data anyone can plant (a cloned repository, a tool result the agent saved), and
it is read on every prompt. PyYAML's safe loader is not bounded: nine nested anchors and aliases
(an 884-byte "billion laughs") expand to billions of nodes once anything walks the value, a
recursive alias or a map nested 3,000 deep raises RecursionError, and a 4,400-digit integer raises
ValueError under Python's int-string limit. So, before anything is built:

- the text is at most MAX_CHARS long (headers memdir and Claude Code write are a few hundred bytes);
- the event stream is checked first: an alias or anchor is refused (nothing can be expanded), and
  so are nesting deeper than MAX_DEPTH and more than MAX_EVENTS values (a 64 KB list of 30,000
  items takes 0.4 s to build: too slow for a file read on every prompt);
- an integer longer than MAX_INT_CHARS is kept as its text (values end up as strings anyway), so
  int() never meets a number it would refuse or take quadratic time over.

Every failure is a `Refused` (or its kind `Malformed`) with a one-line reason naming the fix;
callers never see another exception type from here.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_CHARS = 64 * 1024  # the scan reads at most this much of a header (constants.HEADER_READ_MAX_BYTES)
MAX_DEPTH = 16  # memdir needs 2 (`metadata:` then `type:`); 16 leaves room for any hand-written list of maps
MAX_EVENTS = 2_000  # keys, values and brackets together; a real header has a few dozen
MAX_INT_CHARS = 64  # far under sys.get_int_max_str_digits() (4,300), and above any real number in a header

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed: the events pass is C


class Refused(ValueError):
    """The frontmatter is not read; `reason` is one line for `list`, `doctor` and the memory tool."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Malformed(Refused):
    """Not valid YAML at all (a typo, an unquoted `: `): the caller may fall back to a lenient read.
    A plain `Refused` is a bound an ordinary header never reaches: nothing of it should be trusted."""


class _Loader(_BASE_LOADER):
    """The safe loader, except that an over-long integer stays text."""


def _construct_int(loader: Any, node: yaml.ScalarNode) -> object:
    text = str(node.value)
    if len(text) > MAX_INT_CHARS:
        return text
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _line(event: yaml.Event) -> str:
    mark = getattr(event, "start_mark", None)
    return f" at line {mark.line + 2}" if mark is not None else ""  # +2: the opening '---' and 1-based


def _check_events(text: str) -> None:
    """Refuse aliases, anchors and deep nesting by reading only the event stream (linear, no values built)."""
    depth = 0
    for count, event in enumerate(yaml.parse(text, Loader=_BASE_LOADER)):
        if count > MAX_EVENTS:
            raise Refused(f"frontmatter holds over {MAX_EVENTS:,} values{_line(event)}; "
                          "keep long lists in the body")
        if isinstance(event, yaml.AliasEvent):
            raise Refused(f"YAML alias *{event.anchor}{_line(event)} is not allowed in frontmatter; "
                          "write the value out instead")
        anchor = getattr(event, "anchor", None)  # scalars and collections carry one when written `&name`
        if anchor is not None:
            raise Refused(f"YAML anchor &{anchor}{_line(event)} is not allowed in frontmatter; remove it")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise Refused(f"frontmatter nests deeper than {MAX_DEPTH} levels{_line(event)}; "
                              "use flat key: value lines")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _where(exc: BaseException) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f" at line {mark.line + 2}" if mark is not None else ""


def _describe(exc: BaseException) -> str:
    where = _where(exc)
    reason = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"malformed YAML frontmatter{where} ({reason})"


def load(text: str) -> object:
    """The YAML value of a header's text, within the bounds above; `Refused` (one line) otherwise."""
    if len(text) > MAX_CHARS:
        raise Refused(f"frontmatter is {len(text):,} characters, over the {MAX_CHARS:,} memdir reads; "
                      "move the long text into the body")
    try:
        _check_events(text)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except Refused:
        raise
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):  # PyYAML 6.0.4+ stops deep nesting itself, before our event check
            raise Refused(f"frontmatter nests too deep{_where(exc)}; use flat key: value lines") from None
        raise Malformed(_describe(exc)) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # ValueError covers a timestamp like 2026-02-31 and text the C reader cannot encode (a lone surrogate)
        raise Malformed(_describe(exc)) from None


class Dumper(yaml.SafeDumper):
    """What memdir writes frontmatter with: never an anchor or alias, so `load` reads back all it writes
    (SafeDumper would emit `&id001` for a value that appears twice)."""

    def ignore_aliases(self, data: object) -> bool:
        return True
