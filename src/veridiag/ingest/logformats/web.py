"""Web servers: Apache error logs (2.2 and 2.4), nginx error logs, and access logs (common / combined).

Own regexes, not ``apachelogs``: it parses ~14 k lines/s here (a regex per directive plus
per-field conversion objects), a fifth of the import budget; this one regex runs > 150 k lines/s.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from veridiag.ingest.logformats._base import (
    MONTH_RE,
    MONTHS,
    Level,
    LogFormat,
    Parsed,
    level_of,
    offset,
    register,
    route_of,
)


@register
class ApacheError(LogFormat):
    """``[Sun Dec 04 04:47:44 2005] [error] [client 1.2.3.4] msg`` and 2.4's ``[… .123456 2000] [core:error] [pid 1]``.

    Component = the 2.4 module (``core``), "" in 2.2 which writes none.
    """

    id = "apache_error"
    title = "Apache error log"
    _line = re.compile(
        rf"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ({MONTH_RE}) +(\d{{1,2}}) "
        r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))? (\d{4})\] "
        r"\[(?:([\w.-]+):)?(\w+)\] (?:\[pid \d+(?::tid \d+)?\] )?(?:\[client [^\]]*\] )?(.*)"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        month, day, hh, mm, ss, frac, year, module, level, message = match.groups()
        try:
            naive = datetime(
                int(year), MONTHS[month], int(day), int(hh), int(mm), int(ss), int(frac.ljust(6, "0")) if frac else 0
            )
        except ValueError:
            return None
        return self.aware(naive), level_of(level), module or "", message, None, None


@register
class NginxError(LogFormat):
    """``2024/01/02 03:04:05 [error] 123#0: *1 msg``: level in brackets; nginx writes no component."""

    id = "nginx_error"
    title = "nginx error log"
    _line = re.compile(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d) \[(\w+)\] \d+#\d+: (?:\*\d+ )?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        year, month, day, hh, mm, ss, level, message = match.groups()
        try:
            naive = datetime(int(year), int(month), int(day), int(hh), int(mm), int(ss))
        except ValueError:
            return None
        return self.aware(naive), level_of(level), "", message, None, None


@register
class Access(LogFormat):
    """Common / combined access log: level from the status (5xx ERROR, 4xx WARN), component ``GET /route``.

    The message is the request, status and size (``"GET /x HTTP/1.1" 500 12``): referrer and user
    agent would split one route into a template per browser.
    """

    id = "access"
    title = "Apache/nginx access log (common, combined)"
    _line = re.compile(
        rf"\S+ \S+ (?:\S+|\"[^\"]*\") \[(\d\d)/({MONTH_RE})/(\d{{4}}):(\d\d):(\d\d):(\d\d)(?: ([+-]\d{{4}}))?\] "
        r"(\"((?:[^\"\\]|\\.)*)\" (\d{3}) (\S+))"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        day, month, year, hh, mm, ss, zone, message, request, status, _size = match.groups()
        try:
            if zone:
                ts = datetime(int(year), MONTHS[month], int(day), int(hh), int(mm), int(ss), 0, UTC) - offset(zone)
            else:
                ts = self.aware(datetime(int(year), MONTHS[month], int(day), int(hh), int(mm), int(ss)))
        except ValueError:
            return None
        code = status[0]
        level: Level = "ERROR" if code == "5" else "WARN" if code == "4" else "INFO"
        parts = request.split(" ")
        component = f"{parts[0]} {route_of(parts[1])}" if len(parts) >= 2 and parts[0].isalpha() else "access"
        return ts, level, component, message, None, None
