"""Java and service logs: log4j/logback, Zookeeper, Spring Boot, Hadoop/Spark, HDFS, OpenStack (oslo.log)
and veridiag's own ``ISO LEVEL component …`` shape.

Each is a fixed layout with the level in a fixed position, so one compiled regex a shape reads the
level from that position only (``INFO user ERROR_TOLERANT=1`` is INFO). ISO times go through
``datetime.fromisoformat`` (3.11 reads ``,123``, ``Z`` and offsets), ~0.3 µs a line.
"""

from __future__ import annotations

import re
from datetime import datetime

from veridiag.tools.logformats._base import LEVEL_WORD_RE, LogFormat, Parsed, level_of, register

_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
_LEVEL = rf"(?i:{LEVEL_WORD_RE})"


@register
class Log4j(LogFormat):
    """``2015-07-29 17:41:44,747 INFO [main] c.s.X - msg`` (``%d %p [%t] %c - %m``): component = logger."""

    id = "log4j"
    title = "log4j / logback"
    _line = re.compile(rf"({_ISO}) +({_LEVEL}) +\[([^\]]*)\] ([^\s:]+)(?: -|:)? ?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, level, _thread, logger, message = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        return ts, level_of(level), logger, message, None, None


@register
class Zookeeper(LogFormat):
    """``2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/…:2181:FastLeaderElection@774] - msg``.

    Component = the class before ``@line`` (``FastLeaderElection``), else the whole bracket.
    """

    id = "zookeeper"
    title = "Zookeeper (log4j with thread:Class@line)"
    _line = re.compile(rf"({_ISO}) - ({_LEVEL}) +\[(.*?)\] - (.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, level, where, message = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        component = where.rpartition("@")[0].rpartition(":")[2] if "@" in where else where
        return ts, level_of(level), component, message, None, None


@register
class SpringBoot(LogFormat):
    """``2024-01-02 03:04:05.123  INFO 4242 --- [  main] o.s.b.App  : msg`` (2.x, and 3.x's ``[app] [thread]``)."""

    id = "spring"
    title = "Spring Boot"
    _line = re.compile(rf"({_ISO}) +({_LEVEL}) +\d+ --- (?:\[[^\]]*\] )?\[ *[^\]]*\] ([^\s:]+) *: ?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, level, logger, message = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        return ts, level_of(level), logger, message, None, None


@register
class OpenStack(LogFormat):
    """oslo.log: ``[file ]2017-05-16 00:00:00.008 25746 INFO nova.osapi… [req-…] msg`` (loghub keeps the file)."""

    id = "openstack"
    title = "OpenStack (oslo.log)"
    _line = re.compile(rf"(?:\S+ )?({_ISO}) \d+ ({_LEVEL}) (\S+) (?:\[[^\]]*\] )?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, level, logger, message = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        return ts, level_of(level), logger, message, None, None


@register
class Hadoop(LogFormat):
    """Hadoop / Spark: ``17/06/09 20:10:40 INFO executor.Executor: msg`` (yy/mm/dd)."""

    id = "hadoop"
    title = "Hadoop / Spark"
    _line = re.compile(rf"(\d\d)/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{{3}}))? +({_LEVEL}) +([^\s:]+): ?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        yy, mo, dd, hh, mi, ss, ms, level, logger, message = match.groups()
        try:
            naive = datetime(2000 + int(yy), int(mo), int(dd), int(hh), int(mi), int(ss), int(ms) * 1000 if ms else 0)
        except ValueError:
            return None
        return self.aware(naive), level_of(level), logger, message, None, None


@register
class Hdfs(LogFormat):
    """HDFS: ``081109 203615 148 INFO dfs.DataNode$PacketResponder: msg`` (yymmdd hhmmss pid)."""

    id = "hdfs"
    title = "HDFS"
    _line = re.compile(rf"(\d\d)(\d\d)(\d\d) (\d\d)(\d\d)(\d\d) \d+ ({_LEVEL}) ([^\s:]+): ?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        yy, mo, dd, hh, mi, ss, level, logger, message = match.groups()
        try:
            naive = datetime(2000 + int(yy), int(mo), int(dd), int(hh), int(mi), int(ss))
        except ValueError:
            return None
        return self.aware(naive), level_of(level), logger, message, None, None


# ``[thread] logger - `` after the component in the demo shape: a header, not the message.
_HEADER = re.compile(r"\[[^\]]*\] [^\s\[\]]+ - |[-:] ")


@register
class LevelComponent(LogFormat):
    """``2026-07-07T10:01:02.123Z ERROR payment-service [thread] c.s.X - msg``: veridiag's demo shape.

    The word after the level is the component (in the demo it names the service, but a word of a
    plain-text line is never taken as the service).
    """

    id = "level_component"
    title = "ISO time, level, component"
    _line = re.compile(rf"({_ISO}) +({_LEVEL}) +([^\s\[\]:-][^\s:]*):? ?(.*)")

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        stamp, level, component, message = match.groups()
        try:
            ts = self.iso(stamp)
        except ValueError:
            return None
        header = _HEADER.match(message)
        if header is not None:
            message = message[header.end() :]
        return ts, level_of(level), component, message, None, None
