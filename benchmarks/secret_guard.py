"""What the secret guard costs where it runs on every prompt: redact() and find_secrets() on 4 KB.

    .venv/bin/python -m benchmarks.secret_guard [--repeat 2000]

The prompt hook redacts each prompt before queueing it for decision capture, so a typical prompt
(about 4 KB of prose and code, usually no secret) is what matters; a text with a few secrets in it
shows the cost when something is found. Also: importing memdir.secrets, which the prompt hook pays on
every prompt (re is loaded by then anyway).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from benchmarks.common import median_seconds, precompile

PROSE = (
    "Let's move the payments ledger to the new Postgres cluster before the release freeze. The password reset flow "
    "still calls the old service, so keep both running until the mobile app ships. Use Bearer auth for the API and "
    "read SECRET_KEY from the environment; never commit it. The grafana dashboard for the kafka consumer offsets "
    "is at https://grafana.example.com/d/abc123 and the runbook lives in the wiki.\n"
    "```python\ndef connect(settings):\n    token = settings.api_token\n    password = os.environ['DB_PASSWORD']\n"
    "    return Client(url=settings.url, token=token, timeout=30)\n```\n"
    'poetry.lock: hash = "sha256:3a1f0c9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f"\n'
)
SECRETS = (
    "the staging password is Tr0ub4dor&3, and SECRET_KEY=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e; "
    "Authorization: Bearer abcDEF1234567890ghiJKL, token ghp_HOSTILE0123456789abcdefghijklmnopqrstuvwx\n"
)


def text_of(size: int, extra: str = "") -> str:
    body = extra
    while len(body) < size:
        body += PROSE
    return body[:size]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args(argv)
    precompile()
    from memdir.secrets import find_secrets, redact

    clean, dirty = text_of(4096), text_of(4096, SECRETS)
    for label, text in (("clean", clean), ("with secrets", dirty)):
        r = median_seconds(lambda text=text: redact(text), args.repeat)
        f = median_seconds(lambda text=text: find_secrets(text), args.repeat)
        print(f"4 KB {label}: redact {r * 1e3:.3f} ms, find_secrets {f * 1e3:.3f} ms")
    def fresh_import() -> None:
        for name in ("memdir.secrets", "memdir.secrets_rules"):  # the guard and its rules, as the hook loads them
            sys.modules.pop(name, None)
        importlib.import_module("memdir.secrets")

    cost = median_seconds(fresh_import, 50)
    print(f"import memdir.secrets (re and memdir.errors already loaded, as in the hook): {cost * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
