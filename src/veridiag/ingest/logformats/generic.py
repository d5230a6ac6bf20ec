"""The ``unknown`` format: lines no format understands still get a time from a leading timestamp.

Used for a whole file no format covers, and for the odd line of a known format that does not fit
it but starts with a time (imported whole, ``parsed=False``). Only the start of a line is looked
at: a date inside a message says nothing about when the line was written.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

from veridiag.ingest.logformats._base import (
    LEVEL_WORD_RE,
    MONTH_RE,
    MONTHS,
    PLACEHOLDER_YEAR,
    Level,
    LogFormat,
    Parsed,
    epoch,
    level_of,
    offset,
    register,
)
from veridiag.ingest.times import GO_ZONE, MONOTONIC

_LEADING = re.compile(
    r"(?:<\d{1,3}>1? ?)?(?:[\w@.]{1,20}=)?[\[(\"]?(?:"  # <PRI>, time=, a bracket or a quote before it
    # ISO 8601 and its relatives: 2024-01-02T03:04:05.123Z, 2024/01/02 03:04:05, 2024.01.02 03:04:05, 20240102-03:04:05
    r"(?P<y>\d{4})(?P<s1>[-/.]?)(?P<mo>\d\d)(?P=s1)(?P<d>\d\d)[T _-](?P<h>\d\d):?(?P<mi>\d\d):?(?P<sec>\d\d)"
    r"(?:[.,:](?P<frac>\d{1,9}))?(?P<z>Z|[+-]\d\d:?\d\d)?"
    # Go's time.Time.String() after it: " -0700 MST m=+0.3" (a level word is no zone abbreviation)
    rf"(?: (?P<goz>[+-]\d{{4}}) (?!(?i:{LEVEL_WORD_RE})\b)(?:{GO_ZONE})(?:{MONOTONIC})?(?!\S))?"
    # access log: 10/Oct/2000:13:55:36 -0700
    rf"|(?P<ad>\d\d)/(?P<amo>{MONTH_RE})/(?P<ay>\d{{4}}):(?P<ah>\d\d):(?P<ami>\d\d):(?P<asec>\d\d)"
    r"(?: (?P<az>[+-]\d{4}))?"
    # ctime: Sun Dec 04 04:47:44 2005
    rf"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<cmo>{MONTH_RE}) +(?P<cd>\d{{1,2}}) "
    r"(?P<ch>\d\d):(?P<cmi>\d\d):(?P<csec>\d\d)(?:\.\d+)? (?P<cy>\d{4})"
    # syslog, no year: Dec  4 04:47:44
    rf"|(?P<smo>{MONTH_RE}) +(?P<sd>\d{{1,2}}) (?P<sh>\d\d):(?P<smi>\d\d):(?P<ssec>\d\d)"
    # epoch seconds or milliseconds
    r"|(?P<epoch>1\d{9}(?:\d{3})?)(?:\.\d+)?(?![\d.])"
    r")"
)
_LEVEL_AFTER = re.compile(rf"[\])\s,|-]*\[?({LEVEL_WORD_RE})(?:\]|:|\s|$)", re.IGNORECASE)


@register
class Unknown(LogFormat):
    """No format: every line imported whole (``parsed=False``), placed in time by a leading timestamp."""

    id = "unknown"
    title = "unknown (whole lines)"
    has_year = False

    def parse(self, line: str) -> Parsed | None:
        return None

    def leading(self, line: str) -> tuple[datetime, Level | None] | None:
        """The timestamp a line starts with (also after one leading token), and a level word right after it."""
        match = _LEADING.match(line)
        if match is None:
            space = line.find(" ", 0, 64)
            if space < 0:
                return None
            match = _LEADING.match(line, space + 1)
            if match is None:
                return None
        try:
            ts = self._moment(match)
        except (ValueError, OverflowError):
            return None
        level = _LEVEL_AFTER.match(line, match.end())
        return ts, level_of(level.group(1)) if level else None

    def _moment(self, m: re.Match[str]) -> datetime:
        if m["y"]:
            micro = int((m["frac"] or "")[:6].ljust(6, "0"))
            naive = datetime(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["sec"]), micro)
            zone = m["z"] or m["goz"]
            if not zone:
                return self.aware(naive)
            return (naive if zone == "Z" else naive - offset(zone)).replace(tzinfo=UTC)
        if m["ay"]:
            naive = datetime(int(m["ay"]), MONTHS[m["amo"]], int(m["ad"]), int(m["ah"]), int(m["ami"]), int(m["asec"]))
            return (naive - offset(m["az"])).replace(tzinfo=UTC) if m["az"] else self.aware(naive)
        if m["cy"]:
            naive = datetime(int(m["cy"]), MONTHS[m["cmo"]], int(m["cd"]), int(m["ch"]), int(m["cmi"]), int(m["csec"]))
            return self.aware(naive)
        if m["smo"]:
            month, day = MONTHS[m["smo"]], int(m["sd"])
            return self.aware(self.clock.naive(month, day, int(m["sh"]), int(m["smi"]), int(m["ssec"])))
        return epoch(float(m["epoch"]))


class Strptime(LogFormat):
    """A leading timestamp in a layout the user names (``--time-format '%d/%m/%Y %H:%M:%S'``),
    then an optional level word and the message: for shapes no registered format knows, such
    as a day-first date that cannot be told from a month-first one by looking."""

    id = "strptime"
    title = "leading timestamp in a given strptime layout"

    def __init__(self, layout: str, *, tz: tzinfo = UTC, year: int = PLACEHOLDER_YEAR) -> None:
        super().__init__(tz=tz, year=year)
        self.layout = layout
        # strptime needs the exact text: the widest rendering of the layout bounds where it ends.
        self._width = len(datetime(2026, 12, 31, 23, 59, 59, 999999).strftime(layout))
        self.writes_year = any(code in layout for code in ("%Y", "%y", "%G", "%s"))

    def parse(self, line: str) -> Parsed | None:
        for width in range(min(self._width, len(line)), max(0, self._width - 4), -1):
            try:
                naive = datetime.strptime(line[:width], self.layout)
            except ValueError:
                continue
            if not self.writes_year:
                naive = naive.replace(year=self.clock.year)
            ts = naive.astimezone(UTC) if naive.tzinfo else self.aware(naive)
            level = _LEVEL_AFTER.match(line, width)
            rest = line[level.end() :] if level else line[width:]
            return ts, level_of(level.group(1)) if level else None, "", rest.strip(), None, None
        return None
