"""Each memory's ranking tokens kept on disk, so a prompt hook need not tokenise the folder again (issue 26).

The lexical Ranker (recall.lexical) needs every candidate memory split, stemmed, cut into character
4-grams and counted: with the recall server down that was most of the prompt hook's time, redone in
every hook process. This keeps each memory's `DocTokens` in `<memory>/.memdir/cache/tokens`, keyed by a
digest of the very text ranked (name, description, type and the body lines scanned, with their lengths):
an edited memory has another key even at the same size and mtime, so it is never ranked from stale
tokens. The file's first line carries a fingerprint of the tokeniser's source (memdir.words,
recall.lexical, recall.related) and the Python version: a changed stemmer, stop word or weight starts
a new file.

The file is memdir's own state, read as untrusted all the same: through safefs (never through a
symlink, never a FIFO, at most TOKEN_CACHE_MAX_BYTES), as plain text cut with str methods (no pickle,
no marshal: nothing in it becomes anything but str and int), each entry checked before use (counts
positive and matching their terms, no term twice, names and related words among the memory's terms).
An entry that fails a check, or a file that does, is tokenised again and nothing is logged: a stale
or broken cache only costs the time it was meant to save. An entry is only ever used for the text
whose digest it carries, so a planted entry can at most reorder memories the folder already holds,
as editing them could; it never adds text to what is injected.

Written atomically (temp + rename, not fsynced: it is a cache) and only when some memory had to be
tokenised; it keeps the entries just used first, then the others, up to TOKEN_CACHE_MAX_ENTRIES.
"""

from __future__ import annotations

import binascii
import sys
from array import array
from collections.abc import Sequence

from memdir import constants as C, safefs, words
from memdir.stages.recall import lexical, related
from memdir.stages.recall.lexical import DocTokens, document_tokens

try:
    from _blake2 import blake2b  # hashlib's own backend, without hashlib's OpenSSL import (about 2 ms)
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "memdir-tokens 1"  # and the fingerprint: another tokeniser, another file
CACHE_FILE = f"{C.STATE_DIRNAME}/cache/{C.TOKEN_CACHE_NAME}"
KEY_CHARS = 32  # a 16-byte digest in hex
FIELDS = 8  # key, stems, their counts, words as written, their counts, n-gram count, names, related

Fields = tuple[str, str, str, str]  # name, description, type, body as scanned (recall.manifest.ranker)


def tokenised(memory_dir: Path, fields: Sequence[Fields]) -> list[DocTokens]:
    """`document_tokens(*f)` for every f in `fields`, from the cache where it holds them; the cache is
    brought up to date when some had to be tokenised."""
    tag = fingerprint()
    entries = _load(memory_dir, tag) if tag else {}
    out: list[DocTokens] = []
    used: dict[bytes, bytes] = {}
    fresh = False
    for one in fields:
        key = digest(one)
        line = entries.get(key)
        tokens = parse(line, key) if line is not None else None
        if tokens is None:
            tokens = document_tokens(*one)
            line = encode(key, tokens)  # None: a term the format cannot hold (a type with a space)
            fresh = fresh or line is not None
        if line is not None:
            used[key] = line
        out.append(tokens)
    if fresh and tag:
        _save(memory_dir, tag, used, entries)
    return out


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


def _load(memory_dir: Path, tag: str) -> dict[bytes, bytes]:
    """The cache's entries by key, not parsed yet ({} for no file, another tokeniser, or a bad file)."""
    try:
        data = safefs.read_bytes(memory_dir, CACHE_FILE, C.TOKEN_CACHE_MAX_BYTES)
    except OSError:
        return {}
    lines = data.split(b"\n")
    if lines[0] != f"{FORMAT} {tag}".encode():
        return {}
    return {line[:KEY_CHARS]: line for line in lines[1:]}


def _save(memory_dir: Path, tag: str, used: dict[bytes, bytes], entries: dict[bytes, bytes]) -> None:
    keep = list(used.values())
    for key, line in entries.items():
        if len(keep) >= C.TOKEN_CACHE_MAX_ENTRIES:
            break
        if key not in used and len(key) == KEY_CHARS:
            keep.append(line)
    data = b"\n".join([f"{FORMAT} {tag}".encode(), *keep[: C.TOKEN_CACHE_MAX_ENTRIES]])
    if len(data) > C.TOKEN_CACHE_MAX_BYTES:
        return  # never written past what is read back
    try:
        safefs.write_bytes(memory_dir, CACHE_FILE, data, durable=False)
    except OSError:
        pass  # a read-only folder only costs the next prompt the tokenising


def encode(key: bytes, tokens: DocTokens) -> bytes | None:
    """One entry line, or None when a term holds a space, tab or newline (or is empty)."""
    parts: list[str | None] = [key.decode("ascii")]
    for counted in (tokens.words, tokens.written):
        terms = list(counted)
        parts += [_terms(terms), _counts([counted[t] for t in terms])]
    parts += [str(tokens.gram_length), _terms(sorted(tokens.names)), _terms(sorted(tokens.related))]
    texts = [part for part in parts if part is not None]
    if len(texts) != len(parts):
        return None
    try:
        return "\t".join(texts).encode("utf-8", "surrogatepass")
    except UnicodeError:
        return None


def _terms(terms: list[str]) -> str | None:
    joined = " ".join(terms)
    if "\t" in joined or "\n" in joined or _split(joined) != terms:
        return None
    return joined


def _counts(counts: list[int]) -> str:
    code = "H" if max(counts, default=0) < 1 << 16 else "Q"
    return code + binascii.b2a_base64(array(code, counts).tobytes(), newline=False).decode("ascii")


def _split(text: str) -> list[str]:
    return text.split(" ") if text else []


def parse(line: bytes, key: bytes) -> DocTokens | None:
    """The entry line for `key` as DocTokens, or None when it is not one this module wrote."""
    try:
        parts = line.decode("utf-8", "surrogatepass").split("\t")
        if len(parts) != FIELDS or parts[0] != key.decode("ascii") or not parts[5].isdigit():
            return None
        words = _counted(_split(parts[1]), parts[2])
        written = _counted(_split(parts[3]), parts[4])
        gram_length = int(parts[5])
    except (UnicodeError, ValueError, binascii.Error):
        return None
    if words is None or written is None:
        return None
    names, related_words = set(_split(parts[6])), set(_split(parts[7]))
    if not (names <= words.keys() and related_words <= words.keys()):
        return None
    return DocTokens(words, written, gram_length, names, related_words)


def _counted(terms: list[str], encoded: str) -> dict[str, int] | None:
    if encoded[:1] not in ("H", "Q"):
        return None
    counts = array(encoded[0])
    counts.frombytes(binascii.a2b_base64(encoded[1:].encode("ascii"), strict_mode=True))
    if len(counts) != len(terms) or (terms and min(counts) < 1):
        return None
    out = dict(zip(terms, counts, strict=True))
    return out if len(out) == len(terms) else None

