"""Decision-capture cases: (prompt, expected kind or None, confidence band).

Bands: "high" >= 0.7 (promoted to a memory file), "mid" 0.4-0.7 (journal and graph only), "-" for none.
TUNING cases were looked at while writing the rules; HELD_OUT cases were written at the same time but the
rules were not changed to fit them, and their figure is reported apart:

    .venv/bin/python -m tests.decision_cases
"""

from __future__ import annotations

TUNING: list[tuple[str, str | None, str]] = [
    # decisions (SPEC §8 phrases and close variants)
    ("Let's use PostgreSQL for the analytics database because we need JSONB and vector support.", "decision", "high"),
    ("We decided to use cursor-based pagination for all list endpoints.", "decision", "high"),
    ("We chose Vitest over Jest since it shares the Vite config.", "decision", "high"),
    ("Going with JWT tokens for auth, not session cookies.", "decision", "high"),
    ("ok so let's go with Redis for the job queue", "decision", "high"),
    ("We'll switch from npm to pnpm for the monorepo.", "decision", "high"),
    ("Maybe we could go with Kafka for this, not sure yet.", "decision", "mid"),
    # preferences
    ("I prefer TypeScript over JavaScript for new modules.", "preference", "high"),
    ("Always run ruff before committing.", "preference", "high"),
    ("Please don't mock the database in integration tests, we got burned by that.", "preference", "high"),
    ("From now on put new helpers in utils/ with a test next to them.", "preference", "high"),
    ("Never push directly to main.", "preference", "high"),
    # problems and anti-patterns
    ("The issue is that the worker is blocked by the migration lock.", "problem", "mid"),
    ("CI keeps failing on the macOS runner.", "problem", "mid"),
    ("Never again: the shared Redis cache caused an outage because eviction dropped sessions.", "anti-pattern", "high"),
    ("Offset pagination didn't scale because the orders table has 40M rows.", "anti-pattern", "high"),
    # negatives: questions, task chatter, pasted output
    ("Should we use Redis here?", None, "-"),
    ("What does the pagination helper return?", None, "-"),
    ("fix the typo in the README", None, "-"),
    ("run the tests again", None, "-"),
    ("Can you refactor the login handler to be async?", None, "-"),
    ("```\nuse std::io;\nlet's use this\n```", None, "-"),
    ("Traceback (most recent call last):\n  File \"app.py\", line 3\nValueError: because reasons", None, "-"),
    ("thanks, looks good", None, "-"),
]

# Sentences from ../shared/realdata/ (found there by a substring; the whole user block is captured).
REALDATA: list[tuple[str, str | None, str]] = [
    ("use pnpm", "preference", "high"),  # typed as the reason for rejecting an `npm install` tool call
    ("I'd actually love that test to be saved a permanent unit test", "preference", "high"),
    ("I don't want to make it only work for me or make assumptions about people's env", "preference", "high"),
    ("was blocked because of a disallowed MIME type", None, "-"),  # a pasted browser console error
    ("now we have cache so we should change TUI that it launches the session HTML page", None, "-"),
    ("don't use ClMail for communication", "preference", "high"),
    ("Does this doc page help?", None, "-"),  # a pasted uv doc page follows: not the user's words
    ("I'd like to ask you to add a `<details>` element", None, "-"),  # a request, not a rule
    ("Use the Explore task in sub-agents with Haiku model", None, "-"),  # a one-off instruction
]

HELD_OUT: list[tuple[str, str | None, str]] = [
    ("We agreed to keep the API versioned under /v2 because mobile clients lag behind.", "decision", "high"),
    ("let's stick with SQLite for the CLI, a server would be overkill", "decision", "high"),
    ("I'd rather you write small commits with clear messages.", "preference", "high"),
    ("Don't add new dependencies without asking me first.", "preference", "high"),
    ("Using a global lock was a mistake, it serialised every request.", "anti-pattern", "high"),
    ("We're blocked by the vendor's rate limit on the export endpoint.", "problem", "mid"),
    ("Is Docker required for local development?", None, "-"),
    ("add a --verbose flag to the import command", None, "-"),
    ("perhaps we should use GraphQL later on", "decision", "mid"),
    ("looks like the build passed", None, "-"),
]


def band(confidence: float) -> str:
    return "high" if confidence >= 0.7 else "mid" if confidence >= 0.4 else "low"


def outcome(text: str) -> tuple[str | None, str]:
    from memdir.stages.extractor.capture import capture_text

    found = capture_text(text, project="demo")
    if not found:
        return None, "-"
    first = found[0].decision
    return first.kind, band(first.confidence)


def accuracy(cases: list[tuple[str, str | None, str]]) -> tuple[int, int]:
    return sum(outcome(text) == (kind, b) for text, kind, b in cases), len(cases)


if __name__ == "__main__":
    for label, cases in (("tuning", TUNING), ("held-out", HELD_OUT)):
        right, total = accuracy(cases)
        print(f"{label:>9}: {right}/{total} kind+band correct")
        for text, kind, b in cases:
            got = outcome(text)
            if got != (kind, b):
                print(f"           miss: {text[:60]!r} expected {(kind, b)} got {got}")
