"""Fixtures for the real-client suite (see harness.py), and every other test that needs node and npm.

The suite runs only when asked: `pytest --realclient` (registered in tests/conftest.py; .ci/run passes it
when node and npm are there) or `MEMDIR_REALCLIENT=1`. Without that it is skipped with that reason, so the
README's test command stays fast and needs neither node, npm nor the network. Other suites may import
`tests.realclient.harness` and `tests.realclient.loopback_api` directly or use these fixtures.
"""

from __future__ import annotations

import os

import pytest

from tests.realclient import harness as H, loopback_api as A


def _wanted(config) -> bool:
    return config.getoption("--realclient") or os.environ.get("MEMDIR_REALCLIENT", "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    if _wanted(config):
        return
    skip = pytest.mark.skip(reason="real-client suite: set MEMDIR_REALCLIENT=1 or pass --realclient (.ci/run does)")
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def claude_bin():
    """The pinned `claude` executable (installed into the cache on first use)."""
    try:
        return H.claude_code_bin()
    except H.HarnessUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def sandbox(tmp_path):
    """A temp HOME and a temp git repo for `claude -p` sessions."""
    return H.make_sandbox(tmp_path)


@pytest.fixture
def memdir_sandbox(sandbox):
    """A sandbox with `memdir install` done (hooks pointing at this environment's `memdir`)."""
    H.install_memdir(sandbox)
    return sandbox


@pytest.fixture
def scripted_api():
    """A factory: `scripted_api(script)` starts a loopback Messages API, stopped after the test."""
    started: list[A.ScriptedAPI] = []

    def start(script=None) -> A.ScriptedAPI:
        api = A.ScriptedAPI(script).__enter__()
        started.append(api)
        return api

    yield start
    for api in started:
        api.__exit__(None, None, None)
        assert not api.errors, f"the scripted API failed: {api.errors}"


@pytest.fixture
def claude(claude_bin):
    """`claude(sandbox, api, prompt, *args, env=...)` runs one `claude -p` session and checks it succeeded."""

    def run(sandbox, api, prompt, *args, env=None, check=True, timeout=H.RUN_TIMEOUT):
        result = H.run_claude(sandbox, api, prompt, *args, env=env, timeout=timeout, binary=claude_bin)
        if check:
            assert result.returncode == 0, f"claude -p failed ({result.returncode}): {result.stderr[-2000:]}"
        return result

    return run
