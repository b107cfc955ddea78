"""The hostile-input suite's shared tools: a tally of what was tried, and the traps it is checked against.

Every test here feeds memdir something an attacker or a broken machine could produce and checks the
four promises: no traceback reaches the user (one clear line and a non-zero exit instead), no hang,
no read or write outside the memory folder, nothing lost. The tally counts each input tried and each
broken promise; the session ends with one summary line (quoted in the issue's closing note):

    hostile suite: N inputs tried, 0 tracebacks, 0 hangs, 0 escapes, 0 bytes lost, 0 secrets on disk

Every file memdir writes during the suite lands under one session folder, so the last test
(test_zz_secret_scan.py) can read all of it back and look for the planted secrets. Under pytest-xdist the
whole folder runs on one worker, in file order (tests/conftest.py groups it), for that scan; each worker
still sends its tallies to the controller (summary_state / merge_summary), which prints the lines once.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

# Planted secrets: fake, but shaped so the secret guard recognises each of them.
ANTHROPIC_KEY = "sk-ant-api03-" + "HOSTILEkey0123456789abcdefghijklmnopqrstuv"
GITHUB_TOKEN = "ghp_" + "HOSTILE0123456789abcdefghijklmnopqrstuvwx"
CANARY = "CANARY-7f3e9c-outside-the-memory-folder"  # content of every file outside the memory folder
# Secrets in the shapes people type (issue 22, finding 4): (a sentence holding it, the secret itself).
TYPED_SECRETS = (
    ("Let's use Django for the admin; SECRET_KEY=h0stile9f8e7d6c5b4a3f2e1d", "h0stile9f8e7d6c5b4a3f2e1d"),
    ("We chose MySQL for reports, DB_PASS=H0stileDbPa55", "H0stileDbPa55"),
    ("Let's use Redis because it is deployed; the password for staging is H0stile&Tr0ub4dor", "H0stile&Tr0ub4dor"),
    ("We push over https://deploy:h0stile/pa55@git.example.com/shop.git", "h0stile/pa55"),
    ("Let's use Azure blobs: AccountKey=H0st" + "ile+" * 20 + "Az==", "H0st" + "ile+" * 20 + "Az=="),
    ("We chose the proxy; Authorization: Basic ZGVwbG95Omgwc3RpbGUtcGFzcw==", "ZGVwbG95Omgwc3RpbGUtcGFzcw=="),
    ("Let's call the API with Authorization: Bearer H0stileBearer0123456789xyz", "H0stileBearer0123456789xyz"),
    ("We use the hub with hf_H0stileAbCdEfGhIjKlMnOpQrStUvWxYz", "hf_H0stileAbCdEfGhIjKlMnOpQrStUvWxYz"),
    ("We chose SendGrid: SG.H0stileSendGrid012345.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
     "SG.H0stileSendGrid012345.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"),
    ("We use S3; our AWS secret is H0stileAwsK7MDENG/bPxRfiCYEXAMPLEKEY0123", "H0stileAwsK7MDENG/bPxRfiCYEXAMPLEKEY0123"),
)
SECRETS = (ANTHROPIC_KEY, GITHUB_TOKEN, CANARY, *(secret for _sentence, secret in TYPED_SECRETS))
TIMEOUT = 30  # seconds: a subprocess run longer than this is a hang


def secret_forms(secret: str) -> set[str]:
    """The secret and the slugs a file name or log could carry it as."""
    return {secret, secret.replace("-", "_"), secret.replace("_", "-"), secret.lower().replace("-", "_")}


class Tally:
    def __init__(self) -> None:
        self.tried = self.tracebacks = self.hangs = self.escapes = self.bytes_lost = self.secrets = 0
        self.notes: list[str] = []

    def line(self) -> str:
        count = POISONING.planted + PLANTED_WRITES.planted
        planted = f", {count} planted memories" if POISONING.tried or PLANTED_WRITES.tried else ""
        return (f"hostile suite: {self.tried} inputs tried, {self.tracebacks} tracebacks, "
                f"{self.hangs} hangs, {self.escapes} escapes, {self.bytes_lost} bytes lost{planted}, "
                f"{self.secrets} secrets on disk")

    COUNTS = ("tried", "tracebacks", "hangs", "escapes", "bytes_lost", "secrets")

    def state(self) -> dict:
        return {**{name: getattr(self, name) for name in self.COUNTS}, "notes": list(self.notes)}

    def merge(self, state: dict) -> None:
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + state[name])
        self.notes.extend(state["notes"])


TALLY = Tally()


class Poisoning:
    """The planted-text matrix (test_poisoning.py): ways in x payloads, and how many landed anywhere."""

    def __init__(self) -> None:
        self.ways: set[str] = set()
        self.payloads: set[str] = set()
        self.tried = self.planted = 0

    def add(self, way: str, payload: str, *, planted: bool) -> None:
        self.ways.add(way)
        self.payloads.add(payload)
        self.tried += 1
        self.planted += planted

    def line(self) -> str:
        return (f"poisoning: {len(self.ways)} ways x {len(self.payloads)} payloads ({self.tried} transcripts, "
                f"each through the offline engine, the LLM engine's request and the decision pipeline), "
                f"{self.planted} planted")

    def state(self) -> dict:
        return {"ways": sorted(self.ways), "payloads": sorted(self.payloads), "tried": self.tried,
                "planted": self.planted}

    def merge(self, state: dict) -> None:
        self.ways.update(state["ways"])
        self.payloads.update(state["payloads"])
        self.tried += state["tried"]
        self.planted += state["planted"]


POISONING = Poisoning()


class PlantedWrites:
    """The obeying-model matrix (test_planted_writes.py): ways in x payloads, and the true positives kept."""

    def __init__(self) -> None:
        self.ways: set[str] = set()
        self.payloads: set[str] = set()
        self.tried = self.planted = self.true_positives = self.kept = 0

    def add(self, way: str, payload: str, *, planted: bool) -> None:
        self.ways.add(way)
        self.payloads.add(payload)
        self.tried += 1
        self.planted += planted

    def keep(self, kept: bool) -> None:
        self.true_positives += 1
        self.kept += kept

    def line(self) -> str:
        return (f"planted writes: {self.tried} cases ({len(self.ways)} ways x {len(self.payloads)} payloads), each "
                f"offline and with a scripted model that obeys the planted text: {self.planted} planted memories "
                f"saved; true positives kept: {self.kept} of {self.true_positives}")

    def state(self) -> dict:
        return {"ways": sorted(self.ways), "payloads": sorted(self.payloads), "tried": self.tried,
                "planted": self.planted, "true_positives": self.true_positives, "kept": self.kept}

    def merge(self, state: dict) -> None:
        self.ways.update(state["ways"])
        self.payloads.update(state["payloads"])
        self.tried += state["tried"]
        self.planted += state["planted"]
        self.true_positives += state["true_positives"]
        self.kept += state["kept"]


PLANTED_WRITES = PlantedWrites()


def summary_lines() -> list[str]:
    """The suite's closing lines, printed once by tests/conftest.py (serial, or on the xdist controller)."""
    lines = []
    if TALLY.tried or POISONING.tried:
        lines += [TALLY.line(), *(f"  {note}" for note in TALLY.notes[:20])]
    if POISONING.tried:
        lines.append(POISONING.line())
    if PLANTED_WRITES.tried or PLANTED_WRITES.true_positives:
        lines.append(PLANTED_WRITES.line())
    return lines


def summary_state() -> dict:
    """This process's tallies as plain data: what an xdist worker sends to the controller."""
    return {"tally": TALLY.state(), "poisoning": POISONING.state(), "planted_writes": PLANTED_WRITES.state()}


def merge_summary(state: dict) -> None:
    """Add a worker's tallies to this process's (the controller's), so the lines count every worker."""
    TALLY.merge(state["tally"])
    POISONING.merge(state["poisoning"])
    PLANTED_WRITES.merge(state["planted_writes"])


FINISHED: set[str] = set()  # node ids of the hostile tests this process ran (the scan checks it saw them all)


def pytest_runtest_logfinish(nodeid):
    FINISHED.add(nodeid)


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)  # set on xdist workers only
    if workeroutput is not None:
        workeroutput["hostile"] = summary_state()


@pytest.fixture
def tally() -> Tally:
    return TALLY


@pytest.fixture(scope="session")
def hostile_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def _folder_name(node_name: str) -> str:
    """A short, unique, filesystem-safe folder name per test (parameters may hold any character)."""
    import hashlib

    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in node_name)[:60]
    return f"{safe}-{hashlib.sha1(node_name.encode()).hexdigest()[:8]}"


@pytest.fixture(autouse=True)
def hostile_home(hostile_root, request, monkeypatch) -> Path:
    """HOME (so ~/.claude) inside the session folder the final secret scan reads back."""
    home = hostile_root / "written" / _folder_name(request.node.name)
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def outside(hostile_root, request) -> Path:
    """Files outside any memory folder that an escape would reach: each holds the canary."""
    folder = hostile_root / "outside" / _folder_name(request.node.name)
    (folder / ".ssh").mkdir(parents=True, exist_ok=True)
    (folder / ".config" / "gh").mkdir(parents=True, exist_ok=True)
    for rel in (".ssh/id_rsa", ".config/gh/hosts.yml", ".env", "passwd", "notes.md"):
        (folder / rel).write_text(f"{CANARY}\nline two of {rel}\n")
    return folder


@pytest.fixture
def memory(hostile_home) -> Path:
    folder = hostile_home / "memory"
    folder.mkdir(exist_ok=True)
    return folder


def record_escape(tally: Tally, where: str, text: str) -> bool:
    """Count an escape when any planted outside content shows up in `text`."""
    if CANARY in text:
        tally.escapes += 1
        tally.notes.append(f"escape: {where}")
        return True
    return False


def run_cli(tally: Tally, *argv: str, stdin: str | None = None, env: dict | None = None,
            cwd: Path | None = None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """`memdir ...` as a real process, counted: a traceback or a timeout is recorded, not raised."""
    tally.tried += 1
    try:
        proc = subprocess.run([sys.executable, "-m", "memdir.entry.main", *argv], input=stdin, capture_output=True,
                              text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        tally.hangs += 1
        tally.notes.append(f"hang: memdir {' '.join(argv)[:120]}")
        return subprocess.CompletedProcess(argv, -9, "", "TIMEOUT")
    if "Traceback (most recent call last)" in proc.stderr:
        tally.tracebacks += 1
        tally.notes.append(f"traceback: memdir {' '.join(argv)[:120]}: {proc.stderr.strip().splitlines()[-1][:160]}")
    record_escape(tally, f"memdir {' '.join(argv)[:80]}", proc.stdout + proc.stderr)
    return proc


class _Hang(BaseException):
    """Raised by the watchdog alarm inside a call that blocked too long (e.g. opening a FIFO)."""


def _alarm(signum, frame):
    raise _Hang()


def run_inproc(tally: Tally, *argv: str, timeout: float = TIMEOUT) -> tuple[int, str, str]:
    """The CLI in this process (faster); an exception escaping main() is a traceback the user would see.

    A watchdog alarm interrupts a blocked call (a FIFO opened without O_NONBLOCK blocks forever):
    that is counted as a hang and reported as exit code -9.
    """
    import signal

    from memdir.entry.cli import main

    tally.tried += 1
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(argv))
    except _Hang:
        tally.hangs += 1
        tally.notes.append(f"hang: memdir {' '.join(argv)[:120]}")
        code = -9
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # noqa: BLE001 - exactly what this suite counts
        tally.tracebacks += 1
        tally.notes.append(f"traceback: memdir {' '.join(argv)[:120]}: {type(exc).__name__}: {exc}"[:240])
        code = -1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    record_escape(tally, f"memdir {' '.join(argv)[:80]}", out.getvalue() + err.getvalue())
    return code, out.getvalue(), err.getvalue()


def one_clear_line(code: int, err: str) -> bool:
    """A refusal as the user sees it: non-zero exit, one `memdir: error:` line, no traceback."""
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("memdir: no ANTHROPIC")]
    return code not in (0, -1) and len(lines) == 1 and lines[0].startswith("memdir: error: ")


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every regular file below folder (symlinks not followed), by relative path."""
    out = {}
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            try:
                size = path.stat().st_size
                # Huge (sparse) trap files are compared by size: reading 3 GB would be the test's own hang.
                data = path.read_bytes() if size <= 4 * 1024 * 1024 else f"<{size} bytes>".encode()
                out[path.relative_to(folder).as_posix()] = data
            except OSError:
                pass
    return out


def count_lost(tally: Tally, before: dict[str, bytes], after: dict[str, bytes], keep: set[str] | None = None) -> int:
    """Bytes of files in `before` (or only `keep`) that are gone or changed in `after`."""
    lost = 0
    for rel, data in before.items():
        if keep is not None and rel not in keep:
            continue
        if after.get(rel) != data:
            lost += len(data)
    if lost:
        tally.bytes_lost += lost
        tally.notes.append(f"lost {lost} bytes")
    return lost
