"""Default names and descriptions for a memory a person or a decision did not name."""

from __future__ import annotations

import re

from memdir import constants as C

NAME_WORDS = 8


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return (match.group(1) if match else flat).rstrip(".")


def default_name(text: str) -> str:
    words = _first_sentence(text).split()
    name = " ".join(words[:NAME_WORDS])
    if len(words) > NAME_WORDS:
        name += "…"
    return (name[:1].upper() + name[1:])[: C.NAME_MAX_CHARS]


def default_description(text: str) -> str:
    sentence = _first_sentence(text)
    limit = C.INDEX_LINE_TARGET
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"
