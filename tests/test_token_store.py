"""Every memory's tokens kept for random reads (recall.token_store, issue 26): an entry reads back as the very
DocTokens `document_tokens` makes (so rankings are the same to the float), a changed memory is never ranked from
its old entry, the hook tokenises only what the store lacks, and a missing, foreign, planted or broken store only
costs the tokenising it was meant to save."""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import time
from array import array
from binascii import unhexlify
from pathlib import Path

import pytest

from memdir import constants as C
from memdir.scan import scan
from memdir.stages.recall import api, manifest, rank_index, token_cache, token_store
from memdir.stages.recall.lexical import DocTokens, Ranker, document_tokens
from tests.hook_runs import prompt_hook, same_size_same_mtime_edit

STORE = Path(token_store.STORE_FILE)
NOW = time.time()
PROMPTS = ["what did we decide about using Gemini for this repo?",  # recalls without the model (issue 21)
           "rebuild the resumes for batch-03 and make sure each one is exactly one page",
           "how do I run the databse migraton", "what did Alice say about Kafka and Gemini?",
           "résumé für die Bewerbung 日本語", "which companies are in the pipeline"]


@pytest.fixture
def folder(realdata, tmp_path) -> Path:
    """A realistic 120-memory folder built from the real one (benchmarks/realistic.py)."""
    from benchmarks import realistic

    real = tmp_path / "real"
    shutil.copytree(realdata / realistic.REAL_FOLDER, real)
    return realistic.build(tmp_path / "built", 120, source_folder=real)


def _fields(folder: Path) -> list[token_cache.Fields]:
    return [manifest.fields_of(h) for h in manifest.offered(scan(folder).headers)]


def _as_tuple(d: DocTokens) -> tuple:
    """Everything a DocTokens holds, dict order included (the Ranker sums floats in it)."""
    return list(d.words.items()), list(d.written.items()), d.gram_length, sorted(d.names), sorted(d.related)


def _keys(fields) -> list[bytes]:
    return [token_cache.digest(f) for f in fields]


def test_every_entry_reads_back_as_document_tokens_makes_it_and_ranks_the_same(folder):
    fields = _fields(folder)
    odd = [("Zoë's café", "naïve résumé — “quoted”", "", "日本語の メモ 한국어 \U0001f600 body"),
           ("wide", "counts", "project", "word " * 70000),  # a count past 2**16: the wide counts
           ("", "", "", "")]
    for extra in odd:
        (folder / f"odd-{len(extra[3])}.md").write_text(
            f"---\nname: {extra[0] or 'x'}\ndescription: {extra[1] or 'y'}\n---\n{extra[3]}\n", encoding="utf-8")
    assert token_store.fill(folder) == (len(fields) + 3, len(fields) + 3)
    fields = _fields(folder)
    got = token_store.lookup(folder, _keys(fields))
    assert len(got) == len(fields)
    docs = [document_tokens(*f) for f in fields]
    assert [_as_tuple(got[k]) for k in _keys(fields)] == [_as_tuple(d) for d in docs]
    want, have = Ranker(fields, docs), Ranker(fields, [got[k] for k in _keys(fields)])
    for prompt in PROMPTS:
        assert have.rank(prompt) == want.rank(prompt)
        a, b = want.evidence(prompt), have.evidence(prompt)
        assert (a.share, a.matched, a.distinct, a.titled) == (b.share, b.matched, b.distinct, b.titled)
    direct = [document_tokens(*f) for f in odd]
    assert [_as_tuple(token_store.parse(token_store.encode(b"k" * 16, d), b"k" * 16)) for d in direct] == [
        _as_tuple(d) for d in direct]


def _answers(folder: Path) -> list[tuple[list[str], str]]:
    manifest._rankers.clear()
    out = [api.recall(folder, p, engine="offline", record=False, now=NOW, disk_cache=True) for p in PROMPTS]
    return [([h.rel_path for h in r.selected], r.context) for r in out]


def test_recall_answers_the_same_with_no_store_a_filled_one_and_after_edits(folder, monkeypatch):
    expected = _answers(folder)
    assert any(selected for selected, _ in expected)
    shutil.rmtree(folder / C.STATE_DIRNAME / "cache")
    token_store.fill(folder)
    made = []
    monkeypatch.setattr(token_cache, "document_tokens", lambda *f: made.append(f) or document_tokens(*f))
    assert _answers(folder) == expected
    assert made == []  # every memory's tokens came from the store
    assert not (folder / token_cache.CACHE_FILE).exists()  # and the token cache was neither needed nor written
    target = sorted(folder.glob("*.md"))[3]
    text = target.read_text(encoding="utf-8")
    word = next(w for w in text.split("\n")[-3].split() if len(w) > 5 and w.isalpha())
    same_size_same_mtime_edit(target, word, word[::-1])  # same size, same mtime: only the text tells
    monkeypatch.setattr(token_cache, "document_tokens", document_tokens)
    after = _answers(folder)
    shutil.rmtree(folder / C.STATE_DIRNAME / "cache")
    assert _answers(folder) == after  # as with no cache and no store at all


def test_a_changed_memory_gets_its_new_tokens_and_the_next_fill_drops_its_old_entry(folder):
    token_store.fill(folder)
    before = set(_keys(_fields(folder)))
    memories = sorted(p for p in folder.glob("*.md") if p.name != C.INDEX_NAME)
    memories[0].write_text(memories[0].read_text(encoding="utf-8").replace("description: ", "description: zeppelins ", 1),
                           encoding="utf-8")
    memories[1].unlink()
    fields = _fields(folder)
    found = token_store.lookup(folder, _keys(fields))
    edited = next(f for f in fields if "zeppelins" in f[1])
    assert token_cache.digest(edited) not in found  # its old entry is another text's
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, [edited])] == [_as_tuple(document_tokens(*edited))]
    assert token_store.fill(folder) == (1, len(fields))  # the edited memory made again, the deleted one dropped
    table = token_store._open(folder, token_cache.fingerprint())
    assert table is not None
    os.close(table.fd)
    stored = {table.keys[i:i + 16] for i in range(0, len(table.keys), 16)}
    assert stored == {unhexlify(k) for k in _keys(fields)} and stored != {unhexlify(k) for k in before}
    mtime = (folder / STORE).stat().st_mtime_ns
    assert token_store.fill(folder) == (0, 0) and (folder / STORE).stat().st_mtime_ns == mtime  # nothing to do


def test_a_missing_or_foreign_store_is_not_used(folder, monkeypatch):
    keys = _keys(_fields(folder))
    assert token_store.lookup(folder, keys) == {}  # none yet
    token_store.fill(folder)
    assert len(token_store.lookup(folder, keys)) == len(keys)
    monkeypatch.setattr(token_cache, "_fingerprint", "another-tokeniser")
    assert token_store.lookup(folder, keys) == {}
    monkeypatch.setattr(token_cache, "_fingerprint", "")  # an unreadable tokeniser source: no store at all
    assert token_store.lookup(folder, keys) == {} and token_store.fill(folder) == (0, 0)


def test_without_pread_there_is_no_store_and_ranking_goes_on(tmp_path, monkeypatch):
    folder, fields, _ = _small(tmp_path)
    monkeypatch.delattr(os, "pread")  # Windows
    assert token_store.lookup(folder, _keys(fields)) == {} and token_store.fill(folder) == (0, 0)
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, fields)] == [_as_tuple(document_tokens(*f)) for f in fields]


def _small(tmp_path: Path) -> tuple[Path, list, bytes]:
    """A three-memory folder, its fields and its store's bytes."""
    for i, body in enumerate(["deploys go out on Tuesdays", "the database is Postgres 16", "résumés fit one page"]):
        (tmp_path / f"m{i}.md").write_text(f"---\nname: note {i}\ndescription: about {body}\ntype: project\n---\n"
                                           f"{body}\n", encoding="utf-8")
    token_store.fill(tmp_path)
    return tmp_path, _fields(tmp_path), (tmp_path / STORE).read_bytes()


def _parts(data: bytes) -> tuple[int, int, int]:
    """(n, where the keys start, where the offsets start) of a store's bytes."""
    n = int(data[-token_store.TRAILER:].split()[3])
    offsets_at = len(data) - token_store.TRAILER - 8 * (n + 1)
    return n, offsets_at - 16 * n, offsets_at


def _entry_changed(data: bytes, change) -> bytes:
    """The store with its first entry replaced by change(entry), the offsets made to fit."""
    n, keys_at, offsets_at = _parts(data)
    offsets = array("Q", data[offsets_at: offsets_at + 8 * (n + 1)])
    new = change(data[: offsets[1]])
    moved = array("Q", [0] + [o + len(new) - offsets[1] for o in offsets[1:]])
    return new + data[offsets[1]: offsets_at] + moved.tobytes() + data[-token_store.TRAILER:]


def _u32(entry: bytes, field: int, value: int) -> bytes:
    at = 16 + 4 * field
    return entry[:at] + array("I", [value]).tobytes() + entry[at + 4:]


def _layout(entry: bytes) -> tuple[list[int], int, int]:
    """An entry's five head fields, where its name positions start and where its text starts."""
    head = list(array("I", entry[16:36]))
    positions = token_store.ENTRY_HEAD + (head[0] + head[1]) * head[4]
    return head, positions, positions + 4 * (head[2] + head[3])


def _name_past_the_stems(entry: bytes) -> bytes:
    head, positions, _ = _layout(entry)
    assert head[2] >= 1  # the memory's name has stems
    return entry[:positions] + array("I", [head[0] + 7]).tobytes() + entry[positions + 4:]


def _a_term_twice(entry: bytes) -> bytes:
    _, _, text = _layout(entry)
    terms = entry[text:].split(b"\t")
    return entry[:text] + b"\t".join([terms[0], terms[0], *terms[2:]])


BROKEN_ENTRIES = {
    "another key": lambda e: b"\xff" * 16 + e[16:],
    "stems past the entry": lambda e: _u32(e, 0, 1 << 30),
    "one stem too many": lambda e: _u32(e, 0, _layout(e)[0][0] + 1),
    "a name past the stems": _name_past_the_stems,
    "bad width": lambda e: _u32(e, 4, 3),
    "a zero count": lambda e: e[:token_store.ENTRY_HEAD] + b"\x00" * _layout(e)[0][4] + e[token_store.ENTRY_HEAD
                                                                                          + _layout(e)[0][4]:],
    "a term twice": _a_term_twice,
    "not UTF-8": lambda e: e + b"\xff\xfe",
    "cut short": lambda e: e[:30],
}


@pytest.mark.parametrize("name", sorted(BROKEN_ENTRIES))
def test_a_broken_entry_is_tokenised_again_and_the_others_still_serve(tmp_path, name):
    folder, fields, data = _small(tmp_path)
    broken = _entry_changed(data, BROKEN_ENTRIES[name])
    assert broken and broken != data
    (folder / STORE).write_bytes(broken)
    keys = _keys(fields)
    got = token_store.lookup(folder, keys)
    assert 1 <= len(got) < len(keys)  # the first entry (by key) refused, the others read
    assert all(_as_tuple(got[k]) == _as_tuple(document_tokens(*f)) for k, f in zip(keys, fields, strict=True) if k in got)
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, fields)] == [_as_tuple(document_tokens(*f))
                                                                             for f in fields]
    assert token_store.fill(folder)[0] == 1  # the next fill makes it again
    assert len(token_store.lookup(folder, keys)) == len(keys)


def test_a_planted_or_broken_store_never_fails_and_at_most_reorders(tmp_path):
    folder, fields, data = _small(tmp_path)
    keys = _keys(fields)
    n, keys_at, offsets_at = _parts(data)
    trailer = data[-token_store.TRAILER:]
    rng = random.Random(26)

    def counted(k: int) -> bytes:
        return data[:-token_store.TRAILER] + trailer.replace(b" 3 ", f" {k} ".encode(), 1)

    planted = [os.urandom(5000), b"", data[:-1], b"x" + data, data[:keys_at] + data[keys_at + 3:],
               counted(300000000), counted(2), counted(-1), counted(0), trailer, b" " * 100 + trailer,
               data[:offsets_at] + array("Q", [0, 10**12, 5, keys_at]).tobytes() + trailer,  # offsets out of order
               data[:offsets_at] + array("Q", [0, 0, 0, keys_at]).tobytes() + trailer]
    assert all(len(p) != len(data) or p != data for p in planted)
    for _ in range(200):  # random bytes changed anywhere
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        planted.append(bytes(mutated))
    for content in planted:
        (folder / STORE).write_bytes(content)
        got = token_store.lookup(folder, keys)
        for tokens in got.values():  # whatever it serves holds together: it can only change scores
            assert tokens.names <= tokens.words.keys() and tokens.related <= tokens.words.keys()
            assert all(c > 0 for c in (*tokens.words.values(), *tokens.written.values()))
        assert len(token_cache.tokenised(folder, fields)) == len(fields)


def test_a_planted_store_of_big_entries_costs_a_prompt_at_most_its_read_limit(tmp_path, monkeypatch):
    folder, fields, _ = _small(tmp_path)
    big = [(f"n{i}", "d", "", " ".join(f"w{i}x{j}" for j in range(8000))) for i in range(6)]
    entries = {unhexlify(token_cache.digest(f)): token_store.encode(unhexlify(token_cache.digest(f)), document_tokens(*f))
               for f in big}
    (folder / STORE).write_bytes(token_store.build(token_cache.fingerprint(), entries))
    each = len(next(iter(entries.values())))
    assert all(each - 100 < len(e) < each + 100 for e in entries.values())
    monkeypatch.setattr(C, "TOKEN_STORE_READ_MAX_BYTES", 3 * each + 50)
    found = token_store.lookup(folder, _keys(big))
    assert len(found) == 3  # then it stops reading: the other three are tokenised
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, big)] == [_as_tuple(document_tokens(*f)) for f in big]


def test_a_planted_entry_is_used_only_for_the_text_it_is_keyed_by(tmp_path):
    folder, fields, _ = _small(tmp_path)
    entries = {unhexlify(token_cache.digest(f)): token_store.encode(unhexlify(token_cache.digest(f)),
                                                                     document_tokens("zeppelin", "zeppelin", "", ""))
               for f in fields}
    (folder / STORE).write_bytes(token_store.build(token_cache.fingerprint(), entries))
    found = token_store.lookup(folder, _keys(fields))
    assert {tuple(t.words) for t in found.values()} == {("zeppelin",)}  # what the planter chose: scores only
    result = api.recall(folder, "zeppelin", engine="offline", record=False, now=NOW, disk_cache=True)
    assert all("zeppelin" not in h.excerpt for h in result.selected)  # no text of its own ever reaches the model
    assert "zeppelin" not in result.context


def test_a_symlink_or_fifo_at_the_store_is_neither_followed_nor_opened(tmp_path):
    folder, fields, data = _small(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_bytes(data)
    (folder / STORE).unlink()
    (folder / STORE).symlink_to(outside)
    assert token_store.lookup(folder, _keys(fields)) == {}
    (folder / STORE).unlink()
    os.mkfifo(folder / STORE)
    assert token_store.lookup(folder, _keys(fields)) == {}  # returns at once: never opened for reading


def _wait_for_filler(folder: Path, limit: float = 60.0) -> None:
    fd = os.open(folder / token_store.LOCK_FILE, os.O_RDWR)
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                assert time.monotonic() < deadline, "the filler did not end"
                time.sleep(0.05)
    finally:
        os.close(fd)


def test_the_prompt_hook_starts_one_filler_and_then_reads_the_store(folder, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMDIR_PATH", str(folder))
    monkeypatch.setenv("MEMDIR_ENGINE", "offline")
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    hook = prompt_hook(tmp_path, PROMPTS[0])
    first = hook()  # cold: tokenises the pool, starts the filler
    assert "additionalContext" in first
    _wait_for_filler(folder)
    assert len(token_store.lookup(folder, _keys(_fields(folder)))) == len(_fields(folder))
    lock = folder / token_store.LOCK_FILE
    stamped = lock.stat().st_mtime_ns
    (folder / C.STATE_DIRNAME / "cache" / C.RANK_INDEX_NAME).unlink()  # the next prompt ranks every memory again
    (folder / token_cache.CACHE_FILE).unlink()
    assert hook() == first
    assert not (folder / token_cache.CACHE_FILE).exists()  # all from the store: nothing tokenised, nothing cached
    assert lock.stat().st_mtime_ns == stamped  # and no second filler
    shutil.rmtree(folder / C.STATE_DIRNAME / "cache")
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "0")
    assert hook() == first  # the same answer with no store at all


def test_a_fill_leaves_in_the_token_cache_only_what_the_store_lacks(folder, monkeypatch):
    fields = _fields(folder)
    token_cache.tokenised(folder, fields)  # no store yet: every memory into the token cache
    assert len(token_cache._load(folder, token_cache.fingerprint())[1]) == len(fields)
    token_store.fill(folder)
    vocabulary, entries = token_cache._load(folder, token_cache.fingerprint())
    assert entries == {} and vocabulary == []  # all in the store now
    new = ("zeppelin notes", "about airships", "project", "the zeppelin flies on Tuesdays")
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, [*fields[:3], new])] == [
        _as_tuple(document_tokens(*f)) for f in [*fields[:3], new]]
    vocabulary, entries = token_cache._load(folder, token_cache.fingerprint())
    assert list(entries) == [token_cache.digest(new)]  # only the memory the store lacks, with its own words
    assert set(vocabulary) == {*document_tokens(*new).words, *document_tokens(*new).written}
    token_cache.prune(folder, {token_cache.digest(new)})
    assert list(token_cache._load(folder, token_cache.fingerprint())[1]) == [token_cache.digest(new)]
    assert [_as_tuple(d) for d in token_cache.tokenised(folder, [new])] == [_as_tuple(document_tokens(*new))]


def test_a_big_token_cache_beside_a_store_starts_a_filler(folder, monkeypatch):
    fields = _fields(folder)
    token_cache.tokenised(folder, fields)
    token_store.fill(folder)
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    started = []
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: started.append(a) or 1)
    new = [(f"n{i}", f"note {i}", "project", f"body {i}") for i in range(C.TOKEN_STORE_FILL_MIN - 1)]
    token_cache.tokenised(folder, [*fields[:5], *new], fill=True)
    assert started == []  # a few new memories: from the token cache until a fill is worth it
    monkeypatch.setattr(C, "TOKEN_CACHE_KEPT_BESIDE", 3)
    token_cache.tokenised(folder, [*fields[:5], new[0]], fill=True)
    assert len(started) == 1  # the token cache holds more than it should beside a store: the filler prunes it


def test_a_filler_is_never_started_twice_at_once_nor_again_within_the_retry_interval(tmp_path, monkeypatch):
    folder, fields, _ = _small(tmp_path)
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    started = []
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: started.append(a) or 1)
    assert not token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN - 1)  # too few tokenised to be worth it
    lock = folder / token_store.LOCK_FILE
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a filler runs
    assert not token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN)
    os.close(fd)
    assert token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN) and len(started) == 1
    assert not token_store.spawn_fill(folder, 500)  # one started within TOKEN_STORE_RETRY_S
    past = time.time() - C.TOKEN_STORE_RETRY_S - 1
    os.utime(lock, (past, past))
    assert token_store.spawn_fill(folder, C.TOKEN_STORE_FILL_MIN) and len(started) == 2
    def refused(*args, **kwargs):
        raise NotImplementedError("no setsid here")

    monkeypatch.setattr(os, "posix_spawn", refused)
    os.utime(lock, (past, past))
    assert not token_store.spawn_fill(folder, 500)  # no filler, no error: the prompt is answered all the same
    lock_fd = os.open(lock, os.O_RDWR)
    fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and the lock was let go
    os.close(lock_fd)
    for off in ("0", "Off", "no"):
        monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, off)
        os.utime(lock, (past, past))
        assert not token_store.spawn_fill(folder, 500)  # switched off


def test_the_filler_run_by_hand_leaves_when_another_holds_the_lock(tmp_path):
    folder, _, _ = _small(tmp_path)
    (folder / STORE).unlink()
    fd = os.open(folder / token_store.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert token_store.main([str(folder)]) == 0 and not (folder / STORE).exists()
    finally:
        os.close(fd)
    assert token_store.main([str(folder)]) == 0 and (folder / STORE).exists()


def test_a_read_only_folder_still_ranks_and_starts_no_filler(tmp_path, monkeypatch):
    folder, fields, _ = _small(tmp_path)
    (folder / STORE).unlink()
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "1")
    monkeypatch.setattr(os, "posix_spawn", lambda *a, **k: pytest.fail("spawned"))
    opened = token_store.safefs.open_file

    def read_only(root, rel, flags=os.O_RDONLY):
        if flags & os.O_CREAT:
            raise PermissionError("read-only")
        return opened(root, rel, flags)

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(token_store.safefs, "open_file", read_only)  # tests run as root: chmod would not stop them
    monkeypatch.setattr(token_store.safefs_write, "write_bytes", refuse)
    docs = token_cache.tokenised(folder, fields * 4, fill=True)
    assert [_as_tuple(d) for d in docs] == [_as_tuple(document_tokens(*f)) for f in fields * 4]


def test_rank_index_extras_come_from_the_store(tmp_path):
    folder, fields, _ = _small(tmp_path)
    rank_index.save(folder, _keys(fields[:1]), [b""], [document_tokens(*fields[0])])
    (folder / token_cache.CACHE_FILE).unlink(missing_ok=True)
    corpus, _ = rank_index.corpus_for(folder, fields, lambda f: f)
    assert not (folder / token_cache.CACHE_FILE).exists()  # the two extras read from the store
    prompts = ["deploys on Tuesdays", "Postgres database", "résumé page"]
    docs = [document_tokens(*f) for f in fields]
    for prompt in prompts:
        assert Ranker(fields, corpus=corpus).rank(prompt) == Ranker(fields, docs).rank(prompt)
