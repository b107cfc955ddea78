"""Tier 3: promotion into typed memory files, dedup by meaning, and OrchestKit's MEMORY.md section."""

from __future__ import annotations

from memdir import compat, constants as C
from memdir.decisions import Decision, read_journal
from memdir.model import Memory, MemoryType
from memdir.paths import decisions_dir
from memdir.stages.extractor.capture import capture_text
from memdir.stages.extractor.decision_pipeline import record
from memdir.stages.extractor.promote import memory_type_for, promote, similarity
from memdir.store import MemoryStore


def d(what: str, kind: str = "decision", confidence: float = 0.8, **kw) -> Decision:
    return Decision(kind=kind, what=what, confidence=confidence, **kw)


def test_threshold_is_point_seven(store):
    assert promote(store, d("Use Redis for the job queue", confidence=0.69)).action == "skipped"
    assert not store.scan().headers
    made = promote(store, d("Use Redis for the job queue", confidence=0.7))
    assert made.action == "created"
    assert made.rel_path in store.index()  # through the store: the index line is there


def test_kinds_map_to_memory_types_with_why(store):
    assert memory_type_for(d("Use pnpm", kind="preference")) is MemoryType.feedback
    assert memory_type_for(d("I install Python tools with uv tool", kind="preference")) is MemoryType.user
    assert memory_type_for(d("Cursor pagination for list endpoints")) is MemoryType.project
    failed = promote(store, d("One Redis for cache and sessions", kind="anti-pattern",
                              why="eviction logged everyone out"))
    memory = store.load(failed.rel_path)
    assert memory.type is MemoryType.feedback
    assert "Avoid: One Redis for cache and sessions" in memory.body
    assert f"{C.WHY_PREFIX} eviction logged everyone out" in memory.body
    no_reason = store.load(promote(store, d("Mocking the payment gateway in e2e tests", kind="anti-pattern")).rel_path)
    assert "it failed before (Mocking the payment gateway" in no_reason.body


def test_restated_decision_updates_the_memory_instead_of_adding_one(store):
    first = promote(store, d("Let's use PostgreSQL for the analytics database", why="we need JSONB and vector support",
                             entities=["PostgreSQL"]))
    again = promote(store, d("We're going with Postgres for analytics", why="JSONB support matters",
                             entities=["PostgreSQL"]))
    assert (first.action, again.action) == ("created", "updated")
    assert again.rel_path == first.rel_path and len(store.scan().headers) == 1
    assert "We're going with Postgres for analytics" in store.load(first.rel_path).body
    from memdir import history

    [old] = history.versions(store.state_dir, first.rel_path)  # the old version is kept, not lost
    assert b"Let's use PostgreSQL for the analytics database" in old.read() and again.kept
    other = promote(store, d("Use PostgreSQL for the orders service", entities=["PostgreSQL"]))
    assert other.action == "created" and len(store.scan().headers) == 2  # same technology, different decision


def test_similarity_separates_restatements_from_neighbours():
    a = "Let's use PostgreSQL for the analytics database because we need JSONB"
    assert similarity(a, "We're going with Postgres for analytics since JSONB support matters") >= C.DEDUP_MIN_SIMILARITY
    assert similarity(a, "Use PostgreSQL for the orders service") < C.DEDUP_MIN_SIMILARITY
    assert similarity(a, "Always run ruff before committing") < 0.2


def test_a_hand_written_memory_that_says_the_same_is_left_alone(store):
    hand = Memory(name="Package manager", description="use pnpm, never npm, for this repo", type=MemoryType.feedback,
                  body="Use pnpm, never npm.\n\n**Why:** lockfile\n**How to apply:** always")
    saved = store.save(hand)
    before = saved.path.read_bytes()
    result = promote(store, d("Always use pnpm instead of npm", kind="preference"))
    assert result.action == "skipped" and "by hand" in result.reason
    assert saved.path.read_bytes() == before and len(store.scan().headers) == 1


def test_compat_section_newest_first_dedup_and_cap(store):
    store.save(Memory(name="Deploys", description="deploy on Fridays is banned", type=MemoryType.project,
                      body="No Friday deploys.\n\n**Why:** x\n**How to apply:** y"))
    index_before = store.index()
    promote(store, d("Use cursor-based pagination for all list endpoints", why="stable under inserts",
                     entities=["cursor-pagination"]), compat_section=True)
    promote(store, d("Prefer TypeScript over JavaScript for new modules", kind="preference"), compat_section=True)
    text = store.index()
    assert text.startswith(index_before.rstrip("\n"))  # other index lines untouched, in place
    assert compat.section_entries(text) == ["- **[Preference]** Prefer TypeScript over JavaScript for new modules",
                                            "- **[Decision]** Use cursor-based pagination for all list endpoints"]
    assert "_(because: stable under inserts)_\n`cursor-pagination`" in text
    # the same first 50 chars again: skipped
    changed = compat.add_entry(text, "decision", "Use cursor-based pagination for all list endpoints, v2", None, [])[1]
    assert not changed
    for i in range(60):
        text = compat.add_entry(text, "note", f"Decision number {i:02d} about module {i}", None, [])[0]
    entries = compat.section_entries(text)
    assert len(entries) == C.COMPAT_MAX_ENTRIES
    assert entries[0] == "- **[Note]** Decision number 59 about module 59"
    assert text.count(C.COMPAT_ARCHIVED_MARKER) == 1
    assert "Decision number 09 " not in text and "Decision number 10 " in text
    assert "- [Deploys](project_deploys.md)" in text


def test_index_rebuild_keeps_the_section(store):
    promote(store, d("Use cursor-based pagination for all list endpoints"), compat_section=True)
    store.rebuild_index()
    assert len(compat.section_entries(store.index())) == 1


def test_pipeline_promotes_only_high_confidence(tmp_path):
    memory = tmp_path / "memory"
    captured = capture_text("Let's use Redis for the job queue because it is already deployed. "
                            "Maybe we could try Kafka for the event bus.", project="shop")
    outcome = record(captured, folder=decisions_dir(memory, tmp_path / "shop", compat=False), memory_dir=memory)
    assert len(outcome.journaled) == 2
    assert [p.action for p in outcome.promotions] == ["created", "skipped"]
    assert len(MemoryStore(memory).scan().headers) == 1


def test_remember_cli_success_failed_global(tmp_path, cli, isolated_home):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    memory = tmp_path / "memory"
    base = ("--cwd", str(project), "--dir", str(memory), "remember")
    code, out, _ = cli(*base, "Circuit breaker with a 5s timeout for external API calls", "--success",
                       "--orchestkit-compat")
    assert code == 0 and "recorded pattern" in out and "Recent Project Decisions" in out
    code, out, _ = cli(*base, "One Redis for cache and sessions, because eviction logged users out", "--failed")
    assert code == 0 and "memory: created feedback_" in out
    code, out, _ = cli(*base, "Validate input at API boundaries", "--global")
    assert code == 0
    in_repo = read_journal(decisions_dir(memory, project, compat=True)).decisions  # --orchestkit-compat: the old layout
    in_memory = read_journal(decisions_dir(memory, project, compat=False)).decisions  # the default
    assert [(d.kind, d.scope, d.source) for d in in_repo] == [("pattern", "user", "explicit")]
    assert [(d.kind, d.scope, d.source) for d in in_memory] == [("anti-pattern", "user", "explicit"),
                                                                ("decision", "global", "explicit")]
    assert all(d.confidence >= 0.85 for d in in_repo + in_memory)
    shared = (isolated_home / ".claude" / "memdir" / "decisions-global.jsonl").read_text()
    assert "Validate input at API boundaries" in shared and '"project": ""' in shared
    feedback = next(memory.glob("feedback_*.md")).read_text()
    assert "Avoid: One Redis for cache and sessions" in feedback and "**Why:** Eviction logged users out" in feedback
    assert "- **[Pattern]** Circuit breaker" in (memory / "MEMORY.md").read_text()
    code, out, _ = cli(*base, "Every service exposes /healthz for the load balancer", "--team", "--success")
    assert code == 0 and list((memory / "team").glob("project_*.md"))  # the team's folder, scope team
    assert read_journal(decisions_dir(memory, project, compat=False)).decisions[-1].scope == "team"
    code, _, err = cli(*base, "no type and no flag")
    assert code == 2 and "pass --type" in err
    code, out, _ = cli(*base, "Circuit breaker with a 5s timeout for external API calls", "--success",
                       "--orchestkit-compat")
    assert "already in the journal" in out


def test_secrets_never_reach_the_repo_journal(tmp_path):
    text = "Let's use the key sk-ant-api03-" + "a" * 90 + " for the staging deploy."
    outcome = record(capture_text(text), folder=decisions_dir(tmp_path / "memory", tmp_path, compat=True),
                     memory_dir=None)
    assert not outcome.journaled and "skipped a decision" in outcome.errors[0]
    assert not (tmp_path / ".claude" / "memory" / "decisions.jsonl").exists()
