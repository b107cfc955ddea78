"""Calendar words and the dates a text mentions, shared by both stages.

The extractor turns relative dates into absolute ones (extractor/dates.py); recall asks which days a
prompt is about ("what did we decide on 5 March 2026?", "in August 2025", "yesterday") so memories
written on those days can rank higher. Hand-written: dateparser costs ~0.5 s to import, more than a
prompt hook may spend, and cannot find dates inside sentences reliably.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import date, datetime, timedelta
else:
    try:  # the C classes datetime re-exports, without running its pure-Python twin first (~1 ms of every prompt hook)
        from _datetime import date, datetime, timedelta
    except ImportError:  # pragma: no cover - a Python without the C module
        from datetime import date, datetime, timedelta
__all__ = ["date", "datetime", "timedelta", "days_mentioned"]  # the first three for memdir.ages and recall.offline

# English names written out rather than taken from `calendar` (whose import, with the pattern below,
# was a third of the offline recall path's import time, and whose names follow the process locale).
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")
WEEKDAYS = {name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                              "sunday"))}
MONTHS = {name: i for i, name in enumerate(MONTH_NAMES, 1)}
MONTHS.update({name[:3]: i for i, name in enumerate(MONTH_NAMES, 1)})
MONTHS["sept"] = 9
MONTH_ALTERNATION = "|".join(sorted(MONTHS, key=len, reverse=True))
_mention: re.Pattern | None = None  # compiled on the first prompt that could name a date


def _mention_pattern() -> re.Pattern:
    global _mention
    if _mention is None:
        _mention = re.compile(
            rf"""\b(?:
                (?P<iso>\d{{4}}-\d{{2}}-\d{{2}})
              | (?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month1>{MONTH_ALTERNATION})\.?,?\s+(?P<year1>\d{{4}})
              | (?P<month2>{MONTH_ALTERNATION})\.?\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year2>\d{{4}})
              | (?P<month3>{MONTH_ALTERNATION})\.?,?\s+(?P<year3>\d{{4}})
              | (?P<rel>yesterday|last\s+week)
            )\b""",
            re.IGNORECASE | re.VERBOSE,
        )
    return _mention


def _days_in_month(year: int, month: int) -> int:
    return ((date(year + month // 12, month % 12 + 1, 1)) - date(year, month, 1)).days


def _day(year: str, month: int, day: str) -> date | None:
    try:
        return date(int(year), month, int(day))
    except ValueError:
        return None


def days_mentioned(text: str, today: date) -> list[tuple[date, date]]:
    """The spans of days `text` names, first to last day inclusive: a date is one day, a month
    with its year the whole month; "yesterday" and "last week" count back from `today`. Dates
    without a year are skipped: in a question they are as likely last year's as this year's.
    "Today" is skipped too: "that's all for today" is about now, not about what was written today."""
    spans: list[tuple[date, date]] = []
    lowered = text.lower()
    if "yesterday" not in lowered and "last" not in lowered and not re.search(r"\d{4}", text):
        return spans  # most prompts (every form but those two words holds a year): no big pattern to compile or run
    for match in _mention_pattern().finditer(text):
        g = match.groupdict()
        if g["iso"]:
            try:
                day = date.fromisoformat(g["iso"])
            except ValueError:
                continue
            spans.append((day, day))
        elif g["month1"] or g["month2"]:
            month = MONTHS[(g["month1"] or g["month2"]).lower()]
            named_day = _day(g["year1"] or g["year2"], month, g["day1"] or g["day2"])
            if named_day is not None:
                spans.append((named_day, named_day))
        elif g["month3"]:
            year, month = int(g["year3"]), MONTHS[g["month3"].lower()]
            try:  # "May 0000", "December 9999": past what date holds, like an impossible day above
                spans.append((date(year, month, 1), date(year, month, _days_in_month(year, month))))
            except ValueError:
                continue
        else:
            rel = " ".join(g["rel"].lower().split())
            if rel == "yesterday":
                spans.append((today - timedelta(days=1), today - timedelta(days=1)))
            else:
                spans.append((today - timedelta(days=7 + today.weekday()), today - timedelta(days=1 + today.weekday())))
    return spans
