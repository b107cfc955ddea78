"""Who may write into the memory folder: the one decision point every writer asks (issue 24).

Four modes, from `MEMDIR_WRITE_MODE` or `write_mode` in a memdir config.json:
- `auto` (the default): every writer writes, as memdir always did.
- `confirm`: automatic writers (extraction, dream, decision promotion, batch back-fill, the agent's
  MCP and memory-tool writes) leave proposals in `.memdir/proposals/` for `memdir review`; only a
  person's own command (`memdir remember`, `review --accept`) writes.
- `manual`: only what the user asked for is saved: their own commands, and an explicit "remember ..."
  or "forget ..." in a prompt. Other automatic writes are dropped; the agent's tool writes are proposed.
- `read-only`: nothing is written into the memory folder by anyone (its `.memdir/` state aside).

The variable wins when set; otherwise the strictest value among the config files decides, so a
folder's own config can tighten the user's global choice but never loosen it.
"""

from __future__ import annotations

import os

from memdir import constants as C
from memdir.errors import MemdirError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from memdir.store import MemoryStore

ENV = C.WRITE_MODE_ENV
KEY = "write_mode"  # in <config-home>/memdir/config.json or <memory>/.memdir/config.json
MODES = ("auto", "confirm", "manual", "read-only")  # from the most to the least permissive
ALLOWED = "auto, confirm, manual or read-only"

# Who is writing. USER: a person's own command. ASKED: an explicit "remember ..." / "forget ..." in a
# prompt, found by the offline rules. AGENT: the coding agent through MCP or the memory tool.
# AUTO: extraction's own judgement, dream, decision promotion, consolidation.
USER, ASKED, AGENT, AUTO = "user", "asked", "agent", "auto"
WRITE, PROPOSE, SKIP, REFUSE = "write", "propose", "skip", "refuse"

_TABLE = {
    "auto": {USER: WRITE, ASKED: WRITE, AGENT: WRITE, AUTO: WRITE},
    "confirm": {USER: WRITE, ASKED: PROPOSE, AGENT: PROPOSE, AUTO: PROPOSE},
    "manual": {USER: WRITE, ASKED: WRITE, AGENT: PROPOSE, AUTO: SKIP},
    "read-only": {USER: REFUSE, ASKED: SKIP, AGENT: REFUSE, AUTO: SKIP},
}


class ReadOnly(MemdirError):
    """A write refused because the write mode is read-only."""


def parse(raw: str, where: str) -> str:
    """The mode `raw` names (case and spaces aside; `readonly` and `read_only` too), or a one-line error."""
    value = raw.strip().lower().replace("_", "-")
    value = "read-only" if value == "readonly" else value
    if value not in MODES:
        raise MemdirError(f"{where}={raw!r} is unknown; use {ALLOWED}")
    return value


def _config_files(memory_dir: str | os.PathLike | None, env: Mapping[str, str]) -> list[str]:
    """Strings (memdir.locate): the prompt hook reads the mode, without `pathlib`."""
    from memdir.locate import config_home

    files = [os.path.join(config_home(env), "memdir", C.MEMDIR_CONFIG_NAME)]
    if memory_dir is not None:
        files.append(os.path.join(memory_dir, C.STATE_DIRNAME, C.MEMDIR_CONFIG_NAME))
    return files


def current_with_source(memory_dir: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(mode, where it was set) for this memory folder."""
    env = os.environ if env is None else env
    raw = env.get(ENV, "")
    if raw.strip():
        return parse(raw, f"${ENV}"), f"{ENV}={raw.strip()}"
    from memdir.enablement import config_value

    chosen, source = "auto", "the default"
    for config_file in _config_files(memory_dir, env):
        value = config_value(config_file, KEY)
        if value is None:
            continue
        if not isinstance(value, str):
            raise MemdirError(f"{config_file}: {KEY} must be a string: {ALLOWED}")
        mode = parse(value, f"{config_file}: {KEY}")
        if MODES.index(mode) > MODES.index(chosen):
            chosen, source = mode, f"{KEY}: {mode} in {config_file}"
    return chosen, source


def current(memory_dir: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> str:
    return current_with_source(memory_dir, env)[0]


def decide(mode: str, who: str) -> str:
    """write | propose | skip | refuse, for a write by `who` (USER, ASKED, AGENT or AUTO) in `mode`."""
    return _TABLE[mode][who]


def refusal(memory_dir: Path | None, what: str = "nothing was written") -> str:
    _, source = current_with_source(memory_dir)
    return (f"the memory folder is read-only ({source}); {what}. Set {ENV}=auto (or confirm) to let memdir save "
            f"memories")


def check_writable(memory_dir: Path | None) -> None:
    """Raise `ReadOnly` (one line naming the mode and where it was set) when nothing may be written."""
    if current(memory_dir) == "read-only":
        raise ReadOnly(refusal(memory_dir))


def store_for(memory_dir: Path, who: str, source: str, *, team: bool = False) -> MemoryStore | None:
    """The store a writer uses: the folder itself (write), one that turns every write into a proposal
    (propose), or None when this writer may not write at all (skip). A refused write (read-only) gets
    the plain store, which refuses every change in one line naming the mode.

    `source` says who proposed (an extraction run, `mcp`, the memory tool), as `memdir review` shows it."""
    return Writers(memory_dir, source, team=team).store(who)


class Writers:
    """The stores one run's writers use, by who they are: the run's proposals share one `ProposingStore`
    (one run id), so a later change of the same file in the run replaces its earlier proposal."""

    def __init__(self, memory_dir: Path, source: str, *, team: bool = False, mode: str | None = None) -> None:
        from pathlib import Path

        self.memory_dir = Path(memory_dir)
        self.source = source
        self.team = team
        self.mode = mode or current(self.memory_dir)
        self._stores: dict[str, MemoryStore | None] = {}

    def action(self, who: str) -> str:
        return decide(self.mode, who)

    def store(self, who: str) -> MemoryStore | None:
        """The store for `who`: the folder, a proposing store, or None (this write is dropped).
        A refused write gets the plain store, which refuses it in one line (`ReadOnly`)."""
        from memdir.store import MemoryStore

        action = self.action(who)
        if action not in self._stores:
            if action == SKIP:
                self._stores[action] = None
            elif action == PROPOSE:
                from memdir.proposing import ProposingStore

                self._stores[action] = (ProposingStore.team_store(self.memory_dir, source=self.source, mode=self.mode)
                                        if self.team else
                                        ProposingStore(self.memory_dir, source=self.source, mode=self.mode))
            else:
                self._stores[action] = (MemoryStore.team_store(self.memory_dir) if self.team
                                        else MemoryStore(self.memory_dir))
        return self._stores[action]
