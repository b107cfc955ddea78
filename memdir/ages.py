"""How old a memory is, in whole local calendar days (what "today" / "yesterday" mean to a person)."""

from __future__ import annotations

import time

from memdir.dates import date, datetime


def days_old(mtime: float, now: float | None = None) -> int:
    now = time.time() if now is None else now
    then: date = datetime.fromtimestamp(mtime).date()
    return max(0, (_today(now) - then).days)


_last_today: list = [None, None]  # (now, its date): `list` asks 20,000 times about one "now"


def _today(now: float) -> date:
    if _last_today[0] != now:
        _last_today[:] = [now, datetime.fromtimestamp(now).date()]
    return _last_today[1]


def age_label(mtime: float, now: float | None = None) -> str:
    days = days_old(mtime, now)
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"
