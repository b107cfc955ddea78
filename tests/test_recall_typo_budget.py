"""The typo step of offline ranking (recall.lexical.Ranker.corrections) on a prompt of many unknown words.

hostile21/mend22: 250 memories of one 64 KB line of distinct words and a 10,000-character prompt of words none holds:
1,747 unknown words, each compared with the ~2,600 spellings sharing its first two letters (4.6 M comparisons, ~35 s),
after stemming the pool's 2 M words for the table (~7 s). C.RECALL_TYPO_COMPARISONS_MAX bounds the comparisons, and
only the prefixes looked up are stemmed (recall.spellings.PrefixSpellings).
"""

from __future__ import annotations

import random
from pathlib import Path

from memdir import constants as C
from memdir.stages.recall import spellings
from memdir.stages.recall.lexical import DocCorpus, Ranker, document_tokens
from tests.realdata_prompts import sampled_prompts

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_LETTERS) for _ in range(rng.randint(5, 10)))


def _counted(monkeypatch) -> dict[str, int]:
    """Counts the comparisons (within_edits) and the stems the typo step makes."""
    made = {"compared": 0, "stemmed": 0}
    within, stem = spellings.within_edits, spellings.stem

    def counted_within(a: str, b: str, limit: int) -> bool:
        made["compared"] += 1
        return within(a, b, limit)

    def counted_stem(word: str) -> str:
        made["stemmed"] += 1
        return stem(word)

    monkeypatch.setattr(spellings, "within_edits", counted_within)
    monkeypatch.setattr(spellings, "stem", counted_stem)
    return made


def _hostile(rng: random.Random) -> tuple[list[tuple[str, str, str, str]], list[str]]:
    """40 memories of 1,000 distinct random words each, and 400 words none holds."""
    words = list(dict.fromkeys(_word(rng) for _ in range(40_000)))
    fields = [(f"note {k}", f"hostile note {k}", "project", " ".join(words[k * 1000 : (k + 1) * 1000])) for k in range(40)]
    held = set(words)
    unknown = [w for w in dict.fromkeys(_word(rng) for _ in range(500)) if w not in held][:400]
    return fields, unknown


def test_a_prompt_of_unknown_words_makes_at_most_the_budget_s_comparisons(monkeypatch):
    rng = random.Random(23)
    fields, unknown = _hostile(rng)
    docs = [document_tokens(*f) for f in fields]
    monkeypatch.setattr(C, "RECALL_TYPO_COMPARISONS_MAX", 2_000)
    made = _counted(monkeypatch)
    Ranker(fields, docs).corrections(" ".join(unknown))
    # Unbounded: 400 words x ~60 spellings each (x2 for the words past 7 letters), ~35,000 comparisons, after
    # stemming all 39,000 words of the pool.
    assert made["compared"] <= 2_000
    # The prompt's words are stemmed once each; the table's, only for the prefixes the budget paid for
    # (at most twice it: the last prefix looked up may go past what was left).
    assert made["stemmed"] <= len(unknown) + 2 * 2 * 2_000


def test_the_budget_goes_to_the_prompt_s_first_words(monkeypatch):
    rng = random.Random(24)
    fields, unknown = _hostile(rng)
    fields[0] = ("Database migrations", "how the database migrations run", "project", fields[0][3])
    monkeypatch.setattr(C, "RECALL_TYPO_COMPARISONS_MAX", 2_000)
    ranker = Ranker(fields, [document_tokens(*f) for f in fields])
    found = ranker.corrections("databse migratons " + " ".join(unknown))
    assert found["databse"] == "databas" and found["migratons"] == "migr"  # the stems
    assert ranker.corrections(" ".join(unknown) + " databse").get("databse") is None  # spent before it


def test_a_prefix_s_spellings_are_the_whole_table_s(realdata):
    """DocCorpus.spelled stems a prefix's words alone: the same entries as Ranker.spellings' table, for every prefix
    (a stem keeps its word's first two letters), on the real folder's words and on words made of every suffix."""
    texts = sorted(p.read_text(encoding="utf-8") for p in (Path(realdata) / "memory-folders").rglob("*.md"))
    suffixes = ("ational", "ization", "ations", "ments", "ings", "edly", "ies", "ied", "ers", "est", "ly", "es", "s")
    made = " ".join(base + end for base in ("ab", "abe", "abee", "abies", "runn", "plann", "fami", "cove")
                    for end in (*suffixes, "e", ""))
    docs = [document_tokens("n", "d", "project", t) for t in [*texts, made]]
    table = Ranker([], corpus=_Whole(docs)).spellings()
    corpus = DocCorpus(docs)
    assert len(table) > 100
    for prefix in {*table, "zz", "q", "é"}:
        assert corpus.spelled(prefix) == table.get(prefix, {}), prefix
        assert corpus.spelled_at_least(prefix) <= len(table.get(prefix, {}))


class _Whole(DocCorpus):
    """The corpus as before DocCorpus.spelled: Ranker builds its whole table from written_stems."""

    def spelled(self, prefix: str) -> dict[str, str] | None:
        return None


def test_the_real_folder_s_prompts_correct_as_without_a_budget(monkeypatch, realdata):
    texts = sorted(p.read_text(encoding="utf-8") for p in (Path(realdata) / "memory-folders").rglob("*.md")
                   if p.name != "MEMORY.md")
    fields = [(t[:60], t[60:200], "project", t) for t in texts]
    docs = [document_tokens(*f) for f in fields]
    prompts = [*sampled_prompts(), "how do we deplyo the resmue bulider", "the databse migratons aplication"]
    made = _counted(monkeypatch)
    budgeted = []
    for prompt in prompts:
        before = made["compared"]
        budgeted.append(Ranker(fields, docs).corrections(prompt))
        assert made["compared"] - before <= C.RECALL_TYPO_COMPARISONS_MAX // 100, prompt  # far from the budget
    monkeypatch.setattr(C, "RECALL_TYPO_COMPARISONS_MAX", 10**12)
    assert [Ranker(fields, corpus=_Whole(docs)).corrections(p) for p in prompts] == budgeted
    assert sum(map(len, budgeted)) >= 3
