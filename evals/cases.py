"""Eval case files: YAML, one case or a list of cases per file, validated with pydantic.

A bad case is reported as one line naming the file, the case and the field; the other cases
still run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from memdir.evals.cli import SUITE_NAMES
from memdir.model import MemoryType

SUITES = SUITE_NAMES  # the one list of suites lives with the CLI, which must not import pydantic
CASES_DIR = Path(__file__).resolve().parent / "cases"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeedMemory(_Strict):
    """A memory that exists before the case runs."""

    file: str = Field(pattern=r"^[A-Za-z0-9_.-]+\.md$")
    name: str
    description: str
    type: MemoryType
    body: str = ""
    age_days: int = Field(0, ge=0)


class TranscriptMessage(_Strict):
    role: Literal["user", "assistant"]
    content: str | list[dict]
    timestamp: str | None = None


class ExpectedMemory(_Strict):
    type: MemoryType | None = None
    match: str | None = None  # regex over name + description + body, case-insensitive
    keywords: list[str] = Field(default_factory=list)  # every one must appear (case-insensitive)
    why_how: bool = False
    date: dt.date | None = None  # this absolute date must appear (ISO)


class ExtractionExpect(_Strict):
    memories: list[ExpectedMemory] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)  # regexes no written memory may match
    updated: list[str] = Field(default_factory=list)  # seeded files that must be updated in place
    deleted: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)  # seeded files that must survive untouched
    max_files: int | None = Field(None, ge=0)  # files created or updated, at most
    max_created: int | None = Field(None, ge=0)  # new files, at most (0: update, never duplicate)
    nothing: bool = False  # nothing at all may be written


class _Case(_Strict):
    id: str
    tags: list[str] = Field(default_factory=list)


class ExtractionCase(_Case):
    suite: Literal["extraction"] = "extraction"
    today: dt.date
    transcript: list[TranscriptMessage] | None = None
    transcript_path: str | None = None
    existing: list[SeedMemory] = Field(default_factory=list)
    expect: ExtractionExpect

    @model_validator(mode="after")
    def _one_transcript(self) -> ExtractionCase:
        if (self.transcript is None) == (self.transcript_path is None):
            raise ValueError("give exactly one of transcript (inline messages) or transcript_path")
        return self


class RecallCase(_Case):
    suite: Literal["recall"] = "recall"
    memories: list[SeedMemory] = Field(min_length=1)
    query: str
    tools: list[str] = Field(default_factory=list)
    expect: list[str] = Field(default_factory=list)  # files that must be selected
    forbid: list[str] = Field(default_factory=list)  # files that must not be
    expect_none: bool = False  # nothing should be selected
    max_selected: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _known_files(self) -> RecallCase:
        files = {m.file for m in self.memories}
        unknown = [f for f in (*self.expect, *self.forbid) if f not in files]
        if unknown:
            raise ValueError(f"expect/forbid name files not in memories: {', '.join(unknown)}")
        if not (self.expect or self.forbid or self.expect_none or self.max_selected is not None):
            raise ValueError("a recall case needs expect, forbid, expect_none or max_selected")
        return self


class BehaviourCase(_Case):
    suite: Literal["behaviour"] = "behaviour"
    memories: list[SeedMemory] = Field(default_factory=list)
    context: str = ""  # facts about the workspace the agent is told (e.g. which files exist now)
    project: dict[str, str] = Field(default_factory=dict)  # files of a project the memories are verified against
    prompt: str
    rubric: list[str] = Field(min_length=1)


CASE_MODELS: dict[str, type[ExtractionCase] | type[RecallCase] | type[BehaviourCase]] = {
    "extraction": ExtractionCase, "recall": RecallCase, "behaviour": BehaviourCase}
Case = ExtractionCase | RecallCase | BehaviourCase


class CaseError(BaseModel):
    file: str
    message: str


def _field_path(error: ErrorDetails) -> str:
    return ".".join(str(p) for p in error["loc"]) or "case"


def load_file(path: Path, suite: str) -> tuple[list[Case], list[CaseError]]:
    model = CASE_MODELS[suite]
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        return [], [CaseError(file=str(path), message=f"cannot read YAML: {str(exc).splitlines()[0]}")]
    items = data if isinstance(data, list) else [data]
    cases: list[Case] = []
    errors: list[CaseError] = []
    for n, item in enumerate(items, 1):
        label = item.get("id", f"#{n}") if isinstance(item, dict) else f"#{n}"
        if not isinstance(item, dict):
            errors.append(CaseError(file=str(path), message=f"case {label}: must be a mapping"))
            continue
        try:
            case = model.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            errors.append(CaseError(file=str(path), message=f"case {label}: field '{_field_path(first)}': {first['msg']}"))
            continue
        if case.suite == "extraction" and case.transcript_path:
            resolved = (path.parent / case.transcript_path).resolve()
            if not resolved.exists():
                errors.append(CaseError(file=str(path), message=f"case {label}: field 'transcript_path': {resolved} not found"))
                continue
            case.transcript_path = str(resolved)
        cases.append(case)
    return cases, errors


def load_suite(suite: str, root: Path | None = None) -> tuple[list[Case], list[CaseError]]:
    folder = (root or CASES_DIR) / suite
    cases: list[Case] = []
    errors: list[CaseError] = []
    for path in sorted(folder.glob("*.y*ml")):
        found, bad = load_file(path, suite)
        cases.extend(found)
        errors.extend(bad)
    seen: set[str] = set()
    for case in list(cases):
        if case.id in seen:
            errors.append(CaseError(file=str(folder), message=f"duplicate case id {case.id!r}"))
            cases.remove(case)
        seen.add(case.id)
    return cases, errors
