"""Relative dates to absolute ones, anchored on the day a message was written.

Small on purpose (dateparser cannot find dates inside sentences reliably and costs ~0.5 s to
import): weekdays, today/tomorrow/yesterday, next week/month, in N days/weeks, month-day forms and
ISO dates. "Thursday", "this Thursday" and "next Thursday" all mean the first Thursday after the
anchor day, as most people mean it when they say it.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from memdir.dates import MONTH_ALTERNATION as _MONTH, MONTHS, WEEKDAYS

_WEEKDAY = "|".join(WEEKDAYS)
DATE_PATTERN = re.compile(
    rf"""\b(?:
        (?P<iso>\d{{4}}-\d{{2}}-\d{{2}})
      | (?:(?P<qual>this|next|on|by|until|before)\s+)?(?P<weekday>{_WEEKDAY})\b
      | (?P<rel>today|tonight|tomorrow|yesterday|next\s+week|next\s+month|end\s+of\s+(?:the\s+)?(?:week|month))
      | in\s+(?P<n>\d+|a|one|two|three|four|five|six)\s+(?P<unit>days?|weeks?)
      | (?P<month1>{_MONTH})\.?\s+(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<year1>\d{{4}}))?
      | (?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month2>{_MONTH})\b\.?(?:,?\s+(?P<year2>\d{{4}}))?
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_WORD_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _month_day(anchor: date, month: int, day: int, year: str | None) -> date | None:
    try:
        if year:
            return date(int(year), month, day)
        candidate = date(anchor.year, month, day)
    except ValueError:
        return None
    # "March 5" said in December means next year's.
    return candidate if candidate >= anchor - timedelta(days=60) else candidate.replace(year=anchor.year + 1)


def resolve(match: re.Match, anchor: date) -> date | None:
    g = match.groupdict()
    if g["iso"]:
        try:
            return date.fromisoformat(g["iso"])
        except ValueError:
            return None
    if g["weekday"]:
        target = WEEKDAYS[g["weekday"].lower()]
        ahead = (target - anchor.weekday()) % 7 or 7
        return anchor + timedelta(days=ahead)
    if g["rel"]:
        rel = " ".join(g["rel"].lower().split())
        if rel in ("today", "tonight"):
            return anchor
        if rel == "tomorrow":
            return anchor + timedelta(days=1)
        if rel == "yesterday":
            return anchor - timedelta(days=1)
        if rel == "next week":
            return anchor + timedelta(days=7 - anchor.weekday())  # the coming Monday
        if rel == "next month":
            return (anchor.replace(day=28) + timedelta(days=4)).replace(day=1)
        if rel.endswith("week"):
            return anchor + timedelta(days=(4 - anchor.weekday()) % 7)  # Friday
        last = calendar.monthrange(anchor.year, anchor.month)[1]
        return anchor.replace(day=last)
    if g["n"]:
        n = _WORD_NUMBERS.get(g["n"].lower()) or int(g["n"])
        return anchor + timedelta(days=n * (7 if g["unit"].lower().startswith("week") else 1))
    if g["month1"]:
        return _month_day(anchor, MONTHS[g["month1"].lower()], int(g["day1"]), g["year1"])
    if g["month2"]:
        return _month_day(anchor, MONTHS[g["month2"].lower()], int(g["day2"]), g["year2"])
    return None


def absolutize(text: str, anchor: date) -> tuple[str, list[date]]:
    """`text` with each relative date followed by its absolute form, and the dates found."""
    found: list[date] = []

    def replace(match: re.Match) -> str:
        when = resolve(match, anchor)
        if when is None:
            return match.group(0)
        found.append(when)
        if match.group("iso"):
            return match.group(0)
        return f"{match.group(0)} ({when.isoformat()})"

    return DATE_PATTERN.sub(replace, text), found
