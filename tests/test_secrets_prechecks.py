"""The prompt hook's redaction skips the Discord and Telegram patterns when a text cannot hold them
(memdir.secrets_rules._dots_six_apart, _colon_and_35): each skip must be one the pattern itself would make."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from memdir import secrets, secrets_rules

TEXT = st.text(alphabet=st.sampled_from(list("ab9_-.:: Z") + ["é"]), max_size=120)


@given(TEXT)
@settings(max_examples=600, deadline=None)
def test_a_skipped_text_never_holds_the_pattern(text):
    if not secrets_rules._dots_six_apart(text):
        assert re.search(secrets_rules._DISCORD_TAIL, text) is None
    if not secrets_rules._colon_and_35(text):
        assert re.search(secrets_rules._TELEGRAM_TAIL, text) is None


def test_real_shapes_still_found():
    discord = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
    telegram = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"
    assert secrets.redact(f"token {discord} here") == f"token {secrets.REDACTED} here"
    assert secrets.redact(f"bot {telegram}") == f"bot {secrets.REDACTED}"
