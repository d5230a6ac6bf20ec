"""Java and service logs: log4j/logback, Zookeeper, Spring Boot, Hadoop/Spark, HDFS, OpenStack (oslo.log)
and veridiag's own ``ISO LEVEL component …`` shape.

Each is a fixed layout with the level in a fixed position, so one compiled regex a shape reads the
level from that position only (``INFO user ERROR_TOLERANT=1`` is INFO). ISO times go through
``datetime.fromisoformat`` (3.11 reads ``,123``, ``Z`` and offsets), ~0.3 µs a line.
"""

from __future__ import annotations

import re
from datetime import datetime

from veridiag.ingest.logformats._base import LEVEL_WORD_RE, LogFormat, Parsed, level_of, register

_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
_LEVEL = rf"(?i:{LEVEL_WORD_RE})"


class _IsoLevel(LogFormat):
    """An ISO time, a level and a component in fixed places: ``_line`` names them ``ts``, ``level``,
    ``component`` and ``message``; a shape only adds how it reads its component or message."""

    _line: re.Pattern[str]

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        try:
            ts = self.iso(match["ts"])
        except ValueError:
            return None
        return (
            ts,
            level_of(match["level"]),
            self.component(match["component"]),
            self.message(match["message"]),
            None,
            None,
        )

    def component(self, raw: str) -> str:
        return raw

    def message(self, raw: str) -> str:
        return raw


@register
class Log4j(_IsoLevel):
    """``2015-07-29 17:41:44,747 INFO [main] c.s.X - msg`` (``%d %p [%t] %c - %m``): component = logger."""

    id = "log4j"
    title = "log4j / logback"
    _line = re.compile(
        rf"(?P<ts>{_ISO}) +(?P<level>{_LEVEL}) +\[[^\]]*\] (?P<component>[^\s:]+)(?: -|:)? ?(?P<message>.*)"
    )


@register
class Zookeeper(_IsoLevel):
    """``2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/…:2181:FastLeaderElection@774] - msg``.

    Component = the class before ``@line`` (``FastLeaderElection``), else the whole bracket.
    """

    id = "zookeeper"
    title = "Zookeeper (log4j with thread:Class@line)"
    _line = re.compile(rf"(?P<ts>{_ISO}) - (?P<level>{_LEVEL}) +\[(?P<component>.*?)\] - (?P<message>.*)")

    def component(self, raw: str) -> str:
        return raw.rpartition("@")[0].rpartition(":")[2] if "@" in raw else raw


@register
class SpringBoot(_IsoLevel):
    """``2024-01-02 03:04:05.123  INFO 4242 --- [  main] o.s.b.App  : msg`` (2.x, and 3.x's ``[app] [thread]``)."""

    id = "spring"
    title = "Spring Boot"
    _line = re.compile(
        rf"(?P<ts>{_ISO}) +(?P<level>{_LEVEL}) +\d+ --- (?:\[[^\]]*\] )?\[ *[^\]]*\] (?P<component>[^\s:]+) *: ?"
        r"(?P<message>.*)"
    )


@register
class OpenStack(_IsoLevel):
    """oslo.log: ``[file ]2017-05-16 00:00:00.008 25746 INFO nova.osapi… [req-…] msg`` (loghub keeps the file)."""

    id = "openstack"
    title = "OpenStack (oslo.log)"
    _line = re.compile(
        rf"(?:\S+ )?(?P<ts>{_ISO}) \d+ (?P<level>{_LEVEL}) (?P<component>\S+) (?:\[[^\]]*\] )?(?P<message>.*)"
    )


class _TwoDigitYear(LogFormat):
    """A date with a two-digit year in fixed places, then a level and a component: ``_line`` names
    ``yy mo dd hh mi ss`` (``ms`` optional), ``level``, ``component`` and ``message``."""

    _line: re.Pattern[str]

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        millis = match.groupdict().get("ms")
        try:
            naive = datetime(
                2000 + int(match["yy"]),
                int(match["mo"]),
                int(match["dd"]),
                int(match["hh"]),
                int(match["mi"]),
                int(match["ss"]),
                int(millis) * 1000 if millis else 0,
            )
        except ValueError:
            return None
        return self.aware(naive), level_of(match["level"]), match["component"], match["message"], None, None


@register
class Hadoop(_TwoDigitYear):
    """Hadoop / Spark: ``17/06/09 20:10:40 INFO executor.Executor: msg`` (yy/mm/dd)."""

    id = "hadoop"
    title = "Hadoop / Spark"
    _line = re.compile(
        r"(?P<yy>\d\d)/(?P<mo>\d\d)/(?P<dd>\d\d) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d)(?:[.,](?P<ms>\d{3}))? +"
        rf"(?P<level>{_LEVEL}) +(?P<component>[^\s:]+): ?(?P<message>.*)"
    )


@register
class Hdfs(_TwoDigitYear):
    """HDFS: ``081109 203615 148 INFO dfs.DataNode$PacketResponder: msg`` (yymmdd hhmmss pid)."""

    id = "hdfs"
    title = "HDFS"
    _line = re.compile(
        r"(?P<yy>\d\d)(?P<mo>\d\d)(?P<dd>\d\d) (?P<hh>\d\d)(?P<mi>\d\d)(?P<ss>\d\d) \d+ "
        rf"(?P<level>{_LEVEL}) (?P<component>[^\s:]+): ?(?P<message>.*)"
    )


# ``[thread] logger - `` after the component in the demo shape: a header, not the message.
_HEADER = re.compile(r"\[[^\]]*\] [^\s\[\]]+ - |[-:] ")


@register
class LevelComponent(_IsoLevel):
    """``2026-07-07T10:01:02.123Z ERROR payment-service [thread] c.s.X - msg``: veridiag's demo shape.

    The word after the level is the component (in the demo it names the service, but a word of a
    plain-text line is never taken as the service).
    """

    id = "level_component"
    title = "ISO time, level, component"
    _line = re.compile(rf"(?P<ts>{_ISO}) +(?P<level>{_LEVEL}) +(?P<component>[^\s\[\]:-][^\s:]*):? ?(?P<message>.*)")

    def message(self, raw: str) -> str:
        header = _HEADER.match(raw)
        return raw[header.end() :] if header is not None else raw


@register
class TimeOfDay(LogFormat):
    """``18:03:57.913 INFO  c.t.c.PaymentController#34 msg`` and logback's default pattern
    ``18:03:57.913 [main] INFO  c.t.X - msg``: a time of day without a date, as an application
    writes inside a container whose runtime stamps each line (Docker, CRI). The time is the
    container record's; alone, such a line cannot be placed in time and is not imported.
    Component = the logger without its ``#line``."""

    id = "logback_time"
    title = "logback, time of day only (inside container records)"
    _line = re.compile(
        rf"\d\d:\d\d:\d\d(?:[.,]\d{{1,6}})? +(?:\[[^\]]*\] +)?(?P<level>{_LEVEL}) +"
        r"(?P<component>[^\s#]+?)(?:#\d+|:\d+)?(?: +-|:)? +(?P<message>.*)"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        return None, level_of(match["level"]), match["component"], match["message"], None, None
