"""What answers memdir's requests in an eval run, behind one loopback Messages API (evals/relay.py).

In order: a recorded answer from a cassette (`--replay DIR`); else the relay folder (`--engine relay
--relay-dir DIR`: a person or another agent answers) or the real API (`--engine anthropic`, forwarded
as sent); else, when replaying alone, the run fails and the request is written with a unified diff
against the nearest recorded one. With `--record DIR` every answer given (replayed ones too) is written
to a cassette, and at the end of a successful run that cassette's entries for the sessions run but no
longer sent are removed. Recording into the folder one replays from is how a cassette is re-recorded:
requests memdir still sends are answered from it, changed ones go to the relay or the API.

memdir itself runs unchanged: the anthropic engine, its client pointed at the loopback server through
ANTHROPIC_BASE_URL for the length of the run.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from memdir.errors import MemdirError
from memdir.evals.cassette import MEMORY_DIR, Cassette, miss_diff, normalise, request_key, restore
from memdir.evals.relay import Incoming, LoopbackAPI, LoopError, PassThrough, RelayDir, relay_timeout
from memdir.evals.request_text import render_request

DEFAULT_UPSTREAM = "https://api.anthropic.com"
FORWARDED_HEADERS = ("x-api-key", "authorization", "anthropic-version", "anthropic-beta", "content-type")
UPSTREAM_TIMEOUT = 600.0

Fallback = Callable[[Incoming, str, str, str], dict]  # (request, key, session, note on a replay miss) -> response


def forward_to(upstream: str) -> Fallback:
    """The real API (or a gateway) answers: the request is sent on as it came, with its credentials."""

    def forward(incoming: Incoming, key: str, session: str, note: str) -> dict:
        headers = {k: v for k, v in incoming.headers.items() if k in FORWARDED_HEADERS}
        data = json.dumps(incoming.body).encode("utf-8")
        request = urllib.request.Request(upstream.rstrip("/") + incoming.path, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT) as response:  # noqa: S310 - https or loopback
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:  # memdir's retry rules decide, as they would without the loop
            raise PassThrough(exc.code, exc.read(), dict(exc.headers.items())) from None
        except (urllib.error.URLError, TimeoutError) as exc:
            body = json.dumps({"type": "error", "error": {"type": "api_error", "message": f"{upstream}: {exc}"}})
            raise PassThrough(502, body.encode(), {"x-should-retry": "true"}) from None

    return forward


class ModelLoop:
    """The answer chain for one run; `begin` names the session and its memory folder before each extraction."""

    def __init__(self, *, replay: Cassette | None, fallback: Fallback | None, record: Cassette | None,
                 misses: Path, client_timeout: float | None = None, hold_misses: bool = True) -> None:
        """`hold_misses`: the answerer can read files (the relay), so misses wait in memory for the run's end."""
        self.replay, self.fallback, self.record, self.misses = replay, fallback, record, misses
        self.hold_misses = hold_misses
        self.client_timeout = client_timeout
        self.session = ""
        self.volatile: dict[str, str] = {}
        self.sessions: set[str] = set()
        self.server = LoopbackAPI(self.answer)
        self._missed = 0
        self._pending: dict[str, str] = {}  # the misses' files by name, written by write_misses
        self.started = float(int(time.time()))  # manifest stamps are whole seconds
        self._lock = threading.Lock()  # the server answers on a thread per request

    def begin(self, session: str, memory_dir: Path, also: Mapping[str, str] | None = None) -> None:
        """`also`: more of this run's text that differs between runs, mapped to its placeholder (recall's
        benchmark: the copied folder's file times, which are those of whenever the real data was provisioned)."""
        self.session = session
        self.sessions.add(session)
        from memdir.stages.extractor.platform_paths import shown_path

        # (the request shows a folder under the home folder as `~/...`: a TMPDIR there is the same folder)
        self.volatile = {str(memory_dir): MEMORY_DIR, str(memory_dir.resolve()): MEMORY_DIR,
                         shown_path(memory_dir): MEMORY_DIR, **(also or {})}

    def label(self, engine: str) -> str:
        """What answered, for the report: "relay", "replay of DIR + relay", "anthropic, recorded to DIR"."""
        parts = [f"replay of {self.replay.folder}"] if self.replay is not None else []
        parts += [engine] if self.fallback is not None else []
        recorded = f", recorded to {self.record.folder}" if self.record is not None else ""
        return " + ".join(parts) + recorded

    @property
    def failure(self) -> str | None:
        return self.server.failure

    def client(self):
        """The SDK client memdir uses in the run: the default one, or one that waits as long as the relay does."""
        if self.client_timeout is None:
            return None
        from memdir.llm import make_client

        return make_client(timeout=self.client_timeout)

    def answer(self, incoming: Incoming) -> dict:
        request = normalise(incoming.body, self.volatile, self.started)
        key = request_key(request)
        recorded = self.replay.get(key) if self.replay is not None else None
        if recorded is not None:
            response = restore(recorded.response, self.volatile)
        else:
            with self._lock:
                note = self._keep_miss(request) if self.replay is not None else ""
            if self.fallback is None:
                raise LoopError(f"{self.session}: no recorded answer for what memdir now sends; {note} "
                                "(to re-record: docs/evals-and-benchmarks.md#cassettes)", status=404, kind="not_found_error")
            # Whoever answers is the model, blind: not even the log it watches points at a recorded answer. Where the
            # diffs and the nearest answers are is said once the run is over (finish).
            response = self.fallback(incoming, key, self.session, "a new request" if note else "")
        if self.record is not None:
            with self._lock:
                self.record.put(key, self.session, request, normalise(response, self.volatile, self.started))
        return response

    def _keep_miss(self, request: dict) -> str:
        """The request the cassette lacks, its diff against the nearest recorded one and that one's answer
        (with this run's memory folder put back, ready to reuse if it still fits); says where they go. Kept in
        memory while someone answers (`write_misses`, at the end of the run): an answerer with file access, looking
        under the run's folder, would find the nearest recorded answer while it is still answering."""
        assert self.replay is not None
        self._missed += 1
        stem = f"{self._missed:04d}"
        nearest = self.replay.nearest(request, self.session)
        diff = self.misses / f"{stem}.diff"
        files = {f"{stem}.request.json": json.dumps(request, indent=1, ensure_ascii=False) + "\n",
                 f"{stem}.request.md": render_request(request), diff.name: miss_diff(request, nearest)}
        if nearest is None:
            note = f"the cassette {self.replay.folder} is empty; the request is in {diff}"
        else:
            answer = self.misses / f"{stem}.nearest-response.json"
            files[answer.name] = json.dumps(restore(nearest.response, self.volatile), indent=1, ensure_ascii=False) + "\n"
            note = (f"the change against the nearest request recorded in {self.replay.folder}: {diff}; "
                    f"that request's recorded answer: {answer}")
        self._pending.update(files)
        if self.fallback is None or not self.hold_misses:  # nobody answers (the run fails now, with this note naming
            self._flush_misses()  # the files), or an API does, which reads no file: written now, memory stays flat
        return note

    def write_misses(self) -> None:
        """The misses kept so far, written to their folder: once the run is over (finish, or the loop's end)."""
        with self._lock:
            self._flush_misses()

    def _flush_misses(self) -> None:
        if self._pending:
            self.misses.mkdir(parents=True, exist_ok=True)
        for name, text in self._pending.items():
            (self.misses / name).write_text(text, encoding="utf-8")
        self._pending.clear()

    def finish(self) -> list[Path]:
        """After a successful run: the record cassette lists the sessions run and drops what they no longer send."""
        self.write_misses()
        if self._missed and self.fallback is not None:
            print(f"memdir relay: {self._missed} request(s) were not in the cassette; each one's diff against the "
                  f"nearest recorded request, and that request's answer, are in {self.misses}", file=sys.stderr)
        return self.record.finish(self.sessions) if self.record is not None else []


def _fallback(engine: str, relay_dir: str | None) -> tuple[Fallback | None, float | None]:
    if engine == "relay":
        if not relay_dir:
            raise MemdirError("--engine relay needs --relay-dir DIR: the folder where requests and answers are written")
        timeout = relay_timeout()
        relay = RelayDir(Path(relay_dir), timeout)
        return (lambda incoming, key, session, note: relay.ask(incoming.body, key, session, note)), timeout + 60
    if engine in ("llm", "anthropic"):
        from memdir.config import choose_engine

        choose_engine(engine)  # credentials or a base URL, or the one-line error `--engine anthropic` gives
        return forward_to(os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM), None
    return None, None


@contextmanager
def model_loop(engine: str, *, relay_dir: str | None, record: str | None, replay: str | None,
               misses: Path) -> Iterator[ModelLoop | None]:
    """The loop for `memdir eval run`, or None when the engine runs without one (no relay, record or replay).
    The caller calls `finish()` after a run that succeeded, and only then."""
    if engine != "relay" and not record and not replay:
        yield None
        return
    if engine not in ("relay", "llm", "anthropic", "auto"):
        raise MemdirError(f"--record and --replay work with --engine relay or anthropic, not {engine}")
    if engine == "auto" and not replay:
        raise MemdirError("--record needs --engine relay or --engine anthropic: the model whose answers are recorded")
    fallback, client_timeout = _fallback(engine, relay_dir)
    loop = ModelLoop(replay=Cassette(Path(replay)) if replay else None, fallback=fallback,
                     record=Cassette(Path(record), create=True) if record else None, misses=misses,
                     client_timeout=client_timeout, hold_misses=engine == "relay")
    previous = os.environ.get("ANTHROPIC_BASE_URL")
    try:
        with loop.server:
            os.environ["ANTHROPIC_BASE_URL"] = loop.server.url
            try:
                yield loop
            finally:
                if previous is None:
                    os.environ.pop("ANTHROPIC_BASE_URL", None)
                else:
                    os.environ["ANTHROPIC_BASE_URL"] = previous
    finally:  # a run that failed (no finish): its misses still go to the folder, now that nobody is answering
        loop.write_misses()
