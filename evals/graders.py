"""Graders: deterministic checks for extraction and recall; an LLM judge only for rubric criteria."""

from __future__ import annotations

import re

from pydantic import BaseModel

from memdir import constants as C
from memdir.evals.cases import ExtractionCase, RecallCase


class Grade(BaseModel):
    check: str
    passed: bool
    reason: str = ""


_TYPE_LINE = re.compile(r"^type:\s*(\w+)", re.M)


def _type_of(text: str) -> str | None:
    match = _TYPE_LINE.search(text)
    return match.group(1) if match else None


def grade_extraction(case: ExtractionCase, before: dict[str, str], after: dict[str, str]) -> list[Grade]:
    """`before`/`after`: memory file name -> text, excluding MEMORY.md."""
    created = [f for f in after if f not in before]
    updated = [f for f in after if f in before and after[f] != before[f]]
    deleted = [f for f in before if f not in after]
    touched = {f: after[f] for f in created + updated}
    expect = case.expect
    grades: list[Grade] = []

    for n, want in enumerate(expect.memories, 1):
        label = f"memory #{n}" + (f" ({want.type.value})" if want.type else "")
        candidates = []
        for rel, text in touched.items():
            if want.type and f"type: {want.type.value}" not in text:
                continue
            if want.match and not re.search(want.match, text, re.I):
                continue
            if any(k.lower() not in text.lower() for k in want.keywords):
                continue
            candidates.append((rel, text))
        if not candidates:
            wanted = ", ".join(filter(None, [want.match and f"/{want.match}/", *want.keywords]))
            grades.append(Grade(check=label, passed=False, reason=f"no created or updated memory matches {wanted or 'the type'}"))
            continue
        rel, text = candidates[0]
        problems = []
        if want.why_how and (C.WHY_PREFIX not in text or C.HOW_PREFIX not in text):
            problems.append("lacks **Why:** / **How to apply:**")
        if want.date and want.date.isoformat() not in text:
            problems.append(f"lacks the absolute date {want.date.isoformat()}")
        grades.append(Grade(check=label, passed=not problems, reason="; ".join(problems) or f"found in {rel}"))

    for pattern in expect.forbid:
        hits = [rel for rel, text in touched.items() if re.search(pattern, text, re.I)]
        grades.append(Grade(check=f"forbid /{pattern}/", passed=not hits, reason=f"written to {', '.join(hits)}" if hits else ""))
    for rel in expect.updated:
        kind = _type_of(before.get(rel, ""))
        dupes = [f for f in created if kind and _type_of(after[f]) == kind]
        if rel not in updated:
            reason = "not updated" + (f"; a new {kind} memory was created instead: {', '.join(dupes)}" if dupes else "")
        else:
            reason = f"updated, but also duplicated as {', '.join(dupes)}" if dupes else ""
        grades.append(Grade(check=f"update {rel}", passed=rel in updated and not dupes, reason=reason))
    for rel in expect.deleted:
        grades.append(Grade(check=f"delete {rel}", passed=rel in deleted, reason="" if rel in deleted else "still there"))
    for rel in expect.kept:
        kept = rel in after and after.get(rel) == before.get(rel)
        grades.append(Grade(check=f"keep {rel}", passed=kept, reason="" if kept else "changed or deleted"))
    if expect.max_files is not None:
        count = len(created) + len(updated)
        grades.append(Grade(check=f"at most {expect.max_files} files", passed=count <= expect.max_files,
                            reason=f"{count} written" if count > expect.max_files else ""))
    if expect.max_created is not None:
        grades.append(Grade(check=f"at most {expect.max_created} new files", passed=len(created) <= expect.max_created,
                            reason=f"created {', '.join(created)}" if len(created) > expect.max_created else ""))
    if expect.nothing:
        changed = created + updated + deleted
        grades.append(Grade(check="nothing saved", passed=not changed, reason=f"wrote {', '.join(changed)}" if changed else ""))
    return grades


def grade_recall(case: RecallCase, selected: list[str]) -> list[Grade]:
    grades = [
        Grade(check=f"select {f}", passed=f in selected, reason="" if f in selected else f"selected {selected or 'nothing'}")
        for f in case.expect
    ]
    grades += [Grade(check=f"not {f}", passed=f not in selected, reason="" if f not in selected else "selected") for f in case.forbid]
    if case.max_selected is not None:
        grades.append(Grade(check=f"at most {case.max_selected} selected", passed=len(selected) <= case.max_selected,
                            reason=f"selected {len(selected)}" if len(selected) > case.max_selected else ""))
    if case.expect_none:
        grades.append(Grade(check="select nothing", passed=not selected, reason=f"selected {selected}" if selected else ""))
    return grades
