"""An items.json (the format of shared/realdata/sessions2/items.json): read, checked, and refused in one line.

A blind set kept outside the repository is graded from its own items.json (`memdir eval run --data DIR`), written by
hand: a missing comma or a field spelled wrong must name the file, the item and the fix, not end in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memdir import fsio
from memdir.errors import MemdirError

ITEMS_MAX_BYTES = 4 * 1024 * 1024  # a set's items are a few hundred lines; anything this big is not one


class ItemsFileError(MemdirError):
    """An items.json that cannot be graded from."""


class Item(BaseModel):
    """One annotated item: `file` is the transcript's name; a `nothing` item marks a session with nothing to save."""

    model_config = ConfigDict(extra="allow")  # the sets carry their own notes (quote, why, lang): kept, not read

    file: str = Field(min_length=1)
    nothing: bool = False
    type: list[str] = Field(default_factory=list)  # one type, or several a memory may have

    @field_validator("type", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value
    text: str = ""
    keywords: list[str] = Field(default_factory=list)


def read_items(path: Path) -> list[Item]:
    """The items of `path`; ItemsFileError naming the file (and the item) and what to fix when they cannot be read."""
    try:
        data = json.loads(fsio.read_text(path, ITEMS_MAX_BYTES))
    except (OSError, MemdirError) as exc:
        raise ItemsFileError(f"{path}: cannot read it ({exc}); pass a folder whose items.json is a readable file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ItemsFileError(f"{path}: not valid JSON ({exc}); fix the file (a list of items, as sessions2's)") from None
    if not isinstance(data, list):
        raise ItemsFileError(f"{path}: a JSON list of items is expected, not {type(data).__name__}")
    items = []
    for n, raw in enumerate(data, 1):
        try:
            item = Item.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the item"
            raise ItemsFileError(f"{path}: item {n}: field '{where}': {first['msg']}") from None
        if not item.nothing and not (item.keywords and item.type):
            raise ItemsFileError(f"{path}: item {n} ({item.file}): give it 'type' and 'keywords', or \"nothing\": true")
        items.append(item)
    return items
