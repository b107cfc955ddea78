"""What the warm recall server keeps between prompts to answer with less CPU (issue 26): the same answers, to
the bit, and never a stale one: an edited, added or deleted memory, or a new vector, shows in the next answer."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the server's corpus and dense model need numpy")

from memdir.scan import scan  # noqa: E402
from memdir.stages.recall import manifest, server_answer, server_rank  # noqa: E402
from memdir.stages.recall.lexical import Ranker, char_grams, document_tokens, meaning_tokens  # noqa: E402
from memdir.stages.recall.server_rank import ServerCorpus  # noqa: E402
from tests.realdata_prompts import SIZES, sampled_prompts  # noqa: E402
from tests.test_dense import CountingEngine  # noqa: E402  (the same bag-of-words stand-in for e5)

TOPICS = ["Kafka consumers lag behind during the nightly batch", "Deploys go out on Tuesdays through the release train",
          "Résumés for batch-03 must fit exactly one page — naïve layouts overflow", "pnpm, never npm, in this repo",
          "Grafana dashboards hold the p99 latency of the checkout service", "Émile prefers terse commit messages",
          "The migration of the database to Postgres 16 waits for the freeze", "Rebuild the resumes with the LaTeX template"]
QUERIES = ["rebuild the resumes for batch-03 and make sure each one is exactly one page",
           "why does the kafka consumer lag at night", "databse migraton to postgres", "Ask Émile about commits",
           "install the dependencies", "what is the capital of Portugal", "p99 latency checkout grafana dashboards",
           "deploy deploys deployment Tuesday tuesdays", "naïve résumé layout overflow"]


def _fields(count: int) -> list[tuple[str, str, str, str]]:
    out = []
    for i in range(count):
        a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 3 + 1) % len(TOPICS)]
        out.append((f"note {i} {a.split()[0]}", a, ["project", "feedback", "user", "reference"][i % 4],
                    f"{b}\n\n**Why:** {a} ({i})\n**How to apply:** {b.lower()} {i * 7}"))
    return out


def _same(a: Ranker, b: Ranker, query: str) -> None:
    assert a.rank(query) == b.rank(query)  # scores compared with ==: the same floats, not merely the same order
    assert a.corpus.gram_scores(char_grams(query)) == b.corpus.gram_scores(char_grams(query))
    assert a.corpus.scores(meaning_tokens(query)) == b.corpus.scores(meaning_tokens(query))
    ea, eb = a.evidence(query), b.evidence(query)
    assert (ea.share, ea.matched, ea.distinct, ea.titled) == (eb.share, eb.matched, eb.distinct, eb.titled)


@pytest.mark.parametrize("count", [0, 1, 7, 60])
def test_the_servers_corpus_ranks_to_the_bit_as_the_plain_one(count):
    fields = _fields(count)
    tokens = [document_tokens(*f) for f in fields]
    plain, served = Ranker(fields, tokens), Ranker(fields, corpus=ServerCorpus(tokens))
    for query in QUERIES * 2:  # twice: what the corpus keeps after a first question changes nothing
        _same(plain, served, query)


def test_a_new_word_numbering_leaves_every_corpus_exact(monkeypatch):
    monkeypatch.setattr(server_rank, "_numbers", server_rank.WordNumbers())
    first = _fields(20)
    tokens = [document_tokens(*f) for f in first]
    served = Ranker(first, corpus=ServerCorpus(tokens))
    served.rank(QUERIES[0])
    other = [(f"other {i}", f"unrelated words zebra{i} quokka{i}", "user", "nothing shared") for i in range(30)]
    Ranker(other, corpus=ServerCorpus([document_tokens(*f) for f in other])).rank("zebra quokka")
    monkeypatch.setattr(server_rank, "WORDS_KEPT", 10)  # the next pool starts a new numbering
    again = Ranker(first, corpus=ServerCorpus(tokens))  # the same documents as two pools ago, numbered afresh
    again.rank(QUERIES[0])
    assert "kafka" in server_rank._numbers.number and "zebra0" not in server_rank._numbers.number
    plain = Ranker(first, tokens)
    for query in QUERIES:
        _same(plain, served, query)  # built on the numbering before
        _same(plain, again, query)


def test_pools_that_share_their_newest_memories_count_as_counted_afresh(monkeypatch):
    monkeypatch.setattr(server_rank, "NEWEST", 8)
    monkeypatch.setattr(server_rank, "_prefix", server_rank.PrefixCounts())
    fields = _fields(30)
    tokens = [document_tokens(*f) for f in fields]
    newest = list(range(8))
    # the same newest with other older matches; the newest shifted by one (one surfaced); a small pool; back again
    for pool in (newest + [10, 11, 12], newest + [20, 21, 22, 23], list(range(1, 10)) + [12], [0, 1, 2],
                 newest + [10, 11, 12]):
        pool_fields, pool_tokens = [fields[i] for i in pool], [tokens[i] for i in pool]
        plain, served = Ranker(pool_fields, pool_tokens), Ranker(pool_fields, corpus=ServerCorpus(pool_tokens))
        assert dict(served.corpus.words.df) == dict(plain.corpus.words.df)
        for query in QUERIES[:4]:
            _same(plain, served, query)


@pytest.mark.parametrize("size", SIZES)
def test_the_real_prompts_rank_to_the_bit_on_a_real_folder(realdata, tmp_path, size):
    """The shared sample of real prompts (tests/realdata_prompts.py; a larger one with --slow)."""
    from benchmarks import realistic

    root = realistic.build(tmp_path / "memory", 250, source_folder=realdata / realistic.REAL_FOLDER)
    fields = [manifest.fields_of(h) for h in scan(root).headers]
    tokens = [document_tokens(*f) for f in fields]
    plain, served = Ranker(fields, tokens), Ranker(fields, corpus=ServerCorpus(tokens))
    for query in [realistic.REAL_PROMPT, *sampled_prompts(size)]:
        _same(plain, served, query)


# --- the server's answers between edits ------------------------------------------------------------------
def _memory(root, rel: str, description: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(f"---\nname: {rel[:-3]}\ndescription: {description}\ntype: project\n---\n\n"
                            f"{description}.\n", encoding="utf-8")


@pytest.fixture
def warm(tmp_path, monkeypatch):
    """handle() as serve() sets it up: tokens, the numpy corpus and the watched views kept between prompts."""
    root = tmp_path / "memory"
    for i, topic in enumerate(TOPICS):
        _memory(root, f"project_{i}.md", topic)
    monkeypatch.setenv("MEMDIR_PATH", str(root))
    monkeypatch.setattr(manifest, "_tokens", None)
    monkeypatch.setattr(manifest, "_corpus", None)
    monkeypatch.setattr(manifest, "_rankers", {})
    monkeypatch.setattr(server_answer, "_views", None)
    manifest.keep_tokens()
    manifest.keep_corpus(ServerCorpus)
    server_answer.keep_folder_views()

    def ask(query: str, embedder=None) -> dict:
        return server_answer.handle({"memory_dir": str(root), "query": query, "engine": "offline", "session_id": None,
                                     "record": False, "env": {"MEMDIR_PATH": str(root)}}, None, embedder)
    return root, ask


def test_an_edited_added_or_deleted_memory_shows_in_the_next_answer(warm):
    root, ask = warm
    query = "which day do the deploys go out on the release train"
    assert "project_1.md" in ask(query)["selected"]
    _memory(root, "project_1.md", "Deploys go out on Thursdays through the release train")
    answer = ask(query)
    assert "Thursdays" in answer["context"] and "Tuesdays" not in answer["context"]
    (root / "project_1.md").unlink()
    assert "project_1.md" not in ask(query)["selected"]
    _memory(root, "project_9.md", "Deploys go out on Fridays through the release train")
    answer = ask(query)
    assert "project_9.md" in answer["selected"] and "Fridays" in answer["context"]


def test_the_kept_keys_follow_an_edit_and_a_new_vector_shows_at_once(tmp_path, monkeypatch):
    from memdir import embeddings

    root = tmp_path / "memory"
    for i, topic in enumerate(TOPICS[:3]):
        _memory(root, f"project_{i}.md", topic)
    model = embeddings.DenseModel(CountingEngine())
    query = "kafka consumers lag"
    headers = scan(root).headers
    assert model.similarities(root, query, headers) == [None] * 3  # no vector yet
    model.embed_missing(root, headers)
    first = model.similarities(root, query, headers)  # the very next question sees the vectors just added
    assert None not in first
    assert first == [float(model.cache(root).get(embeddings.key_of(h)) @ model.embed_query(query)) for h in headers]
    _memory(root, "project_0.md", "Deploys go out on Tuesdays")  # kafka's memory now says something else
    edited = scan(root).headers
    at = [h.rel_path for h in edited].index("project_0.md")
    assert model.similarities(root, query, edited)[at] is None  # its new text has no vector: not the old one's
    model.embed_missing(root, edited)
    assert model.similarities(root, query, edited)[at] < first[[h.rel_path for h in headers].index("project_0.md")]
    monkeypatch.setattr(embeddings, "KEYS_KEPT", 2)  # past the bound the kept keys start afresh, still right
    assert model.keys_of(edited) == [embeddings.key_of(h) for h in edited]
    assert model.keys_of(headers) == [embeddings.key_of(h) for h in headers]


def test_the_names_a_memory_holds_are_kept_by_its_text_and_found_afresh_once_edited(tmp_path, monkeypatch):
    from memdir import verify
    from memdir.verdicts import Verdicts

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def deploy_now():\n    pass\n", encoding="utf-8")
    monkeypatch.setattr(verify, "_claims_kept", {})
    calls = []
    original = verify.extract_claims
    monkeypatch.setattr(verify, "extract_claims", lambda body: calls.append(body) or original(body))
    text = "---\nname: deploy\n---\n\nRun `deploy_now()` from `src/app.py`.\n"
    kept = Verdicts()
    first = verify.check_many(str(project), {"m.md": text}, verdicts=kept)["m.md"]
    again = verify.check_many(str(project), {"m.md": text}, verdicts=kept)["m.md"]
    assert len(calls) == 1 and first.found == again.found and "src/app.py" in again.found
    edited = verify.check_many(str(project), {"m.md": text.replace("src/app.py", "src/gone.py")}, verdicts=kept)["m.md"]
    assert len(calls) == 2 and "src/app.py" not in edited.found and any("src/gone.py" in g for g in edited.gone)
    verify.check_many(str(project), {"m.md": text})  # without verdicts (a prompt hook's one check): nothing kept
    assert len(calls) == 3
