"""The warm recall server on a new prompt (issue 26): each memory's tokens kept in memory, idf and postings
made per term asked for, and one pass per distinct word when tokenising change how fast a new prompt is
answered, never what: the answers are a fresh process's, prompt after prompt, with edits between them."""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter

import pytest

from memdir.scan import scan
from memdir.stages.recall import api, lexical, manifest, token_cache
from memdir.stages.recall.bm25 import BM25
from memdir.stages.recall.lexical import FILLER, STOPWORDS, document_tokens, split_words, stem
from memdir.stages.recall.related import jobs_of

NOW = time.time()


def _fresh(memory_dir, fields, fill=False):
    return [document_tokens(*f) for f in fields]


def _answer(root, prompt, scanner=scan) -> tuple:
    """What was injected, and beneath it the lexical ranking of the whole pool (most prompts inject
    nothing from a lexical-only recall, so the ranking is what shows a stale token)."""
    result = api.recall(root, prompt, engine="offline", record=False, now=NOW, scanner=scanner)
    pool = manifest.candidates(scanner(root).headers, prompt)
    ranker = manifest.ranker(pool, root)
    ranked = [(pool[i].rel_path, score) for i, score in ranker.rank(prompt)]
    return [h.rel_path for h in result.selected], result.context, ranked, ranker.evidence(prompt).share


def _uncached(root, prompt, monkeypatch) -> tuple[list[str], str]:
    """A fresh hook process's answer: nothing kept, every memory tokenised afresh, a plain scan."""
    with monkeypatch.context() as patch:
        patch.setattr(manifest, "_rankers", {})
        patch.setattr(manifest, "_tokens", None)
        patch.setattr(manifest, "_index", None)
        patch.setattr(manifest, "_offered", (None, (), []))
        patch.setattr(token_cache, "tokenised", _fresh)
        return _answer(root, prompt)


def _edit(path, text: str, mtime: float) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_a_warm_server_answers_new_prompts_as_a_fresh_process(realdata, tmp_path, monkeypatch):
    """Distinct real prompts asked one after another of a 400-memory folder built from the real one (the
    older 200 go through the word index), a newer and an older memory edited (their text, not their
    place), one added and one deleted between them: the server's answer and ranking (kept tokens, word
    index, watched view, rankers) are the fresh ones, memories, rendered text and scores; and a hook
    reading the token file the server wrote answers the same."""
    pytest.importorskip("numpy")
    from benchmarks import realistic
    from memdir.stages.recall.older_index import OlderIndex
    from memdir.stages.recall.server_watch import FolderViews

    root = realistic.build(tmp_path / "memory", 400, source_folder=realdata / realistic.REAL_FOLDER)
    prompts = [realistic.REAL_PROMPT, *realistic.real_prompts()[:7]]
    monkeypatch.setattr(manifest, "_rankers", {})
    monkeypatch.setattr(manifest, "_index", OlderIndex())
    monkeypatch.setattr(manifest, "_tokens", manifest.KeptTokens(limit=300))  # smaller than 8 pools: some let go
    views = FolderViews()
    headers = scan(root).headers
    newer, oldest, older = headers[3], headers[-1], headers[-5]
    changes = {  # edits keep the mtime: the memory keeps its place, only its text (and tokens) change
        2: lambda: _edit(newer.path, newer.path.read_text(encoding="utf-8").replace(
            "\n\n", f"\n\n{prompts[2]}\n\n", 1), newer.mtime),
        3: lambda: _edit(older.path, older.path.read_text(encoding="utf-8").replace(
            "\n\n", "\n\nrecruiter follow-up for batch-03 resumes, one page each\n\n", 1), older.mtime),
        4: lambda: _edit(root / "project_added_note.md", "---\nname: Grafana screen prep\ndescription: what the "
                         "Grafana Labs recruiter asked about, and the follow-up sent\ntype: project\n---\n\n"
                         "Monday screen: pipeline score, minimum bar before applying.\n", NOW - 86400 * 400),
        6: lambda: oldest.path.unlink(),
    }
    selected_any = False
    for n, prompt in enumerate(prompts):
        if n in changes:
            changes[n]()
        warm = _answer(root, prompt, scanner=views.scan)
        manifest.save_kept_tokens()  # as the server does after each reply
        assert warm == _uncached(root, prompt, monkeypatch), prompt
        selected_any = selected_any or bool(warm[0])
        assert warm[2]  # the pool ranks
    assert selected_any  # the prompts recall something: the comparison means something
    with monkeypatch.context() as patch:  # a hook without a server, from the token file the server wrote
        patch.setattr(manifest, "_rankers", {})
        patch.setattr(manifest, "_tokens", None)
        assert [_answer(root, p) for p in prompts[-2:]] == [_uncached(root, p, monkeypatch) for p in prompts[-2:]]


def test_kept_tokens_keep_the_most_recently_ranked_and_read_the_file_once(tmp_path, monkeypatch):
    reads: list[int] = []

    def counting(memory_dir, fields):
        reads.append(len(fields))
        return _fresh(memory_dir, fields)

    monkeypatch.setattr(token_cache, "tokenised", counting)
    kept = manifest.KeptTokens(limit=3)
    a, b, c, d = (("n", f"note {k}", "project", f"body {k}") for k in "abcd")
    assert [t.words for t in kept.tokenised((a, b), tmp_path)] == [document_tokens(*a).words, document_tokens(*b).words]
    assert reads == [2]  # the first pool of a folder comes from its file
    kept.tokenised((c, a), tmp_path)  # a used again: now the most recent
    kept.tokenised((d,), tmp_path)  # past the limit: b, the least recently ranked, is let go
    assert list(kept.kept) == [c, a, d]
    assert reads == [2]  # later misses are tokenised here, and written by save()
    assert set(kept.unsaved[str(tmp_path)]) == {c, d}
    kept.save()
    assert kept.unsaved == {}


def _counted_from_the_word_list(name: str, desc: str, kind: str, body: str) -> lexical.DocTokens:
    """The definition document_tokens must match: every stemmed word repeated by its field's weight, counted."""
    doc: list[str] = []
    title: set[str] = set()
    names: set[str] = set()
    written: Counter[str] = Counter()
    for text, weight in ((name, 3), (desc, 2), (re.sub(lexical._LABELS, " ", body), 1)):
        words = [w for w in split_words(text) if w not in STOPWORDS and w not in FILLER]
        for word in words:
            written[word] += weight
        stems = [stem(w) for w in words]
        doc.extend(stems * weight)
        names = set(stems) if weight == 3 else names
        title.update(words if weight != 1 else ())  # a tool's name as written (recall.related)
    related = jobs_of(title) - set(doc)
    doc.extend(sorted(related))
    doc.extend([kind] if kind else [])
    grams = sum(times * len(lexical._word_grams(word, 4)) for word, times in written.items())
    return lexical.DocTokens(dict(Counter(doc)), dict(written), grams, names, related)


def test_document_tokens_are_the_counted_word_list_in_its_order(realdata):
    from benchmarks import realistic

    texts = [(h.name or "", h.description or "", h.type or "", h.excerpt)
             for h in scan(realdata / realistic.REAL_FOLDER).headers]
    texts += [("Zoë データベース", "pnpm 安装 the deploy", "feedback", "**Why:** npm npm install; K İ"),
              ("", "", "", ""), ("a a", "", "x y", "the"), ("pnpm pnpm", "install deps", "", "pnpm")]
    for fields in texts:
        got, want = document_tokens(*fields), _counted_from_the_word_list(*fields)
        assert list(got.words.items()) == list(want.words.items()), fields[0]  # order too: the token file keeps it
        assert list(got.written.items()) == list(want.written.items())
        assert (got.gram_length, got.names, got.related) == (want.gram_length, want.names, want.related)


def test_bm25_makes_each_terms_idf_and_postings_as_an_eager_index_would():
    docs = [Counter(d.split()) for d in ("deploy pnpm pnpm", "deploy npm", "resume page", "", "page page deploy")]
    bm = BM25(counted=(docs, [sum(d.values()) for d in docs]))
    for term in ("deploy", "pnpm", "page", "absent"):
        held = [i for i, d in enumerate(docs) if term in d]
        assert bm.postings(term) == held
        assert bm.idf(term) == (math.log(1 + (5 - len(held) + 0.5) / (len(held) + 0.5)) if held else None)
    assert bm.scores(["deploy", "page"])[4] > bm.scores(["deploy", "page"])[0] > 0 == bm.scores(["deploy", "page"])[3]
