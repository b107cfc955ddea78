"""What the warm recall server has found of each name a memory gives, per project, kept between prompts
(issue 26).

Checking the names a recalled memory gives against the project (memdir.verify) reads the project's files
until every name is found or the time budget runs out. In a real project a memory naming code that is gone,
or a few memories naming many things, spend the whole budget: measured on this repository with memories
from the real folder, 3 recalled memories took 155 ms of a prompt's answer (a bare Python start is ~12 ms),
and most of their names were still "not checked". The benchmark's empty working folder never showed it.

So the server keeps each name's verdict per project for VERDICT_TTL_SECONDS, a prompt's answer spends
VERIFY_PROMPT_BUDGET_S (none) searching for names without one (paths are still checked at once: a stat each), and
those are searched after the reply, in the background with VERIFY_BACKGROUND_BUDGET_S, pausing whenever a prompt
is being answered: a memory recalled again (in this session or another) shows the real result.
A verdict older than the TTL is checked again: the project changes while the server runs.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from memdir import constants as C

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class Verdicts:
    """(project root, name) -> whether the project holds it, for `ttl` seconds; at most `limit` kept."""

    def __init__(self, ttl: float = C.VERDICT_TTL_SECONDS, limit: int = C.VERDICTS_KEPT) -> None:
        self.ttl, self.limit = ttl, limit
        self._kept: OrderedDict[tuple[str, str], tuple[bool, float]] = OrderedDict()
        self._lock = threading.Lock()  # the server answers prompts on several threads

    def get(self, root: str, needle: str) -> bool | None:
        with self._lock:
            hit = self._kept.get((root, needle))
        if hit is None or time.monotonic() - hit[1] > self.ttl:
            return None
        return hit[0]

    def put(self, root: str, found: dict[str, bool]) -> None:
        now = time.monotonic()
        with self._lock:
            for needle, there in found.items():
                self._kept[(root, needle)] = (there, now)
                self._kept.move_to_end((root, needle))
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)


class Rechecker:
    """One background thread that checks, with the full budget, the memories a prompt could not finish."""

    def __init__(self, verdicts: Verdicts, budget_s: float = C.VERIFY_BACKGROUND_BUDGET_S,
                 busy: Callable[[], bool] | None = None) -> None:
        self.verdicts, self.budget_s = verdicts, budget_s
        # Whether a prompt is being answered: the search waits between files meanwhile. It holds the GIL while
        # it matches (re never releases it), and a pure-Python thread beside an answer made that answer wait for
        # the GIL again and again (a recalling prompt's answer took 485 ms in-process, against ~60 ms).
        self.busy = busy
        self._queue: OrderedDict[tuple[str, str, str], None] = OrderedDict()  # (root, memory folder, rel path)
        self._checked: OrderedDict[tuple[str, str, str], float] = OrderedDict()  # the same -> when last checked
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def later(self, root: str, memory_dir: str, rel_paths: list[str]) -> None:
        """Check these memories of `memory_dir` against the project at `root`, unless checked here within the
        verdicts' TTL: what a full-budget check left unchecked (a project too big to read through in it, such
        as a home folder), the next one leaves too, and re-queued on every recall it cost 10 s of CPU a prompt."""
        now = time.monotonic()
        with self._wake:
            for rel in rel_paths:
                checked = self._checked.get((root, memory_dir, rel))
                if checked is None or now - checked > self.verdicts.ttl:
                    self._queue[(root, memory_dir, rel)] = None
            while len(self._queue) > C.VERIFY_QUEUE_MAX:
                self._queue.popitem(last=False)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, daemon=True, name="memdir-verify")
                self._thread.start()
            self._wake.notify()

    def _work(self) -> None:
        from memdir.verify import check_many, holds_no_code, memory_folder_in

        while True:
            with self._wake:
                while not self._queue:
                    self._wake.wait()
                root, memory_dir, _ = next(iter(self._queue))
                batch = [rel for r, m, rel in list(self._queue) if (r, m) == (root, memory_dir)]
                now = time.monotonic()
                for rel in batch:
                    del self._queue[(root, memory_dir, rel)]
                    self._checked[(root, memory_dir, rel)] = now
                    self._checked.move_to_end((root, memory_dir, rel))
                while len(self._checked) > C.VERIFY_QUEUE_MAX:
                    self._checked.popitem(last=False)
            if holds_no_code(memory_dir, root):
                continue  # no project code to check against (memdir.verify.holds_no_code)
            try:
                check_many(root, memory_texts(memory_dir, batch), budget_s=self.budget_s, verdicts=self.verdicts,
                           between_files=self._give_way, skip=memory_folder_in(memory_dir, root))
            except Exception:  # noqa: BLE001 - a failed check only leaves the names unchecked
                pass

    def _give_way(self) -> None:
        waited = 0.0
        while self.busy is not None and self.busy() and waited < C.VERIFY_GIVE_WAY_MAX_S:
            time.sleep(C.VERIFY_GIVE_WAY_STEP_S)
            waited += C.VERIFY_GIVE_WAY_STEP_S


def memory_texts(memory_dir, rel_paths: list[str]) -> dict[str, str]:
    """The start of each memory file (what verification reads for names), through safefs: a memory swapped
    for a symlink since it was scanned is skipped, never followed out of the folder."""
    from memdir import safefs

    texts = {}
    for rel in rel_paths:
        try:
            texts[rel] = safefs.read_text(memory_dir, rel, C.VERIFY_READ_BYTES, prefix=True, errors="replace")
        except OSError:
            continue  # gone, or not a plain file any more: nothing to check
    return texts
