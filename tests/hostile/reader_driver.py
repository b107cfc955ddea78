"""Every reader of a memory folder, run in one process against a folder that holds one planted file.

`python -m tests.hostile.reader_driver FOLDER PLANTED [FOLDER PLANTED ...]` prints one JSON line per
folder and step: {"folder", "step", "code", "out", "err", "exc"}. `exc` is an exception that
escaped the step, which a user would have seen as a traceback, or "hang" when the step ran past
STEP_SECONDS. The test runs this under a time limit and an address-space limit, so a YAML bomb
that expands is a counted hang or MemoryError, never a stalled test machine. One process serves
every folder: importing memdir and the SDK costs more than all the steps.

The steps are the readers issue 22 found stalled: the CLI commands, both hooks that read memories,
the warm recall server's handler, the Stop worker's offline extraction, the memory tool's create
and the extraction agent's Write.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

STEP_SECONDS = 30
QUESTION = "which editor does the user use"
CLI_STEPS = [
    ("list",), ("list", "--json"), ("show", "user_bad.md"), ("show", "Real"), ("recall", QUESTION),
    ("index", "--rebuild"), ("doctor",), ("history", "user_real.md"), ("history", "user_bad.md"),
    ("remember", "The user deploys on Fridays", "--type", "project"), ("dream", "--engine", "offline"),
    ("consolidate", "--engine", "offline", "--dry-run"), ("consolidate", "--engine", "offline"),
]


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _emit(folder: Path, step: str, code: object, out: str = "", err: str = "", exc: str = "") -> None:
    print(json.dumps({"folder": str(folder), "step": step, "code": code, "out": out[-4000:], "err": err[-2000:],
                      "exc": exc}), file=sys.__stdout__, flush=True)


def _run(folder: Path, step: str, call) -> None:
    out, err = io.StringIO(), io.StringIO()
    signal.alarm(STEP_SECONDS)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = call()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except _Hang:
        _emit(folder, step, -9, out.getvalue(), err.getvalue(), "hang")
        return
    except BaseException as exc:  # noqa: BLE001 - exactly what this driver reports
        _emit(folder, step, -1, out.getvalue(), err.getvalue(), "".join(traceback.format_exception_only(exc)).strip())
        return
    finally:
        signal.alarm(0)
    _emit(folder, step, code, out.getvalue(), err.getvalue())


def _transcript(folder: Path) -> Path:
    path = folder.parent / "transcript.jsonl"
    line = {"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(folder.parent),
            "timestamp": "2026-03-02T10:00:00Z",
            "message": {"role": "user", "content": "Remember that the user reviews pull requests on Mondays."}}
    path.write_text(json.dumps(line) + "\n")
    return path


def drive(folder: Path, planted: str) -> None:
    from anthropic.lib.tools import ToolError

    from memdir.entry.cli import main as cli
    from memdir.entry.hooks import main as hook
    from memdir.entry.memory_tool import MemdirMemoryTool
    from memdir.entry.worker import main as worker
    from memdir.stages.extractor.tools import Toolbox
    from memdir.stages.recall import server

    os.environ.update({"MEMDIR_PATH": str(folder), "MEMDIR_ENGINE": "offline", "MEMDIR_RECALL_SERVER": "0"})
    for argv in CLI_STEPS:
        _run(folder, " ".join(argv), lambda argv=argv: cli(["--dir", str(folder), *argv]))
    payload = json.dumps({"session_id": "s", "cwd": str(folder.parent), "prompt": QUESTION, "source": "startup"})
    for event in ("prompt", "session-start"):
        _run(folder, f"hook {event}", lambda event=event: hook([event], stdin=io.StringIO(payload), stdout=sys.stdout))
    request = {"memory_dir": str(folder), "query": QUESTION, "engine": "offline", "session_id": "s2",
               "env": {"MEMDIR_PATH": str(folder)}}  # as the hook sends it: a folder the server may serve
    _run(folder, "server handle", lambda: print(server.handle(request, None)["context"]))
    worker_request = json.dumps({"cwd": str(folder.parent), "transcript": str(_transcript(folder)), "session_id": "w"})
    _run(folder, "stop worker", lambda: worker([worker_request]))
    tool = MemdirMemoryTool(folder)

    def create() -> None:
        try:
            print(tool.call({"command": "create", "path": "/memories/user_planted.md", "file_text": planted}))
        except ToolError as exc:  # the SDK hands this to the model as the tool's error result
            print(f"refused: {exc}")

    _run(folder, "memory tool create", create)
    box = Toolbox(folder)
    _run(folder, "agent Write", lambda: print(box.run("Write", {"file_path": "user_agent.md", "content": planted}).content))


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, _alarm)
    pairs = sys.argv[1:]
    for folder, planted in zip(pairs[::2], pairs[1::2], strict=True):
        drive(Path(folder), Path(planted).read_text(encoding="utf-8", errors="surrogateescape"))
