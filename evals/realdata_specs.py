"""What the realdata suite expects of each session, and when a saved memory counts as an expected one.

The suite's own cases (evals/cases/realdata.yaml) and the sessions2 format's items.json (sessions2/ and any blind
set passed with --data): an item is found when a saved memory of its type holds every keyword, matched as that
data's README prescribes. The grading of one session against its spec is here too; running the sessions is
evals/realdata.py.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, field_validator

from memdir.errors import MemdirError
from memdir.evals.items_file import Item, ItemsFileError, read_items

CASES = Path(__file__).with_name("cases") / "realdata.yaml"


class Expected(BaseModel):
    what: str
    type: list[str] = Field(default_factory=list)  # empty: any type
    terms: list[list[str]]
    substring: bool = False  # sessions2's keywords are stems ("подтвержд"): matched inside words

    @field_validator("type", mode="before")
    @classmethod
    def _one_or_many(cls, value):
        return [value] if isinstance(value, str) else (value or [])

    def matches(self, memory: dict, any_type: bool = False) -> bool:
        """`any_type`: the content alone (the type ignored), for the report's second reading."""
        if self.type and memory["type"] not in self.type and not any_type:
            return False
        text = _comparable(memory["text"])
        if self.substring:
            return all(any(_comparable(term) in text for term in group) for group in self.terms)
        return all(any(_has_term(text, _comparable(term)) for term in group) for group in self.terms)


class SessionSpec(BaseModel):
    expect: list[Expected] = Field(default_factory=list)
    acceptable: list[Expected] = Field(default_factory=list)
    forbidden: list[Expected] = Field(default_factory=list)


class Suite(BaseModel):
    held_out: list[str]
    sessions: dict[str, SessionSpec]


class EvalError(MemdirError):
    """The run cannot give true figures (an extraction failed, the relay timed out, a replay missed)."""


# Scripts written without spaces between words (Han, kana), their punctuation and full-width forms. Korean
# Hangul is written with spaces, so it is not among them.
_UNSPACED = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_SPACE = re.compile(rf"\s+(?=[{_UNSPACED}])|(?<=[{_UNSPACED}])\s+")
# A word character of a spaced script: what must not touch a whole word's ends ("act" in "react").
_SPACED_WORD = rf"[^\W{_UNSPACED}]|-"
_LATIN_MARKS = re.compile("(?<=[a-zA-Z])[\u0300-\u036f]+")  # combining accents, in NFD, after a Latin letter


def _cjk_joined(text: str) -> str:
    """`text` without whitespace next to an unspaced script's character: Chinese typesetting writes "UI 界面"
    and "ob 中" where a keyword says "ui界面", "ob中". Whitespace between two Latin words is kept."""
    return _CJK_SPACE.sub("", text)


def _unaccented(text: str) -> str:
    """`text` without the accents on Latin letters: a keyword copies the user's typing ("lambda de api unico",
    "deprecier") while a memory spells the language properly ("único", "déprécier"). Only marks on a-z go: kana's
    dakuten and Cyrillic й keep theirs, as they make another letter."""
    return unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))


def _comparable(text: str) -> str:
    """What keywords are looked for in, and what they are turned into: lower case, no space beside CJK, no accents."""
    return _unaccented(_cjk_joined(text.lower()))


def _has_term(text: str, term: str) -> bool:
    """A whole-word (or whole-phrase) occurrence: "act" must not match "actually" or "react". Han and kana
    have no word breaks, so only what touches the term is checked, and only a spaced script's letter counts."""
    return re.search(rf"(?<!{_SPACED_WORD})" + re.escape(term.lower()) + rf"(?!{_SPACED_WORD})", text) is not None


def load_suite(path: Path = CASES) -> Suite:
    return Suite.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def sessions2_specs(root: Path) -> dict[str, SessionSpec]:
    """sessions2/items.json as session specs: `sessions2/<file stem>` -> its items (none: a nothing session)."""
    specs: dict[str, SessionSpec] = {}
    for item in _items(root / "sessions2" / "items.json"):
        _add_item(specs.setdefault(f"sessions2/{Path(item.file).stem}", SessionSpec()), item)
    return specs


def items_specs(folder: Path) -> dict[str, SessionSpec]:
    """An outside folder's items.json (the sessions2 format) as specs keyed `<folder name>/<file stem>`; a transcript
    in the folder that items.json does not name is a nothing session."""
    items = _items(folder / "items.json")
    specs = {f"{folder.name}/{t.stem}": SessionSpec() for t in sorted(folder.glob("*.jsonl"))}
    for item in items:
        key = f"{folder.name}/{Path(item.file).stem}"
        if key not in specs:
            raise EvalError(f"{folder / 'items.json'}: {item.file} is not a transcript in {folder}")
        _add_item(specs[key], item)
    return specs


def _items(path: Path) -> list[Item]:
    try:
        return read_items(path)
    except ItemsFileError as exc:
        raise EvalError(str(exc)) from None


def _add_item(spec: SessionSpec, item: Item) -> None:
    """An item's keywords, each a stem matched inside words, as the data's README prescribes."""
    if not item.nothing:
        spec.expect.append(Expected(what=item.text, type=item.type, substring=True,
                                    terms=[[keyword] for keyword in item.keywords]))


def grade_session(spec: SessionSpec, memories: list[dict]) -> dict:
    matched = [any(e.matches(m) for m in memories) for e in spec.expect]
    unmatched, forbidden = [], []
    for m in memories:
        if any(e.matches(m) for e in spec.forbidden):
            forbidden.append(m)
        if not any(e.matches(m) for e in [*spec.expect, *spec.acceptable]):
            unmatched.append(m)
    missed = [e.what for e, ok in zip(spec.expect, matched, strict=True) if not ok]
    # The same with types ignored: most of a model's strict misses are the annotated content under another type,
    # which the strict figures cannot tell from content nobody saved.
    found_any = sum(any(e.matches(m, any_type=True) for m in memories) for e in spec.expect)
    right_any = sum(any(e.matches(m, any_type=True) for e in [*spec.expect, *spec.acceptable]) for m in memories)
    return {"expected": len(spec.expect), "found": sum(matched), "missed": missed, "found_any_type": found_any,
            "saved_right_any_type": right_any, "saved": len(memories), "unmatched": unmatched, "forbidden": forbidden,
            "memories": [{k: m.get(k) for k in ("file", "type", "description")} for m in memories]}
