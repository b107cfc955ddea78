"""Which memory folder a prompt belongs to, from its cwd: shared by the prompt hook and the recall server; and
the environment of the Python processes the hooks start from that cwd (`child_env`).

The server answers a question sent before the hook resolved anything (issue 26) and must resolve it exactly
as the hook does, so both call these. Cheap on purpose: os only at import; memdir.locate and config load
inside the functions that need them, and folders are plain strings: no `pathlib` (the hook path counts
milliseconds).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own import is not free on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a Python process memdir starts with -P (the Stop worker, the warm recall server, the token store's
    filler), which keeps its working directory (where Claude Code ran the hook: the project) off sys.path. A
    PYTHONPATH entry naming that folder puts it back: an empty one or `.` (`PYTHONPATH=:/x` makes it first), a
    relative one (`src`, resolved against the project), `$PWD` or `$PWD/src` written out; and a project's own
    `json.py` ran in memdir's place. Those entries are dropped, the others kept in their order (PYTHONPATH unset when
    none is left); so is a PYTHONUSERBASE in the project. Here because every hook that starts one has this module
    loaded already."""
    out = dict(env)
    entries = out.get("PYTHONPATH")
    if entries is not None:
        cwd = _cwd()
        kept = [entry for entry in entries.split(os.pathsep) if not _names_project(entry, cwd)]
        if kept:
            out["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del out["PYTHONPATH"]
    base = out.get("PYTHONUSERBASE")
    # the user site is read by `site` (the worker, the server): under a base in the project, its .pth files and
    # usercustomize.py ran at their start (a relative PYTHONUSERBASE=.local is one); kept when memdir is installed there
    if base is not None and _names_project(base or os.curdir, _cwd()) and not _inside(_OWN, base):
        del out["PYTHONUSERBASE"]
    return out


def _inside(path: str, folder: str) -> bool:
    folder = os.path.normcase(os.path.abspath(folder))
    return os.path.normcase(path).startswith(folder.rstrip(os.sep) + os.sep)


def child_sys_path(paths: list[str], env: Mapping[str, str]) -> list[str]:
    """`paths` (this hook's sys.path, which the filler started with -S takes as its own) without the folders the
    PYTHONPATH entries child_env drops put there at this process's start: copied as they were, the project came
    back first on the filler's path."""
    cwd = _cwd()
    dropped = {os.path.normpath(os.path.join(cwd or "", entry)) for entry in env.get("PYTHONPATH", "").split(os.pathsep)
               if _names_project(entry, cwd)}
    dropped.discard(os.path.normpath(_OWN))  # memdir's own folder, which the filler imports memdir from
    return [path for path in paths if path and os.path.normpath(path) not in dropped]


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # a working folder removed under the hook: only absolute entries can be told apart
        return None


_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where `import memdir` finds memdir


def _names_project(entry: str, cwd: str | None) -> bool:
    """Whether the PYTHONPATH entry names the working folder or a folder inside it (relative ones all do), other
    than memdir's own written out (a checkout run through PYTHONPATH, memdir worked on in it: the child needs it)."""
    if not os.path.isabs(entry) or cwd is None:
        return not os.path.isabs(entry)
    entry, cwd = os.path.normcase(os.path.normpath(entry)), os.path.normcase(os.path.normpath(cwd))
    return entry != os.path.normcase(_OWN) and (entry == cwd or entry.startswith(cwd.rstrip(os.sep) + os.sep))


def recall_text(prompt: str) -> str:
    """The prompt as recall reads it: stripped, and past RECALL_PROMPT_MAX_CHARS its start and its end (a question
    around a pasted log is usually said before or after it). At most RECALL_PROMPT_MAX_CHARS, so reading it twice
    changes nothing: the hook reads it so (its decisions too), and recall itself (`recall.api.recall`, which the
    server, the CLI and MCP call)."""
    from memdir.constants import RECALL_PROMPT_MAX_CHARS as limit

    prompt = prompt.strip()
    if len(prompt) <= limit:
        return prompt
    half = (limit - 3) // 2  # 3: the marker between the two halves
    return f"{prompt[:half]}\n…\n{prompt[-half:]}"


def usable_cwd(raw: str | None) -> str | None:
    """The cwd when it can name a project: an absolute, existing folder other than `/`.

    A missing cwd, `/`, a relative path or a file never gets a memory folder of its own.
    """
    if not raw or "\x00" in raw or not os.path.isabs(raw):
        return None
    normal = os.path.normpath(raw)
    if normal == os.path.dirname(normal) or not os.path.isdir(normal):  # "/" (or a drive root), or not a folder
        return None
    return normal


def memory_dir_for(cwd: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The folder for this cwd's project, or None when memdir is switched off there or the
    cwd names no usable project folder. A plain string (memdir.locate): no `pathlib` on the hook path.

    memdir's own switch (MEMDIR_DISABLE, `enabled: false` in its config) decides, not Claude Code's
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: a user may turn native memory off to run memdir instead.
    `env`: the environment deciding (default: this process's; the recall server passes the session's).
    """
    from memdir.enablement import memdir_enabled
    from memdir.locate import resolve

    cwd_text = usable_cwd(cwd)
    if cwd_text is None:
        return None
    memory_dir = resolve(cwd_text, env).path
    if not memdir_enabled(memory_dir, env).enabled:
        return None
    return memory_dir


def native_on(cwd: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Claude Code's own auto memory is on here (it loads MEMORY.md and instructs the model itself)."""
    from memdir.enablement import memory_enabled

    return memory_enabled(usable_cwd(cwd) or os.getcwd(), env).enabled


def index_loaded_by_claude_code(cwd: str | None, memory_dir: str, env: Mapping[str, str] | None = None) -> bool:
    """Claude Code loaded this folder's MEMORY.md into the session: its native auto memory is on and
    uses this very folder (not one memdir alone was pointed at with MEMDIR_PATH)."""
    from memdir.locate import resolve

    if not native_on(cwd, env):
        return False
    native_env = {k: v for k, v in (os.environ if env is None else env).items() if k != "MEMDIR_PATH"}
    try:
        return resolve(usable_cwd(cwd), native_env).path == os.fspath(memory_dir)
    except Exception:  # noqa: BLE001 - unreadable settings: repeating a description is the safe side
        return False


def resolve_for_server(cwd: object, env: Mapping[str, str]) -> tuple[str, bool, str]:
    """What the prompt hook's `_ask` resolves for a prompt, for the recall server answering a question sent early: the memory
    folder, whether Claude Code loaded its index, the engine. ValueError when no folder serves this cwd."""
    from memdir.config import Settings, prompt_engine

    cwd_text = cwd if isinstance(cwd, str) else None
    memory_dir = memory_dir_for(cwd_text, env)
    if memory_dir is None:
        raise ValueError("no memory folder for this cwd (none usable, or memdir is off there)")
    engine = prompt_engine(Settings.from_env(env).engine, env)
    return memory_dir, index_loaded_by_claude_code(cwd_text, memory_dir, env), engine
