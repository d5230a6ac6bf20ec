"""Time strings general parsers misread: Go's ``time.Time.String()``; and the unit of an epoch
number, from its magnitude.

A Go program that prints a ``time.Time`` with ``%v``, ``fmt.Sprint`` or ``String()`` writes the
layout ``2006-01-02 15:04:05.999999999 -0700 MST`` (Go's ``time`` package documents it): the
fraction with its trailing zeros dropped (and no dot when it is zero), a numeric offset, the
zone's abbreviation (``UTC``, ``CST``, or the offset again, ``+08``, for a zone without one) and,
for a time read from the clock, the monotonic reading `` m=+0.305041286`` — seconds since the
process started, not a time. dateparser reads that suffix as *now* (issue 26: 741 rows of a
nezha metric file placed within 3 s of the import) and python-dateutil refuses the string, so
it is read here: the layout is fixed, one regular expression reads it exactly in about a
microsecond, nanoseconds truncated to Python's microseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

#: The monotonic-clock reading Go appends to a time taken from the clock.
MONOTONIC = r" m=[+-]\d+(?:\.\d+)?"
#: A zone abbreviation as Go writes it: letters (``UTC``, ``CEST``, ``ChST``) or, for a zone
#: without one, its offset (``+08``, ``-0330``).
GO_ZONE = r"[A-Za-z]{1,6}|[+-]\d\d(?:\d\d)?"
GO_TIME = (
    r"(?P<gy>\d{4})-(?P<gmo>\d\d)-(?P<gd>\d\d) (?P<gh>\d\d):(?P<gmi>\d\d):(?P<gs>\d\d)(?:\.(?P<gf>\d{1,9}))?"
    rf" (?P<go>[+-]\d{{4}}) (?:{GO_ZONE})(?:{MONOTONIC})?"
)
_GO_TIME = re.compile(GO_TIME)
#: (name, smallest, largest, units per second): magnitudes of epoch times 1973-5138.
EPOCHS = (
    ("epoch-s", 1e8, 1e11, 1.0),
    ("epoch-ms", 1e11, 1e14, 1e3),
    ("epoch-us", 1e14, 1e17, 1e6),
    ("epoch-ns", 1e17, 1e20, 1e9),
)


def epoch_per_second(number: float) -> float | None:
    """Units per second of an epoch time of ``number``'s magnitude (1e9 for nanoseconds); None
    when no epoch unit puts it between 1973 and 5138."""
    return next((per_second for _name, low, high, per_second in EPOCHS if low <= abs(number) < high), None)


def go_time(text: str) -> datetime | None:
    """``text`` (all of it, surrounding blanks aside) read as Go's ``time.Time.String()``, as aware UTC; else None."""
    match = _GO_TIME.fullmatch(text.strip())
    return None if match is None else go_moment(match)


def go_moment(match: re.Match[str]) -> datetime | None:
    """The instant a match of ``GO_TIME`` (its named groups, in any larger pattern) states; None
    when no calendar holds it (month 13, an offset of a day or more)."""
    fraction = match["gf"] or ""
    offset = match["go"]
    sign = -1 if offset[0] == "-" else 1
    try:
        zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
        moment = datetime(
            int(match["gy"]),
            int(match["gmo"]),
            int(match["gd"]),
            int(match["gh"]),
            int(match["gmi"]),
            int(match["gs"]),
            int(fraction[:6].ljust(6, "0")),
            tzinfo=zone,
        )
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
