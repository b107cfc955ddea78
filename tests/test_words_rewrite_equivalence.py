"""The faster split_words and document_tokens (issue 26) give exactly the tokens, counts and order they gave
before: the previous versions (d2fe858) are copied here and compared on any text, with the edge cases of
the spaceless-script fast path (NFKC across U+1100, Hangul jamo, compatibility forms, surrogates)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from memdir import words
from memdir.stages.recall import lexical
from memdir.stages.recall.related import jobs_of


def old_split_words(text: str) -> list[str]:
    lowered = text.lower()
    if lowered.isascii():
        return words._TOKEN.findall(lowered)
    out: list[str] = []
    for run in words._RUN.findall(unicodedata.normalize("NFKC", text).lower()):
        if max(run) < words._FIRST_SPACELESS:
            out.append(run)
            continue
        for han, hangul, katakana, other in words._unicode_tokens(run):
            if han or hangul:
                out.extend(words._bigrams(han or hangul))
            elif katakana or other:
                out.append(katakana or other)
    return out


def old_document_tokens(name: str, desc: str, kind: str, body: str) -> tuple:
    counted: Counter[str] = Counter()
    title: set[str] = set()
    names: set[str] = set()
    written: Counter[str] = Counter()
    for text, weight in ((name, lexical.NAME_WEIGHT), (desc, lexical.DESCRIPTION_WEIGHT), (re.sub(lexical._LABELS, " ", body), 1)):
        stems: list[str] = []
        for word, times in Counter(old_split_words(text)).items():
            if word in words.STOPWORDS or word in words.FILLER:
                continue
            written[word] += times * weight
            stemmed = words.stem(word)
            counted[stemmed] += times * weight
            stems.append(stemmed)
        if weight == lexical.NAME_WEIGHT:
            names = set(stems)
        if weight != 1:
            title.update(written)  # a tool's name as written (recall.related)
    related = jobs_of(title) - counted.keys()
    for word in sorted(related):
        counted[word] += 1
    if kind:
        counted[kind] += 1
    gram_length = sum(times * max(1, len(word) - 1) for word, times in written.items())
    return _whole_parts(dict(counted), dict(written), gram_length, names, related)


def _whole_parts(counted, written, gram_length, names, related) -> tuple:
    return counted, list(counted), written, list(written), gram_length, names, related


def _whole(t) -> tuple:
    return _whole_parts(t.words, t.written, t.gram_length, t.names, t.related)


# Characters around every boundary the fast path and the spaceless pattern draw: U+1100 (first Hangul jamo),
# compatibility forms NFKC maps across it (ㄱ U+3131, halfwidth ﾡ, parenthesised ㈀, circled ㉠, Kangxi ⼀),
# kana signs that are not letters, full-width letters, ligatures, combining marks, lone surrogates.
EDGES = ("\u10ff\u1100\u11ff\u1200\u3131\u318e\uffa0\uffa1\u3200\u3260\u2f00\u2e80\u3005\u3007\u30fb\u30fc"
         "\u309b\u309d\uff66\uff9e\uff9f\u31f0\uac00\ud7a3\ud7b0\ud7ff\u4e00\u9fff\uf900\ufaff\u3400\u3041\u30a0"
         "\uff50\uff2e\ufb01\u00b2\u2168\u0301\u00e9\u0130\u03a3\u1e9e\u00df_ \t\n.-'\ud800\udfff\U00020000\U0002fa1f"
         "\U0001f600\u0660\u0966Aa1")
TEXT = st.text(alphabet=st.one_of(st.sampled_from(EDGES), st.characters()), max_size=120)


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_split_words_is_unchanged(text):
    assert words.split_words(text) == old_split_words(text)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, st.sampled_from(["", "user", "feedback", "project", "pnpm", "\u3131"]), TEXT)
def test_document_tokens_are_unchanged(name, desc, kind, body):
    assert _whole(lexical.document_tokens(name, desc, kind, body)) == old_document_tokens(name, desc, kind, body)


@pytest.mark.parametrize("text", [
    "", " ", "_", "\u1100", "\u10ff", "\u10ff\u1100", "a\u3131b", "\uffa1\uffa2", "\u3200abc", "\u2f00\u2f01",
    "café ㄱ", "x" * 100_000, "é" * 50_000 + "가", "\ud800", "a\udfffb", "ﬁle ﬂow", "ǅemal", "İstanbul",
    "**Why:** pnpm **How to apply:** npm", "データベース の 中文测试 한국어 ᄀᄁ",
])
def test_edge_texts_are_unchanged(text):
    assert words.split_words(text) == old_split_words(text)
    assert _whole(lexical.document_tokens(text, text, "user", text)) == old_document_tokens(text, text, "user", text)
