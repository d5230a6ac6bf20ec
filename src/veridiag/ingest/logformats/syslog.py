"""Syslog: RFC 3164 (BSD, no year), RFC 5424, and Thunderbird (loghub: alert label, epoch, date, syslog).

Own regexes, not a library: ``syslog-rfc5424-parser`` (last release 2019) parses ~4 k lines/s
here (a lark grammar), and no maintained RFC 3164 parser exists on PyPI; one compiled regex per
shape parses > 150 k lines/s.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from veridiag.ingest.logformats._base import (
    MONTH_RE,
    MONTHS,
    SYSLOG_SEVERITY,
    Level,
    LogFormat,
    Parsed,
    level_of,
    register,
)

# ``prog[pid]: msg`` / ``prog: msg``; a program may hold ``(sub)`` or a path. Absent → no component.
_PROGRAM = re.compile(r"([^\s:\[\]]+)(?:\[(\d+)\])?: ?")


def _program(rest: str) -> tuple[str, str]:
    match = _PROGRAM.match(rest)
    if match is None:
        return "", rest
    return match.group(1), rest[match.end() :]


# Daemons that write no PRI mark severity at the start of the message ("error: …", "fatal: …",
# sshd and postfix do): that position is the format's level, not a word anywhere in the text.
_DAEMON_LEVEL = re.compile(r"(error|err|fatal|panic|critical|crit|emerg|alert|warning|warn):", re.IGNORECASE)


def _daemon_level(message: str) -> Level | None:
    match = _DAEMON_LEVEL.match(message)
    return level_of(match.group(1), "INFO") if match else None


@register
class Rfc3164(LogFormat):
    """``<34>Dec  4 04:47:44 host prog[pid]: msg`` (``<PRI>`` optional): level from PRI, else INFO."""

    id = "syslog"
    title = "syslog (RFC 3164)"
    has_year = False
    _line = re.compile(
        rf"(?:<(\d{{1,3}})>)?({MONTH_RE}) {{1,2}}(\d{{1,2}}) (\d\d):(\d\d):(\d\d)(?:\.(\d{{1,6}}))? (\S+) (.*)"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        pri, month, day, hh, mm, ss, frac, _host, rest = match.groups()
        try:
            naive = self.clock.naive(
                MONTHS[month], int(day), int(hh), int(mm), int(ss), micro=int(frac.ljust(6, "0")) if frac else 0
            )
        except ValueError:
            return None
        component, message = _program(rest)
        level = SYSLOG_SEVERITY[int(pri) & 7] if pri else _daemon_level(message)
        return self.aware(naive), level, component, message, None, None


@register
class Rfc5424(LogFormat):
    """``<165>1 2003-10-11T22:14:15.003Z host app procid msgid [sd] msg``: level from PRI, component = app."""

    id = "syslog5424"
    title = "syslog (RFC 5424)"
    _line = re.compile(
        r"<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) "
        r"(-|(?:\[(?:[^\]\"\\]|\\.|\"(?:[^\"\\]|\\.)*\")*\])+)(?: (.*))?"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        pri, stamp, _host, app, _procid, _msgid, _sd, message = match.groups()
        try:
            ts = None if stamp == "-" else self.iso(stamp)
        except ValueError:
            return None
        message = (message or "").removeprefix("\ufeff")
        component = "" if app == "-" else app
        return ts, SYSLOG_SEVERITY[int(pri) & 7], component, message, None, None


@register
class SyslogIso(LogFormat):
    """rsyslog's file format and ``journalctl -o short-iso``: ``2024-01-02T03:04:05.123+01:00 host prog[pid]: msg``.

    No severity is written: INFO, raised by the shared severity rule (auth failure, OOM kill).
    """

    id = "syslog_iso"
    title = "syslog with ISO time (rsyslog, journald)"
    _line = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?) (\S+) (.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, _host, rest = match.groups()
        component, message = _program(rest)
        if not component:  # a host and a program are what tell this shape from "ISO LEVEL component"
            return None
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        return ts, _daemon_level(message), component, message, None, None


@register
class Thunderbird(LogFormat):
    """loghub Thunderbird: ``- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 prog[pid]: msg``.

    The time is the epoch column (the syslog time beside it is the machine's local time); an alert
    label other than ``-`` is the operators' own mark that the line was an alert, so it is ERROR;
    ``-`` marks no level at all.
    """

    id = "thunderbird"
    title = "Thunderbird supercomputer syslog (loghub)"
    _line = re.compile(
        rf"(\S+) (\d{{9,11}}) \d{{4}}\.\d\d\.\d\d \S+ (?:{MONTH_RE}) +\d{{1,2}} \d\d:\d\d:\d\d (\S+) (.*)"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        label, stamp, _location, rest = match.groups()
        component, message = _program(rest)
        level: Level | None = None if label == "-" else "ERROR"
        return datetime.fromtimestamp(int(stamp), UTC), level, component, message, None, None
