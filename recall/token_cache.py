"""Each memory's ranking tokens kept on disk, so a prompt hook need not tokenise the folder again (issue 26).

The lexical Ranker (recall.lexical) needs every candidate memory split, stemmed, cut into character
4-grams and counted: with the recall server down that was most of the prompt hook's time, redone in
every hook process. This keeps each memory's `DocTokens` in `<memory>/.memdir/cache/tokens`, keyed by a
digest of the very text ranked (name, description, type and the body lines scanned, with their lengths):
an edited memory has another key even at the same size and mtime, so it is never ranked from stale
tokens. The file's first line carries a fingerprint of the tokeniser's source (memdir.words,
recall.lexical, recall.related) and the Python version: a changed stemmer, stop word or weight starts
a new file.

Layout: a header line (format and fingerprint), one line holding the file's vocabulary (every word
its entries use, once, space-separated), then one line per memory: its key and, base64-coded arrays,
the vocabulary positions of its stems and of its words as written with their counts, its n-gram
count, its name's stems and its related words. A word is decoded (and hashed) once per file rather
than once per memory holding it: that halved loading.

The file is memdir's own state, read as untrusted all the same: through safefs (never through a
symlink, never a FIFO, at most TOKEN_CACHE_MAX_BYTES), cut with bytes and str methods (no pickle, no
marshal: nothing in it becomes anything but str and int), each entry checked before use (positions
within the vocabulary, counts positive and one per term, no term twice, names and related words
among the memory's terms).
An entry that fails a check, or a file that does, is tokenised again and nothing is logged: a stale
or broken cache only costs the time it was meant to save. An entry is only ever used for the text
whose digest it carries, so a planted entry can at most reorder memories the folder already holds,
as editing them could; it never adds text to what is injected.

Written atomically (temp + rename, not fsynced: it is a cache) and only when some memory had to be
tokenised; it keeps the entries just used first, then the others, up to TOKEN_CACHE_MAX_ENTRIES. The
vocabulary only grows (an entry kept is never rewritten) until it passes TOKEN_CACHE_MAX_WORDS; then
the file starts over with the memories just ranked.
"""

from __future__ import annotations

import binascii
import os
import sys
from array import array
from collections.abc import Sequence

from memdir import constants as C, safefs, safefs_write, words
from memdir.stages.recall import lexical, related
from memdir.stages.recall.lexical import DocTokens, document_tokens

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import (about 2 ms)
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

FORMAT = "memdir-tokens 2"  # and the fingerprint: another tokeniser, another file
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/{C.TOKEN_CACHE_NAME}"
KEY_CHARS = 32  # a 16-byte digest in hex
FIELDS = 8  # key, stems, their counts, words as written, their counts, n-gram count, names, related

Fields = tuple[str, str, str, str]  # name, description, type, body as scanned (recall.manifest.ranker)


def tokenised(memory_dir: str | os.PathLike, fields: Sequence[Fields], fill: bool = False) -> list[DocTokens]:
    """`document_tokens(*f)` for every f in `fields`: from the folder's token store (recall.token_store) where it
    holds them, else from this cache, else tokenised now; the cache is brought up to date when some had to be
    tokenised. `fill`: a prompt hook's call, which starts the store's background filler when it tokenised many."""
    from memdir.stages.recall import token_store

    keys = [digest(one) for one in fields]
    stored = token_store.lookup(memory_dir, keys)
    if len(stored) == len(set(keys)):  # a set: the same text in two files (a copied memory) is one key
        if fill and stored.stale:
            token_store.spawn_fill(memory_dir, 0, stale=True)
        return [stored[key] for key in keys]  # the cache file is neither read nor written
    tag = fingerprint()
    vocabulary, entries = _load(memory_dir, tag) if tag else ([], {})
    out: list[DocTokens] = []
    current: dict[bytes, DocTokens] = {}  # this call's memories by key, those the store lacks
    read: dict[bytes, bytes] = {}  # the entry lines used as they are
    made = wanted = 0  # tokenised here; of those, what a fill would store (token_store.storable)
    for one, key in zip(fields, keys, strict=True):
        tokens = stored.get(key)
        if tokens is None:
            line = entries.get(key)
            tokens = parse(line, key, vocabulary) if line is not None else None
            if tokens is None:
                tokens, made = document_tokens(*one), made + 1
                wanted += token_store.storable(tokens)
            elif line is not None:
                read[key] = line
            current[key] = tokens
        out.append(tokens)
    if made and tag:
        _save(memory_dir, tag, vocabulary, entries, current, read)
    if fill:  # also when this file holds many memories the store should (the filler prunes them from here)
        token_store.spawn_fill(memory_dir, max(wanted, C.TOKEN_STORE_FILL_MIN * (len(entries) > C.TOKEN_CACHE_KEPT_BESIDE)),
                               stale=stored.stale)
    return out


def store(memory_dir: str | os.PathLike, made: dict[Fields, DocTokens]) -> None:
    """Add memories tokenised elsewhere (the warm server, recall.manifest.KeptTokens) to the file."""
    tag = fingerprint()
    if not tag or not made:
        return
    vocabulary, entries = _load(memory_dir, tag)
    _save(memory_dir, tag, vocabulary, entries, {digest(f): tokens for f, tokens in made.items()}, {})


def prune(memory_dir: str | os.PathLike, keep: set[bytes]) -> None:
    """Keep only the entries of these keys (hex), with a vocabulary of their own words: the token store's filler
    (recall.token_store) leaves here only the memories it could not store, so a prompt hook that meets a memory
    written since the last fill loads a small file, not 600 memories it no longer needs from here."""
    tag = fingerprint()
    if not tag:
        return
    vocabulary, entries = _load(memory_dir, tag)
    if not entries or keep.issuperset(entries):
        return
    position: dict[str, int] = {}
    words: list[str] = []
    lines = []
    for key, line in entries.items():
        tokens = parse(line, key, vocabulary) if key in keep else None
        kept = encode(key, tokens, words, position) if tokens is not None else None
        if kept is not None:
            lines.append(kept)
    try:
        data = b"\n".join([_header(tag), " ".join(words).encode("utf-8", "surrogatepass"), *lines])
        safefs_write.write_bytes(memory_dir, CACHE_FILE, data, durable=False)
    except (OSError, UnicodeError):
        pass


def digest(fields: Fields) -> bytes:
    """The key of one memory's text: the four fields with their lengths, so no two texts share it."""
    h = blake2b(digest_size=KEY_CHARS // 2)
    h.update(("%d,%d,%d,%d\n" % tuple(len(f) for f in fields)).encode())
    h.update("".join(fields).encode("utf-8", "surrogatepass"))
    return h.hexdigest().encode("ascii")


_fingerprint: str | None = None


def fingerprint() -> str:
    """The tokeniser's identity: its modules' source and the Python version ("" if a source is unreadable)."""
    global _fingerprint
    if _fingerprint is None:
        h = blake2b(digest_size=8)
        h.update(f"{sys.version}|{sys.byteorder}|{array('I').itemsize}".encode())
        try:
            for module in (words, lexical, related):
                with open(module.__file__ or "", "rb") as handle:
                    h.update(handle.read())
        except OSError:
            _fingerprint = ""
            return _fingerprint
        _fingerprint = h.hexdigest()
    return _fingerprint


def _header(tag: str) -> bytes:
    return f"{FORMAT} {tag}".encode()


def _load(memory_dir: str | os.PathLike, tag: str) -> tuple[list[str], dict[bytes, bytes]]:
    """The file's vocabulary and its entries by key, not parsed yet (nothing for no file, another
    tokeniser's, or one that is not this format)."""
    try:
        data = safefs.read_bytes(memory_dir, CACHE_FILE, C.TOKEN_CACHE_MAX_BYTES)
        lines = data.split(b"\n")
        if len(lines) < 2 or lines[0] != _header(tag) or lines[1].count(b" ") >= C.TOKEN_CACHE_MAX_WORDS:
            return [], {}  # a planted vocabulary of millions of words would cost every prompt its split
        vocabulary = _split(lines[1].decode("utf-8", "surrogatepass"))
    except (OSError, UnicodeError):
        return [], {}
    return vocabulary, {line[:KEY_CHARS]: line for line in lines[2:]}


def _save(memory_dir: str | os.PathLike, tag: str, vocabulary: list[str], entries: dict[bytes, bytes],
          current: dict[bytes, DocTokens], read: dict[bytes, bytes]) -> None:
    """This call's memories first (lines read kept as they are), then the file's other entries."""
    if len(vocabulary) > C.TOKEN_CACHE_MAX_WORDS:
        vocabulary, entries, read = [], {}, {}  # start over: every position changes
    vocabulary = list(vocabulary)
    position = {word: i for i, word in enumerate(vocabulary)}
    keep: list[bytes] = []
    for key, tokens in current.items():
        line = read.get(key) or encode(key, tokens, vocabulary, position)
        if line is not None:  # None: a term the format cannot hold (a type with a space)
            keep.append(line)
    if len(keep) == len(read):
        return  # nothing new the file can hold
    for key, line in entries.items():
        if len(keep) >= C.TOKEN_CACHE_MAX_ENTRIES:
            break
        if key not in current and len(key) == KEY_CHARS:
            keep.append(line)
    try:
        data = b"\n".join([_header(tag), " ".join(vocabulary).encode("utf-8", "surrogatepass"),
                           *keep[: C.TOKEN_CACHE_MAX_ENTRIES]])
    except UnicodeError:
        return
    if len(data) > C.TOKEN_CACHE_MAX_BYTES:
        return  # never written past what is read back
    try:
        safefs_write.write_bytes(memory_dir, CACHE_FILE, data, durable=False)
    except OSError:
        pass  # a read-only folder only costs the next prompt the tokenising


def encode(key: bytes, tokens: DocTokens, vocabulary: list[str], position: dict[str, int]) -> bytes | None:
    """One entry line, its new words added to `vocabulary` (and `position`); None, adding nothing,
    when a word holds a space, tab or newline, or is empty (the vocabulary line could not hold it)."""
    terms = [*tokens.words, *tokens.written, *tokens.names, *tokens.related]
    new = {t for t in terms if t not in position}
    if any(not t or " " in t or "\t" in t or "\n" in t for t in new):
        return None
    for term in new:
        position[term] = len(vocabulary)
        vocabulary.append(term)
    parts = [key]
    for counted in (tokens.words, tokens.written):
        parts += [_array("I", [position[t] for t in counted]), _counts(list(counted.values()))]
    parts += [str(tokens.gram_length).encode(), _array("I", [position[t] for t in sorted(tokens.names)]),
              _array("I", [position[t] for t in sorted(tokens.related)])]
    return b"\t".join(parts)


def _counts(counts: list[int]) -> bytes:
    return _array("H" if max(counts, default=0) < 1 << 16 else "Q", counts)


def _array(code: str, values: list[int]) -> bytes:
    return code.encode() + binascii.b2a_base64(array(code, values).tobytes(), newline=False)


def _split(text: str) -> list[str]:
    return text.split(" ") if text else []


def parse(line: bytes, key: bytes, vocabulary: list[str]) -> DocTokens | None:
    """The entry line for `key` as DocTokens, or None when it is not one this module wrote."""
    parts = line.split(b"\t")
    if len(parts) != FIELDS or parts[0] != key or not parts[5].isdigit() or len(parts[5]) > 12:
        return None
    try:
        stems = _terms(parts[1], vocabulary)
        written = _terms(parts[3], vocabulary)
        counted = _counted(stems, parts[2]), _counted(written, parts[4])
        names, related_words = set(_terms(parts[6], vocabulary)), set(_terms(parts[7], vocabulary))
    except (ValueError, binascii.Error):
        return None
    words, by_word = counted
    if words is None or by_word is None or not (names <= words.keys() and related_words <= words.keys()):
        return None
    return DocTokens(words, by_word, int(parts[5]), names, related_words)


def _decoded(encoded: bytes, codes: tuple[bytes, ...]) -> array:
    if encoded[:1] not in codes:
        raise ValueError("unknown array type")
    values = array(encoded[:1].decode())
    values.frombytes(binascii.a2b_base64(encoded[1:], strict_mode=True))
    return values


def _terms(encoded: bytes, vocabulary: list[str]) -> list[str]:
    try:
        return [vocabulary[i] for i in _decoded(encoded, (b"I",))]  # unsigned: only too high can fail
    except IndexError:
        raise ValueError("a position past the vocabulary") from None


def _counted(terms: list[str], encoded: bytes) -> dict[str, int] | None:
    counts = _decoded(encoded, (b"H", b"Q"))  # unsigned: 0 is the only count below 1
    if len(counts) != len(terms) or 0 in counts:
        return None
    out = dict(zip(terms, counts, strict=True))
    return out if len(out) == len(terms) else None
