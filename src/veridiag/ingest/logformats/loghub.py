"""Shapes from loghub's real systems with no common name: HPC cluster events, HealthApp, Proxifier,
Blue Gene/L.

Only BGL writes a level; the others' ``None`` is read as INFO, raised only by the shared
severity rule.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from veridiag.ingest.logformats._base import LEVEL_WORD_RE, Level, LogFormat, Parsed, level_of, register


@register
class Hpc(LogFormat):
    """``134681 node-246 unix.hw state_change.unavailable 1077804742 1 msg``: id node component state epoch flag."""

    id = "hpc"
    title = "HPC cluster events (loghub)"
    _line = re.compile(r"\d+ (\S+) (\S+) (\S+) (\d{9,10}) -?\d+ (.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        _node, component, _state, stamp, message = match.groups()
        return datetime.fromtimestamp(int(stamp), UTC), None, component, message, None, None


@register
class HealthApp(LogFormat):
    """``20171223-22:15:29:606|Step_LSC|30002312|msg``: time | component | pid | message.

    The app drops leading zeros (``22:16:0:119``) and writes milliseconds after a colon.
    """

    id = "healthapp"
    title = "HealthApp (Android, loghub)"
    _line = re.compile(r"(\d{4})(\d\d)(\d\d)-(\d{1,2}):(\d{1,2}):(\d{1,2}):(\d{1,3})\|([^|]*)\|\d+\|(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        year, month, day, hh, mm, ss, ms, component, message = match.groups()
        try:
            naive = datetime(int(year), int(month), int(day), int(hh), int(mm), int(ss), int(ms) * 1000)
        except ValueError:
            return None
        return self.aware(naive), None, component, message, None, None


@register
class Proxifier(LogFormat):
    """``[10.30 16:49:06] chrome.exe - msg``: month.day with no year; component = the program."""

    id = "proxifier"
    title = "Proxifier"
    has_year = False
    _line = re.compile(r"\[(\d\d)\.(\d\d) (\d\d):(\d\d):(\d\d)\] (.+?) - (.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        month, day, hh, mm, ss, program, message = match.groups()
        try:
            naive = self.clock.naive(int(month), int(day), int(hh), int(mm), int(ss))
        except ValueError:
            return None
        return self.aware(naive), None, program, message, None, None


@register
class Bgl(LogFormat):
    """loghub BGL (Blue Gene/L RAS log): ``- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11
    2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL INFO msg`` — alert label, epoch,
    date, node, local time, node again, type, component, level (INFO … SEVERE, ERROR, FAILURE,
    FATAL), message.

    The time is the epoch (the local time beside it is the machine's zone) with the local
    time's microseconds when both agree on the second. An alert label other than ``-``
    (``APPREAD``, ``KERNDTLB`` …) is the operators' mark that the line was an alert: ERROR at
    least, as for Thunderbird; the written level is otherwise kept.
    """

    id = "bgl"
    title = "Blue Gene/L RAS log (loghub BGL)"
    _line = re.compile(
        r"(?P<label>\S+) (?P<epoch>\d{9,11}) \d{4}\.\d\d\.\d\d \S+ "
        r"\d{4}-\d\d-\d\d-\d\d\.(?P<mm>\d\d)\.(?P<ss>\d\d)\.(?P<micro>\d{6}) \S+ \S+ (?P<component>\S+) "
        rf"(?P<level>{LEVEL_WORD_RE})(?: (?P<message>.*))?"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        moment = datetime.fromtimestamp(int(match["epoch"]), UTC)
        if (moment.minute, moment.second) == (int(match["mm"]), int(match["ss"])):
            moment = moment.replace(microsecond=int(match["micro"]))
        level: Level = level_of(match["level"])
        if match["label"] != "-":
            level = "ERROR"
        return moment, level, match["component"], match["message"] or "", None, None
