"""The recall server imports up front what its answers use, so no prompt waits for an import: a first answer with an
empty skeleton cache imported jinja2 (36-100 ms, speed25) while the hook that asked was waiting."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = r"""
import json, os, sys
from memdir.model import Memory
from memdir.store import MemoryStore
from memdir.stages.recall import server, server_answer, server_socket

store = MemoryStore(sys.argv[1])
store.save(Memory(name="Dashboard", description="Payments latency is on grafana.example.com/d/pay", type="reference",
                  body="The payments latency dashboard."))
server._preload()
before = set(sys.modules)
reply = server_answer.handle({"memory_dir": sys.argv[1], "query": "where is the payments latency dashboard",
                              "tools": [], "session_id": "s", "engine": "offline", "env": server_socket.request_env(dict(os.environ))})
print(json.dumps({"selected": reply.get("selected"), "imported": sorted(set(sys.modules) - before)}))
"""


def test_a_first_answer_imports_nothing_the_preload_could_have(tmp_path):
    """memdir's own modules and jinja2: what else a first answer imports is the standard library's codecs."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "MEMDIR_DENSE": "0", "MEMDIR_GIT": "0",
           "MEMDIR_ENGINE": "offline",
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    folder = tmp_path / ".claude" / "projects" / "p" / "memory"  # the default place: the server serves it
    done = subprocess.run([sys.executable, "-c", _CHILD, str(folder)], capture_output=True, text=True,
                          timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["selected"] == ["reference_dashboard.md"]
    assert [name for name in seen["imported"] if name.split(".")[0] in ("memdir", "jinja2", "markupsafe")] == [], seen["imported"]
