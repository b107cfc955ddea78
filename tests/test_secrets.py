"""The secret guard: the shapes people type are found and redacted; prose, code and placeholders are not.

Each positive case names the kind it must be reported as and the secret itself, which redact() must
remove (from the text, and from the text as a JSON string, as runs.jsonl and the prompt queue hold it).
"""

from __future__ import annotations

import json

import pytest

from memdir.secrets import REDACTED, find_secrets, looks_secret, redact

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AZURE_KEY = "Ab1+" * 21 + "Ab=="

# (kind, text, the secret in it)
CASES = [
    # the shapes issue 22 found missing
    ("a credential assignment", "SECRET_KEY=9f8e7d6c5b4a3f2e1d0c9b8a7f6e", "9f8e7d6c5b4a3f2e1d0c9b8a7f6e"),
    ("a credential assignment", "SECRET_KEY = 'django-insecure-k3y!abc123def'", "django-insecure-k3y!abc123def"),
    ("a credential assignment", "DB_PASS=s3cr3tpass", "s3cr3tpass"),
    ("a credential assignment", "my password: hunter2", "hunter2"),
    ("a password in a sentence", "the password is hunter2", "hunter2"),
    ("a password in a sentence", "The password for the staging db is Tr0ub4dor&3.", "Tr0ub4dor&3"),
    ("a password in a sentence", "my API key is 7f3e9c2b1a0d4e5f6a7b", "7f3e9c2b1a0d4e5f6a7b"),
    ("a password inside a URL", "postgres://admin:pa/ss0rd@db.internal:5432/app", "pa/ss0rd"),
    ("an Azure storage key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_KEY};"
                             "EndpointSuffix=core.windows.net", AZURE_KEY),
    ("a Basic auth credential", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("a Bearer token", "curl -H 'Authorization: Bearer abcDEF1234567890ghiJKL' https://api", "abcDEF1234567890ghiJKL"),
    ("a Hugging Face token", "HF_TOKEN is hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
     "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    ("a SendGrid API key", "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",
     "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"),
    ("an AWS secret access key", f"our AWS secret is {AWS_SECRET}", AWS_SECRET),
    ("an AWS secret access key", f"AKIAIOSFODNN7EXAMPLE {AWS_SECRET}", AWS_SECRET),
    ("a credential assignment", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    # detect-secrets' common plugins
    ("an AWS access key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("a password inside a URL", "https://deploy:hunter2pass@git.example.com/repo.git", "hunter2pass"),
    ("a Discord token", "MTA4NjE2NzI5NDY5ODk4NzQ1Ng.GhT2Xk.abcdEFGHijklMNOPqrstUVWXyz0123456",
     "MTA4NjE2NzI5NDY5ODk4NzQ1Ng.GhT2Xk.abcdEFGHijklMNOPqrstUVWXyz0123456"),
    ("a Discord webhook URL", "https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi_JKL", "abcDEF-ghi_JKL"),
    ("a GitHub token", "ghp_" + "A1b2" * 9, "ghp_" + "A1b2" * 9),
    ("a GitHub token", "gho_" + "A1b2" * 9, "gho_" + "A1b2" * 9),
    ("a GitHub token", "github_pat_11ABCDEFG0" + "a1B2c3" * 12, "github_pat_11ABCDEFG0" + "a1B2c3" * 12),
    ("a GitLab token", "glpat-xY1zxY1zxY1zxY1zxY1z", "glpat-xY1zxY1zxY1zxY1zxY1z"),
    ("a JSON web token", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"),
    ("a Mailchimp API key", "mailchimp: 0123456789abcdef0123456789abcdef-us12", "0123456789abcdef0123456789abcdef-us12"),
    ("an npm token", "npm_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3", "npm_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3"),
    ("a credential assignment", "//registry.npmjs.org/:_authToken=0123abcd-45ef-6789-abcd-ef0123456789",
     "0123abcd-45ef-6789-abcd-ef0123456789"),
    ("an OpenAI-style API key", "sk-proj-" + "Ab1Cd2Ef3Gh4" * 4, "sk-proj-" + "Ab1Cd2Ef3Gh4" * 4),
    ("an OpenAI-style API key", "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",
     "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"),
    ("an Anthropic API key", "key sk-ant-api03-" + "x" * 40, "sk-ant-api03-" + "x" * 40),
    ("an OpenRouter API key", "sk-or-v1-" + "0123456789abcdef" * 4, "sk-or-v1-" + "0123456789abcdef" * 4),
    ("a PyPI token", "pypi-AgEIcHlwaS5vcmc" + "Ab1-" * 16, "pypi-AgEIcHlwaS5vcmc" + "Ab1-" * 16),
    ("a private key block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n"
                            "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA1234567890abcdef"),
    ("a private key block", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJDRA==",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("a private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----"),
    ("a Slack token", "xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJ",
     "xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJ"),
    ("a Slack webhook URL", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
     "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("a Stripe secret key", "sk_live_" + "c1D2" * 6, "sk_live_" + "c1D2" * 6),
    ("a Stripe secret key", "rk_live_" + "c1D2" * 6, "rk_live_" + "c1D2" * 6),
    ("a Square token", "sq0csp-aB3dE5gH7jK9mN1pQ3sT5vW7xY9zA1bC3dE5gH7jK9m",
     "sq0csp-aB3dE5gH7jK9mN1pQ3sT5vW7xY9zA1bC3dE5gH7jK9m"),
    ("a Telegram bot token", "bot 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ",
     "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"),
    ("a Twilio key", "TWILIO_SID AC0123456789abcdef0123456789abcdef", "AC0123456789abcdef0123456789abcdef"),
    ("a Google API key", "AIza" + "B" * 35, "AIza" + "B" * 35),
    # high-entropy values given to key/secret/token/password names, in the forms config and code use
    ("a credential assignment", 'encryption_key = "8f3Kq9ZxL2mP7wR4tY6vB1nC5"', "8f3Kq9ZxL2mP7wR4tY6vB1nC5"),
    ("a credential assignment", 'key: "a8f3Kq9ZxL2mP7wR4tY6vB1nC5"', "a8f3Kq9ZxL2mP7wR4tY6vB1nC5"),
    ("a credential assignment", '{"password": "hunter22"}', "hunter22"),
    ("a credential assignment", "password: s3cret-v4lue", "s3cret-v4lue"),
    ("a credential assignment", "**Password:** Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("a credential assignment", "X-Api-Key: 7f3e9c2b1a0d4e5f6a7b8c9d", "7f3e9c2b1a0d4e5f6a7b8c9d"),
    ("a credential assignment", "PGPASSWORD=Kj3nD92mX", "Kj3nD92mX"),
    ("a credential assignment", "Server=db;User Id=sa;Password=Hunter2!;", "Hunter2!"),
    ("a credential assignment", "DB_PASSWORD=s3cr3t-Value-123", "s3cr3t-Value-123"),
    ("a .netrc password", "machine api.heroku.com login me@x.com password 01234567-89ab-cdef", "01234567-89ab-cdef"),
]

ALLOWED = [
    # prose about secrets
    "the password reset flow", "use Bearer auth for the API", "SECRET_KEY comes from the env",
    "The password lives in 1Password, vault Ops.", "The password is stored in 1Password.", "the token is expired",
    "the secret is out.", "the secret is sha256-hashed", "password is required", "the key is in the vault",
    "The password must be at least 12 characters", "the token is valid for 3600 seconds", "First pass: tokenize it",
    "Secret: caching makes it fast", "Key takeaway: keep commits small", "Basic authentication is deprecated",
    "Bearer tokens expire after an hour", "sk-ant-... is the prefix of Anthropic keys", "the api key is rotated monthly",
    "Set ANTHROPIC_API_KEY in your shell, never in the repo", "Ticket PROJ-1234 tracks the flaky test",
    # placeholders
    "password: <your-password>", "token=${GITHUB_TOKEN}", "api_key: ********", "AccountKey=<your-account-key>",
    "Authorization: Bearer $TOKEN", "Authorization: Bearer <token>", "password: changeme", "password = 'password'",
    # code: where a secret comes from, types, other names
    "SECRET_KEY = os.environ['SECRET_KEY']", "SECRET_KEY = env('SECRET_KEY')", "password = request.form['password']",
    "token = get_token()", "self.token = token", "api_key=api_key", "password: str", "token: string;",
    "password: Optional[str] = None", "apiKey: process.env.API_KEY", "secret: ${{ secrets.DEPLOY_KEY }}",
    "password = hashlib.sha256(raw).hexdigest()", "eos_token = '</s>'", "next_token = response['NextToken']",
    "max_tokens: 4096", "input_tokens: 123456", "token_count: 12345678", "PASSWORD_RESET_URL=https://example.com/reset",
    "primary_key: user_id", "idempotency_key: 123e4567-e89b-12d3-a456-426614174000", "monkey: 7f3e9c2b1a0d4e5f6a7b",
    "pwd: /home/user/project", "PWD=/home/user", "sk-learn-is-a-common-misspelling-of-scikit-learn-yes",
    # found in real transcripts and 52 MB of installed packages by an earlier draft of this guard
    "token = Punctuation", "Token:              '#ffffff',", "self.credentials = credentials",
    "credentials = creds_file", '"auth0": "types-auth0-python"', 'publicKeyToken="1fc8b3b9a1e18e3b"',
    'const idToken = session?.idToken ?? ""', '"fileKey": "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1"',
    '{"type": "thinking", "thinking": "", "signature": "EqQBCkYIBRgCKkDx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9"}',
    "No GitHub Actions cache found for key: setup-uv-1-x86_64-unknown-linux-gnu-3.11.5-default",
    'client = OpenAI(base_url="http://localhost:8000/v1", api_key="not-needed")', '"apiKey": "sk-..."',
    # hashes in lockfiles and sums
    'hash = "sha256:3a1f0c9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f"',
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="',
    "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=",
    "sha1 = da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "aws s3 cp s3://my-bucket/0123456789abcdef0123456789abcdef0123 .",
    # URLs without a password
    "Dashboards: https://grafana.example.com/d/abc123", "postgres://localhost:5432/app",
    "https://example.com:8080/users/@alice", "git@github.com:org/repo.git", "ssh://git@github.com:22/org/repo",
]


@pytest.mark.parametrize("kind, text, secret", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_each_shape_is_found_and_redacted(kind, text, secret):
    assert kind in [f.kind for f in find_secrets(text)]
    assert secret not in redact(text) and REDACTED in redact(text)


@pytest.mark.parametrize("kind, text, secret", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_redacted_json_stays_json_and_loses_the_secret(kind, text, secret):
    for dumped in (json.dumps({"m": text}), json.dumps({"m": json.dumps({"m": text})})):
        redacted = redact(dumped)
        json.loads(redacted)  # a run record or queued prompt stays readable
        assert secret not in json.loads(redacted)["m"]


@pytest.mark.parametrize("text", ALLOWED)
def test_prose_code_placeholders_and_hashes_are_allowed(text):
    assert find_secrets(text) == []
    assert redact(text) == text


def test_a_secret_among_ordinary_text_is_cut_out_alone():
    text = "Deploys go through Argo.\nexport DB_PASS=s3cr3tpass\nThe password reset flow is separate."
    assert redact(text) == "Deploys go through Argo.\nexport DB_PASS=[redacted]\nThe password reset flow is separate."


def test_case_folding_never_misaligns_the_cut():
    """'İ' lowercases to two characters: the guard must not cut at shifted offsets."""
    text = "İstanbul ekibi: the password is hunter2, and Authorization: Bearer abcDEF1234567890ghiJKL"
    assert redact(text) == "İstanbul ekibi: the password is [redacted], and Authorization: Bearer [redacted]"


def test_slugs_of_secrets_are_caught_in_names():
    slug = "reference_sk_ant_api03_" + "A1b2" * 8 + ".md"
    assert looks_secret(slug) and "A1b2A1b2" not in redact(slug)
    assert not looks_secret("reference_api_key_rotation.md")


def test_line_numbers():
    (finding,) = find_secrets("line one\nline two ghp_" + "a" * 36)
    assert finding.line == 2
