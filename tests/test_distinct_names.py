"""Issue 22 finding 6 and issue 21 "Names a person would give": distinct facts stay distinct, names in
any script make distinct readable file names, and a name carries the memory's distinctive words."""

from __future__ import annotations

import unicodedata
from datetime import date

import pytest

from memdir import constants as C, naming
from memdir.config import Settings
from memdir.daylog import append, entry_line
from memdir.entry import api
from memdir.entry.manual import remember
from memdir.errors import MemdirError
from memdir.model import Memory, kebab_slug
from memdir.stages.extractor import dream
from memdir.stages.extractor.offline import apply
from memdir.stages.extractor.tools import Toolbox
from memdir.store import MemoryStore, slugify
from memdir.transcript import Message

DAY = date(2026, 3, 2)
OWNED = [("billing service", "team payments"), ("auth service", "team identity"), ("search service", "team discovery")]


def _said(text: str) -> list[Message]:
    return [Message("user", [{"type": "text", "text": text}], uuid="u1", timestamp="2026-03-02T09:00:00Z")]


def _live(store: MemoryStore) -> list[str]:
    return sorted(h.rel_path for h in store.scan().headers)


def _bodies(store: MemoryStore) -> str:
    return "\n".join((store.root / rel).read_text() for rel in _live(store))


# --- distinct facts stay distinct ---------------------------------------------------------
def test_three_owned_by_requests_in_three_stop_runs_are_three_live_memories(store):
    for thing, owner in OWNED:
        outcome = apply(store, _said(f"Remember that the {thing} is owned by {owner}."), today=DAY)
        assert outcome.updated == [] and len(outcome.saved) == 1
    assert len(_live(store)) == 3
    for thing, owner in OWNED:
        assert f"{thing} is owned by {owner}" in _bodies(store)


@pytest.mark.parametrize("form", ["current", "legacy"])
def test_three_owned_by_remembers_are_three_memories_by_hand_and_through_the_api(memory_dir, monkeypatch, form):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", form)
    for thing, owner in OWNED:
        api.remember(f"The {thing} is owned by {owner}", type="project", folder=memory_dir)
        remember(MemoryStore(memory_dir), f"The {thing} is owned by {owner}", type_="project")  # again: no copy
    store = MemoryStore(memory_dir)
    assert len(_live(store)) == 3 and len({h.name for h in store.scan().headers}) == 3


@pytest.mark.slow
def test_dream_keeps_every_distinct_fact_live(memory_dir):
    shapes = ["The {s} service is owned by team {t}", "{s} deploys go through {t}", "Alerts for {s} page the {t} rota",
              "The {s} dashboard lives in {t}", "{s} builds run on {t} runners"]
    subjects = [f"{a}{b}" for a in ("ledger", "mailer", "gateway", "indexer", "router", "exporter", "tracker", "scanner")
                for b in ("", "v2", "api", "cron", "sync")]
    teams = ["payments", "identity", "platform", "growth", "data", "infra"]
    facts = [shape.format(s=s, t=teams[(i + j) % len(teams)]) for i, s in enumerate(subjects)
             for j, shape in enumerate(shapes[:3])]
    append(memory_dir, DAY, [entry_line("project", fact) for fact in facts])
    result = dream.dream(memory_dir, settings=Settings(engine="offline"), today=DAY)
    assert result.errors == []
    store = MemoryStore(memory_dir)
    assert len(_live(store)) == len(facts) == 120  # every distinct fact live, none merged into another
    bodies = _bodies(store)
    assert all(fact in bodies for fact in facts)
    append(memory_dir, DAY, [entry_line("project", facts[0]), entry_line("project", facts[-1])])
    dream.dream(memory_dir, settings=Settings(engine="offline"), today=DAY)
    assert len(_live(store)) == 120  # said again: already there, no copy


def test_an_explicit_correction_still_updates_the_memory_it_takes_back(store):
    first = apply(store, _said("Always use npm for installs."), today=DAY)
    corrected = apply(store, _said("No, don't use npm anymore, we moved to pnpm."), today=DAY)
    assert corrected.updated == first.saved and corrected.saved == []
    beside = apply(store, _said("Never deploy the billing service on Fridays."), today=DAY)
    other = apply(store, _said("Never deploy the auth service on Fridays."), today=DAY)  # not a correction of it
    assert beside.saved and other.saved and other.updated == [] and len(_live(store)) == 3


def test_same_name_with_other_content_gets_a_name_of_its_own_never_an_overwrite(store):
    first = store.save(Memory(name="Staging DB", description="where staging lives", type="reference",
                              body="Staging DB is at db.staging.internal"))
    before = first.path.read_bytes()
    second = store.save(Memory(name="staging db", description="the replica", type="reference",
                               body="The staging replica is at replica.staging.internal"))
    assert second.created and second.rel_path != first.rel_path and first.path.read_bytes() == before
    assert second.name_taken == "staging db" and second.name.lower().startswith("staging db ")
    assert "replica" in second.name.lower()  # told apart by a word the first memory does not have
    third = store.save(Memory(name="Staging DB", description="where staging lives", type="reference",
                              body="Staging DB is at db.staging.internal\n\n**Why:** checked in March"))
    assert third.rel_path == first.rel_path and third.kept  # the same fact: an update, old bytes kept
    with pytest.raises(MemdirError, match="already the name of"):
        store.rename(second.rel_path, "Staging DB")
    assert len(_live(store)) == 2


def test_a_different_type_under_the_same_name_is_told_apart(store):
    store.save(Memory(name="Deploys", description="d", type="reference", body="Deploys go through ArgoCD"))
    other = store.save(Memory(name="Deploys", description="d", type="feedback",
                              body="Announce deploys first\n\n**Why:** a\n**How to apply:** b"))
    assert other.name != "Deploys" and store.find(other.name).rel_path == other.rel_path


def test_the_extraction_agent_cannot_give_a_new_memory_another_memorys_name(memory_dir):
    store = MemoryStore(memory_dir)
    store.save(Memory(name="package-manager", description="npm", type="feedback",
                      body="Use npm.\n\n**Why:** a\n**How to apply:** b"), rel_path="feedback_package_manager.md")
    box = Toolbox(memory_dir)
    doc = "---\nname: Package manager\ndescription: {}\ntype: feedback\n---\n{}\n\n**Why:** a\n**How to apply:** b\n"
    refused = box.run("Write", {"file_path": "feedback_pm.md", "content": doc.format("yarn", "Use yarn.")})
    assert refused.is_error and "feedback_package_manager.md" in refused.content and not (memory_dir / "feedback_pm.md").exists()
    box.run("Read", {"file_path": "feedback_package_manager.md"})
    kept = box.run("Write", {"file_path": "feedback_package_manager.md", "content": doc.format("pnpm", "Use pnpm.")})
    assert not kept.is_error, kept.content  # an update under its own name is fine


# --- names in any script ---------------------------------------------------------------------
SCRIPTS = {
    "japanese": ["デプロイ手順", "テスト方針"],
    "chinese": ["部署流程", "测试策略"],
    "russian": ["Порядок деплоя", "Политика тестов"],
    "arabic": ["سياسة الاختبار", "خطوات النشر"],
}


@pytest.mark.parametrize("form", ["current", "legacy"])
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_names_in_any_script_make_distinct_readable_files(memory_dir, monkeypatch, form, script, cli):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", form)
    for name in SCRIPTS[script]:
        code, out, err = cli("--dir", str(memory_dir), "remember", f"{name}: the rule", "--type", "project",
                             "--name", name)
        assert code == 0, err
    store = MemoryStore(memory_dir)
    files = _live(store)
    assert len(files) == 2 and "project_memory.md" not in files
    for name, other in (SCRIPTS[script], SCRIPTS[script][::-1]):
        assert any(name.split()[0].lower() in f for f in files), files  # the letters are kept, not dropped
        text = store.find(name).path.read_text()
        assert f"{name}: the rule" in text and other not in text  # neither replaced the other


def test_japanese_facts_without_a_name_get_distinct_names_from_their_words(store):
    a = remember(store, "デプロイ手順はステージングで確認してから本番へ出すこと", type_="project")
    b = remember(store, "テスト方針：単体テストはモックなしで書く", type_="project")
    assert a.rel_path != b.rel_path and a.rel_path.startswith("project_デプロイ手順")
    assert "テスト方針" in b.rel_path and len(_live(store)) == 2


@pytest.mark.parametrize("text", [
    "デプロイ手順", "部署流程", "Порядок деплоя", "سياسة الاختبار", "Café résumé", "a/b\\c:d*e?f",
    "bell\x07 esc\x1b[31m rtl\u202eevil", "😀 emoji only 🚀", "漢" * 200, "𠀀" * 100, "x" * 300, "...", "",
    unicodedata.normalize("NFD", "デプロイ手順 café"),
])
def test_slugs_are_filesystem_safe(text):
    for sep in ("_", "-"):
        slug = naming.slug(text, sep)
        assert slug and slug == unicodedata.normalize("NFC", slug)
        assert not any(c in slug for c in "/\\\x00:*?\"<>|")
        assert all(unicodedata.category(c)[0] in "LNM" or c == sep for c in slug)
        assert len(slug) <= C.SLUG_MAX_CHARS and len(slug.encode()) <= C.SLUG_MAX_BYTES
    assert len(f"reference_{slugify(text)}_999.md".encode()) <= 143  # even eCryptfs's file-name limit


def test_accented_latin_folds_as_before_and_nfd_equals_nfc():
    assert slugify("Café policy") == "cafe_policy" and kebab_slug("Don't mock") == "dont-mock"
    assert slugify(unicodedata.normalize("NFD", "デプロイ手順")) == slugify("デプロイ手順") == "デプロイ手順"


# --- names a person would give -----------------------------------------------------------------
def test_the_pnpm_rule_is_named_by_its_distinctive_words(store, monkeypatch):
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "current")
    outcome = apply(store, _said("never use npm in this repo, use pnpm; the reason is the lockfile"), today=DAY)
    assert outcome.saved == ["feedback_use_pnpm_not_npm.md"]
    text = (store.root / "feedback_use_pnpm_not_npm.md").read_text()
    assert "name: use-pnpm-not-npm" in text and "**Why:** the lockfile" in text


@pytest.mark.parametrize("rule, name", [
    ("never use npm in this repo, use pnpm; the reason is the lockfile", "Use pnpm, not npm"),
    ("Use pnpm instead of npm here.", "Use pnpm, not npm"),
    ("Keep this approach: I rewrote the test to use the real test database", "Rewrote test real database"),
    ("The merge freeze for the mobile release starts next Thursday (2026-03-05)",
     "Merge freeze mobile Thursday 2026-03-05"),
    ("Bugs are tracked in Linear, project PAY, e.g. PAY-142", "Bugs tracked Linear PAY-142"),
    ("Don't add docstrings to private helpers.", "Never add docstrings private helpers"),
    ("デプロイ手順はステージングで確認してから本番へ出すこと", "デプロイ手順 ステージング 確認 本番 出"),
    ("Никогда не используй npm, используй pnpm", "Никогда не используй npm pnpm"),
    # a path is named by its last part, as a URL by its host (batch over the real claude-code-log folders
    # named one "Users/dain/workspace/online-llm-tokenizer github.com")
    ("I cloned the repo to /Users/dain/workspace/online-llm-tokenizer", "Cloned online-llm-tokenizer"),
    ("The design docs are in ~/work/docs/open-router.md", "Design docs open-router.md"),
])
def test_names_keep_tools_and_nouns_and_drop_filler(rule, name):
    assert naming.content_name(rule) == name


@pytest.mark.parametrize("rule", [
    "Remember that the quarterly reconciliation report for the European payments subsidiary is due on the 5th",
    "Integration tests must hit a real PostgreSQL 16 database provisioned by the docker-compose.test.yml file",
    "Always run `make lint-strict` and `make typecheck` before pushing anything to the release branches",
    "the on-call engineer for the ingestion pipeline can be reached through the #ingest-oncall Slack channel",
    "Supercalifragilisticexpialidocious-internationalization-configuration-management-service is deprecated",
])
def test_offline_names_never_cut_a_word_and_stay_within_the_limits(rule):
    name = naming.content_name(rule)
    said = {w.strip(".,;:`()#").lower() for w in rule.split()} | {p.lower() for w in rule.split() for p in w.split("-")}
    words = name.replace(",", "").split()
    assert 1 <= len(words) <= naming.NAME_WORDS + 1
    assert all(w.lower() in said or w.lower() in ("never", "use", "not") for w in words), name
    assert "-".join(naming.slug_words(name)) == kebab_slug(name) or len(words) == 1  # the slug holds every word
    assert len(name) <= C.NAME_MAX_CHARS


def test_existing_files_keep_their_names(store):
    old = "feedback_never_use_npm_in_this_repo_use.md"
    store.root.mkdir(parents=True)
    (store.root / old).write_text("---\nname: never-use-npm-in-this-repo-use\ndescription: Never use npm in this repo, "
                                  "use yarn\ntype: feedback\n---\nNever use npm in this repo, use yarn.\n\n"
                                  "**Why:** a\n**How to apply:** b\n")
    outcome = apply(store, _said("No, don't use npm, use pnpm in this repo."), today=DAY)
    assert outcome.updated == [old] and _live(store) == [old]
    assert "name: never-use-npm-in-this-repo-use" in (store.root / old).read_text()


def test_a_word_already_inside_a_longer_one_is_not_named_twice():
    from memdir.naming import content_name

    assert content_name("Tickets live in Jira project OPS, like OPS-7") == "Tickets live Jira OPS-7"  # not "OPS OPS-7"


def test_two_memories_of_one_file_name_in_two_folders_are_told_apart_by_the_folder(store):
    """Found by hostile16: since a path is named by its last part (eb8401a), both memories are `deploy.sh`, and the
    second was told apart by a number where the folder it does not share says which one it is."""
    saved = [store.save(Memory(name=naming.default_name(body), description=body, type="reference", body=body))
             for body in ("The deploy script is ~/work/billing/deploy.sh", "The deploy script is ~/work/search/deploy.sh")]
    assert saved[0].created and saved[1].created and saved[1].name_taken == saved[0].name
    assert saved[1].name.endswith(" search"), saved[1].name  # not "... 2"
