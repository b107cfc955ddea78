from __future__ import annotations

import pytest

from memdir.secrets import find_secrets

SAMPLES = {
    "a private key block": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
    "an Anthropic API key": "key sk-ant-api03-" + "x" * 40,
    "an AWS access key id": "AKIAIOSFODNN7EXAMPLE",
    "a GitHub token": "ghp_" + "A1b2" * 9,
    "a Slack token": "xoxb-123456789012-abcdefghij",
    "a Google API key": "AIza" + "B" * 35,
    "a Stripe secret key": "sk_live_" + "c" * 24,
    "a JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "a password inside a URL": "postgres://admin:hunter2pass@db.internal:5432/app",
    "a credential assignment": "DB_PASSWORD=s3cr3t-Value-123",
}


@pytest.mark.parametrize("kind, text", SAMPLES.items())
def test_each_kind_is_found(kind, text):
    assert kind in [f.kind for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        "password: <your-password>",
        "token=${GITHUB_TOKEN}",
        "api_key: ********",
        "The password lives in 1Password, vault Ops.",
        "Dashboards: https://grafana.example.com/d/abc123",
        "Ticket PROJ-1234 tracks the flaky test",
        "postgres://localhost:5432/app",
    ],
)
def test_placeholders_and_pointers_are_allowed(text):
    assert find_secrets(text) == []


def test_line_numbers():
    (finding,) = find_secrets("line one\nline two ghp_" + "a" * 36)
    assert finding.line == 2
