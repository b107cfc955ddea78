"""Behaviour cases: the agent answers with memory in context; an LLM judge grades the rubric."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from memdir.config import Settings
from memdir.evals.cases import BehaviourCase
from memdir.evals.graders import Grade
from memdir.llm import call_with_retries, make_client
from memdir.scan import scan
from memdir.stages.recall.inject import render_all

AGENT_MAX_TOKENS = 4096  # thinking counts toward it on every current model
JUDGE_EFFORT = "medium"


class Verdict(BaseModel):
    criterion: str
    passed: bool
    reason: str


class Verdicts(BaseModel):
    criteria: list[Verdict]


def recalled_context(case: BehaviourCase, memory_dir: Path) -> str:
    """The case's memories as recall injects them; verified against `case.project` when it has files."""
    headers = scan(memory_dir).headers
    evidence = None
    if case.project:
        from memdir.stages.recall.api import verify_selected

        root = memory_dir.parent / "project"
        for rel, text in case.project.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        evidence = verify_selected(str(root), memory_dir, headers, budget_s=5.0)
    return render_all(headers, now=time.time(), evidence=evidence)


def agent_reply(case: BehaviourCase, memory_dir: Path, settings: Settings, client, usage: dict) -> tuple[str, str]:
    """(situation shown to the judge, the agent's reply)."""
    from memdir import index as index_text
    from memdir.prompts import render
    from memdir.stages.extractor.agent import add_usage

    index = (memory_dir / "MEMORY.md").read_text(encoding="utf-8") if (memory_dir / "MEMORY.md").exists() else ""
    system = render("session_instructions.j2", memory_dir=str(memory_dir), include_index=True,
                    index=index_text.load_for_context(index))
    recalled = recalled_context(case, memory_dir)
    user = "\n\n".join(filter(None, [case.context and f"<workspace>\n{case.context}\n</workspace>", recalled, case.prompt]))
    from memdir.llm import thinking_options

    response = call_with_retries(
        lambda: client.messages.create(model=settings.extract_model, max_tokens=AGENT_MAX_TOKENS, system=system,
                                       messages=[{"role": "user", "content": user}],
                                       **thinking_options(settings.extract_model, think=True, effort="medium")),
        max_attempts=settings.max_attempts,
    )
    add_usage(usage, response.usage)
    reply = "\n".join(b.text for b in response.content if getattr(b, "type", "") == "text")
    if response.stop_reason not in ("end_turn", "stop_sequence"):
        reply += f"\n[the agent's reply ended with stop_reason={response.stop_reason}]"
    situation = "\n\n".join(filter(None, [case.context, recalled]))
    return situation, reply


def judge(case: BehaviourCase, situation: str, reply: str, settings: Settings, client, usage: dict) -> list[Grade]:
    from memdir import constants as C
    from memdir.llm import thinking_options
    from memdir.prompts import render
    from memdir.stages.extractor.agent import add_usage

    response = call_with_retries(
        lambda: client.messages.parse(
            model=settings.judge_model,
            max_tokens=C.JUDGE_MAX_TOKENS,
            **thinking_options(settings.judge_model, think=True, effort=JUDGE_EFFORT),
            system=render("judge_system.j2"),
            messages=[{"role": "user", "content": render("judge_user.j2", situation=situation, prompt=case.prompt,
                                                         reply=reply, rubric=case.rubric)}],
            output_format=Verdicts,
        ),
        max_attempts=settings.max_attempts,
    )
    add_usage(usage, response.usage)
    if response.stop_reason not in ("end_turn", "stop_sequence"):  # truncated or refused: no verdict, said so
        return [Grade(check=c, passed=False, reason=f"the judge gave no verdict (stop_reason={response.stop_reason})")
                for c in case.rubric]
    verdicts = response.parsed_output.criteria if response.parsed_output else []
    grades = []
    for n, criterion in enumerate(case.rubric):
        verdict = verdicts[n] if n < len(verdicts) else None
        if verdict is None:
            grades.append(Grade(check=criterion, passed=False, reason="the judge gave no verdict"))
        else:
            grades.append(Grade(check=criterion, passed=verdict.passed, reason=verdict.reason))
    return grades


def run_behaviour(case: BehaviourCase, memory_dir: Path, settings: Settings, client=None) -> tuple[list[Grade], dict, str]:
    client = client or make_client()
    usage: dict = {}
    situation, reply = agent_reply(case, memory_dir, settings, client, usage)
    return judge(case, situation, reply, settings, client, usage), usage, reply
